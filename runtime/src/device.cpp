// The Tensor-level side of device dispatch: geometry to OffsetCalc, copies across the host/device
// boundary, and the reshaping that puts reductions, softmax and products into the forms the
// kernels take. Everything here is host code; the kernels run wherever the backend puts them.
#include "device.h"

#include "funcgen/runtime/cuda.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <optional>

#include "cuda/gemm_plan.h"
#include "internal.h"
#include "strided_loop.h"

namespace fg::detail {

std::atomic<const DeviceBackend*> testing_backend{nullptr};

namespace {

template <size_t N>
kernels::OffsetCalc<static_cast<int>(N)> offset_calc(IntArrayRef shape,
                                                     const std::array<const int64_t*, N>& byte_strides,
                                                     const char* op) {
  const LoopPlan<N> plan = plan_loop<N>(shape, byte_strides);
  if (plan.sizes.size() > static_cast<size_t>(kernels::kMaxKernelDims))
    fail(op, "tensors of shape ", shape, " have more than ", kernels::kMaxKernelDims,
         " dims after merging contiguous ones, which the device kernels do not support");
  kernels::OffsetCalc<static_cast<int>(N)> calc;
  calc.dims = static_cast<int>(plan.sizes.size());
  for (size_t d = 0; d < plan.sizes.size(); ++d) {
    calc.sizes[d] = plan.sizes[d];
    for (size_t k = 0; k < N; ++k) calc.strides[d][k] = plan.strides[d][k];
  }
  return calc;
}

std::vector<int64_t> byte_strides(const Tensor& t, IntArrayRef shape) {
  return broadcast_byte_strides(t.sizes(), t.strides(), t.element_size(), shape);
}

const DeviceBackend& backend_of(const Tensor& t, const char* op) { return device_backend(t.device(), op); }

size_t nbytes(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

}  // namespace

const DeviceBackend* active_cuda_backend() {
  const DeviceBackend* be = testing_backend.load();
  return be != nullptr ? be : builtin_cuda_backend();
}

const DeviceBackend& device_backend(Device device, const char* op) {
  const std::string why = fg::cuda::unavailable_reason();
  if (!why.empty()) fail(op, "cannot use ", device, ": ", why);
  const DeviceBackend& be = *active_cuda_backend();
  if (device.index() > 0)
    fail(op, "cannot use ", device, ": the runtime runs on cuda:0 only so far (", be.device_count(),
         " CUDA devices present)");
  return be;
}

void set_cuda_backend_for_testing(const DeviceBackend* backend) { testing_backend.store(backend); }

namespace {
Device common_device_of(const Tensor* const* first, size_t count, const char* op) {
  const Tensor* const* last = first + count;
  std::optional<Device> device;
  for (const Tensor* const* it = first; it != last; ++it) {
    const Tensor* t = *it;
    if (!t->defined() || (t->is_cpu() && t->dim() == 0)) continue;
    if (!device)
      device = t->device();
    else if (t->device() != *device)
      fail(op, "expected all tensors to be on the same device, but found tensors on ", *device, " and ", t->device());
  }
  if (device) return *device;
  for (const Tensor* const* it = first; it != last; ++it)  // only 0-d tensors: the first one's device
    if ((*it)->defined()) return (*it)->device();
  return Device(kCPU);
}
}  // namespace

Device common_device(std::initializer_list<const Tensor*> operands, const char* op) {
  return common_device_of(operands.begin(), operands.size(), op);
}
Device common_device(const std::vector<const Tensor*>& operands, const char* op) {
  return common_device_of(operands.data(), operands.size(), op);
}

Tensor device_empty(IntArrayRef size, TensorOptions options, const char* op) {
  const Device device(options.device().type(), options.device().index() < 0 ? 0 : options.device().index());
  const DeviceBackend& be = device_backend(device, op);
  const size_t bytes = checked_nbytes(size, options.dtype(), op);
  std::shared_ptr<void> block = be.allocate(bytes, device.index());
  if (!block) fail(op, "out of memory on ", device, " allocating ", bytes, " bytes for shape ", size);
  auto storage = std::make_shared<Storage>();
  storage->data = block.get();
  storage->owner = std::move(block);
  storage->nbytes = bytes;
  storage->device = device;
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->sizes = size.vec();
  impl->strides = contiguous_strides(size);
  impl->dtype = options.dtype();
  return Tensor(std::move(impl));
}

namespace {

// Host <-> device: the bytes cross as one dense block; broadcasting, dtype conversion and strides
// are dealt with on the side where they are cheap (the source's device before, the destination's after).
void copy_across(const Tensor& dst, const Tensor& src) {
  const bool to_device = src.is_cpu();
  const Tensor& device_side = to_device ? dst : src;
  const DeviceBackend& be = backend_of(device_side, "copy_");
  // The source as a dense block of dst's shape and dtype, on its own device.
  Tensor block = src;
  if (!(src.sizes() == dst.sizes() && src.dtype() == dst.dtype() && src.is_contiguous())) {
    block = src.is_cpu() ? empty(dst.sizes(), TensorOptions(dst.dtype()))
                         : device_empty(dst.sizes(), src.options().dtype(dst.dtype()), "copy_");
    copy_strided(block, src);
  }
  const bool direct = dst.is_contiguous();
  const Tensor landing = direct         ? dst
                         : dst.is_cpu() ? empty(dst.sizes(), TensorOptions(dst.dtype()))
                                        : device_empty(dst.sizes(), dst.options(), "copy_");
  be.memcpy(landing.data_ptr(), block.data_ptr(), nbytes(dst),
            to_device ? CopyKind::HostToDevice : CopyKind::DeviceToHost);
  if (!direct) copy_strided(dst, landing);
}

}  // namespace

void device_copy(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.is_cpu() != src.is_cpu()) return copy_across(dst, src);
  if (dst.device() != src.device())
    fail("copy_", "copies between ", src.device(), " and ", dst.device(), " are not supported yet; go through .cpu()");
  const DeviceBackend& be = backend_of(dst, "copy_");
  const auto sd = byte_strides(dst, dst.sizes()), ss = byte_strides(src, dst.sizes());
  be.cast(dst.dtype(), src.dtype(), dst.numel(), offset_calc<2>(dst.sizes(), {sd.data(), ss.data()}, "copy_"),
          byte_ptr(dst), byte_ptr(src));
}

namespace {
template <typename T>
ScalarBytes bytes_of(T x) {
  ScalarBytes v{};
  std::memcpy(v.bytes, &x, sizeof(x));
  return v;
}
}  // namespace

void device_fill(const Tensor& dst, const Scalar& value) {
  if (dst.numel() == 0) return;
  const DeviceBackend& be = backend_of(dst, "fill_");
  const auto sd = byte_strides(dst, dst.sizes());
  const ScalarBytes v = dispatch_all(dst.dtype(), [&](auto tag) { return bytes_of(scalar_as<decltype(tag)>(value)); });
  be.fill(dst.dtype(), dst.numel(), offset_calc<1>(dst.sizes(), {sd.data()}, "fill_"), byte_ptr(dst), v);
}

void device_unary(kernels::UnaryKind kind, const Tensor& out, const Tensor& in) {
  if (out.numel() == 0) return;
  const DeviceBackend& be = backend_of(out, "unary");
  const auto so = byte_strides(out, out.sizes()), si = byte_strides(in, out.sizes());
  be.unary(out.dtype(), kind, out.numel(), offset_calc<2>(out.sizes(), {so.data(), si.data()}, "unary"), byte_ptr(out),
           byte_ptr(in));
}

void device_binary(kernels::BinaryKind kind, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (out.numel() == 0) return;
  const DeviceBackend& be = backend_of(out, "binary");
  const auto so = byte_strides(out, out.sizes()), sa = byte_strides(a, out.sizes()), sb = byte_strides(b, out.sizes());
  be.binary(out.dtype(), kind, out.numel(), offset_calc<3>(out.sizes(), {so.data(), sa.data(), sb.data()}, "binary"),
            byte_ptr(out), byte_ptr(a), byte_ptr(b));
}

void device_compare(kernels::CompareKind kind, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (out.numel() == 0) return;
  const DeviceBackend& be = backend_of(out, "compare");
  const auto so = byte_strides(out, out.sizes()), sa = byte_strides(a, out.sizes()), sb = byte_strides(b, out.sizes());
  be.compare(a.dtype(), kind, out.numel(), offset_calc<3>(out.sizes(), {so.data(), sa.data(), sb.data()}, "compare"),
             byte_ptr(out), byte_ptr(a), byte_ptr(b));
}

void device_where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (out.numel() == 0) return;
  const DeviceBackend& be = backend_of(out, "where");
  const auto so = byte_strides(out, out.sizes()), sc = byte_strides(cond, out.sizes());
  const auto sa = byte_strides(a, out.sizes()), sb = byte_strides(b, out.sizes());
  be.where(out.dtype(), out.numel(), offset_calc<4>(out.sizes(), {so.data(), sc.data(), sa.data(), sb.data()}, "where"),
           byte_ptr(out), byte_ptr(cond), byte_ptr(a), byte_ptr(b));
}

void device_clamp(const Tensor& out, const Tensor& in, const std::optional<Scalar>& lo,
                  const std::optional<Scalar>& hi) {
  if (out.numel() == 0) return;
  const DeviceBackend& be = backend_of(out, "clamp");
  // A missing bound is the dtype's extreme (infinity for floating types), as the CPU clamp.
  const auto [low, high] = dispatch_all(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    constexpr bool kFloating = std::is_floating_point_v<T>;
    const T l = lo          ? scalar_as<T>(*lo)
                : kFloating ? -std::numeric_limits<T>::infinity()
                            : std::numeric_limits<T>::lowest();
    const T h = hi ? scalar_as<T>(*hi) : kFloating ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    return std::pair<ScalarBytes, ScalarBytes>(bytes_of(l), bytes_of(h));
  });
  const auto so = byte_strides(out, out.sizes()), si = byte_strides(in, out.sizes());
  be.clamp(out.dtype(), out.numel(), offset_calc<2>(out.sizes(), {so.data(), si.data()}, "clamp"), byte_ptr(out),
           byte_ptr(in), low, high);
}

std::pair<int64_t, int64_t> device_index_range(const Tensor& index) {
  return {fg::amin(index).item<int64_t>(), fg::amax(index).item<int64_t>()};
}

std::optional<int64_t> device_first_out_of_range(const Tensor& index, int64_t size, const Tensor& considered) {
  if (index.numel() == 0) return std::nullopt;
  Tensor bad = logical_or(index.lt(0), index.ge(size));
  if (considered.defined()) bad = logical_and(bad, considered);
  const Tensor flat = bad.reshape({-1}).to(kLong);
  if (fg::amax(flat).item<int64_t>() == 0) return std::nullopt;  // the one wait of a good index
  return index.reshape({-1}).select(0, fg::argmax(flat).item<int64_t>()).item<int64_t>();  // first in row-major order
}

void device_check_index(const Tensor& index, int64_t size, int64_t d, const char* op) {
  if (const auto bad = device_first_out_of_range(index, size))
    fail(op, "index ", *bad, " is out of bounds for dimension ", d, " with size ", size);
}

namespace {
// self's byte strides over `shape` (no larger than self's in any dim), 0 along dim d.
std::vector<int64_t> strides_without_dim(const Tensor& t, IntArrayRef shape, int64_t d) {
  std::vector<int64_t> s(shape.size());
  for (size_t k = 0; k < shape.size(); ++k)
    s[k] =
        static_cast<int64_t>(k) == d ? 0 : t.stride(static_cast<int64_t>(k)) * static_cast<int64_t>(t.element_size());
  return s;
}
int64_t dim_stride_bytes(const Tensor& t, int64_t d) {
  return t.dim() == 0 ? 0 : t.stride(d) * static_cast<int64_t>(t.element_size());
}
}  // namespace

void device_gather(const Tensor& out, const Tensor& self, int64_t d, const Tensor& index, const char* op) {
  if (out.numel() == 0) return;
  const IntArrayRef shape = index.sizes();
  const auto so = byte_strides(out, shape), si = byte_strides(index, shape);
  const auto ss = strides_without_dim(self, shape, d);
  backend_of(out, op).gather(out.dtype(), out.numel(), offset_calc<3>(shape, {so.data(), ss.data(), si.data()}, op),
                             byte_ptr(out), byte_ptr(self), byte_ptr(index), dim_stride_bytes(self, d));
}

void device_scatter_add(const Tensor& self, int64_t d, const Tensor& index, const Tensor& src, const char* op) {
  if (index.numel() == 0) return;
  if (self.dtype() == kBool) fail(op, "bool tensors do not run on CUDA yet; convert to int64 and back");
  const IntArrayRef shape = index.sizes();
  const auto ss = strides_without_dim(self, shape, d), si = byte_strides(index, shape);
  const auto sr = strides_without_dim(src, shape, -1);
  backend_of(self, op).scatter_add(self.dtype(), index.numel(),
                                   offset_calc<3>(shape, {ss.data(), si.data(), sr.data()}, op), byte_ptr(self),
                                   byte_ptr(index), byte_ptr(src), dim_stride_bytes(self, d));
}

Tensor device_reduce(kernels::ReduceKind kind, const Tensor& self, IntArrayRef dims, const char* op) {
  // Kept dims first, reduced dims last, dense: then every output element is one row.
  std::vector<int64_t> perm, kept_sizes;
  int64_t rows = 1, n = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d)) {
      perm.push_back(d);
      kept_sizes.push_back(self.size(d));
      rows *= self.size(d);
    }
  for (int64_t d : dims) {
    perm.push_back(d);
    n *= self.size(d);
  }
  Tensor out = device_empty(kept_sizes, self.options(), op);
  if (rows == 0) return out;
  Tensor rowwise = self.dim() == 0 ? self : self.permute(perm);
  if (!rowwise.is_contiguous()) {
    Tensor dense = device_empty(rowwise.sizes(), self.options(), op);
    device_copy(dense, rowwise);
    rowwise = dense;
  }
  backend_of(self, op).reduce_rows(self.dtype(), kind, rows, n, rowwise.data_ptr(), out.data_ptr());
  return out;
}

Tensor device_softmax(const Tensor& self, int64_t dim, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  Tensor rowwise = self.dim() == 0 ? self.reshape({1}) : self.movedim(dim, -1);
  if (!rowwise.is_contiguous()) {
    Tensor dense = device_empty(rowwise.sizes(), self.options(), op);
    device_copy(dense, rowwise);
    rowwise = dense;
  }
  Tensor out = device_empty(rowwise.sizes(), self.options(), op);
  const int64_t n = rowwise.dim() == 0 ? 1 : rowwise.size(-1);
  if (out.numel() > 0)
    backend_of(self, op).softmax_rows(self.dtype(), log, out.numel() / n, n, rowwise.data_ptr(), out.data_ptr());
  if (self.dim() == 0) return out.reshape({});
  return dim == self.dim() - 1 ? out : out.movedim(-1, dim).contiguous();  // contiguous, as on the CPU
}

void device_bmm(const Tensor& a, const Tensor& b, const Tensor& c, const char* op) {
  if (a.dtype() != kFloat && a.dtype() != kDouble)
    fail(op, a.dtype(), " products do not run on CUDA yet (cuBLAS has no integer GEMM); convert to float64");
  if (c.numel() == 0) return;
  // A batch of one is broadcast (a batch of 0 against one of 1 is 0).
  const int64_t batch = a.size(0) == 1 ? b.size(0) : a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  // A batch of one is broadcast: batch stride 0.
  auto strides = [&](const Tensor& t) {
    return cuda::detail::OperandStrides{t.size(0) == 1 ? 0 : t.stride(0), t.stride(1), t.stride(2)};
  };
  const cuda::detail::GemmPlan plan = cuda::detail::plan_gemm(batch, m, n, k, strides(a), strides(b));
  if (!plan.call) {
    if (c.numel() > 0) device_fill(c, 0);  // k == 0: an empty sum
    return;
  }
  // Operands cuBLAS cannot read as they are go dense first, as the plan expects.
  const Tensor x = plan.copy_a ? a.contiguous() : a, y = plan.copy_b ? b.contiguous() : b;
  backend_of(c, op).gemm(c.dtype(), plan, plan.swap ? y.data_ptr() : x.data_ptr(),
                         plan.swap ? x.data_ptr() : y.data_ptr(), c.data_ptr());
}

Tensor device_random(kernels::Dist dist, IntArrayRef size, TensorOptions options, Generator& gen) {
  const char* op = dist == kernels::Dist::Uniform ? "rand" : "randn";
  Tensor out = device_empty(size, options, op);  // first: a failure leaves the generator as it was
  uint64_t seed, base;
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    seed = gen.seed();
    base = gen.reserve_blocks(static_cast<uint64_t>((out.numel() + 1) / 2));
  }
  if (out.numel() > 0) backend_of(out, op).random(out.dtype(), dist, out.numel(), out.data_ptr(), seed, base);
  return out;
}

}  // namespace fg::detail

namespace fg::cuda {

std::string unavailable_reason() {
  const fg::detail::DeviceBackend* be = fg::detail::active_cuda_backend();
  if (be == nullptr)
    return "this build of the runtime has no CUDA support (configure funcgen with -DFUNCGEN_CUDA=ON where the "
           "CUDA toolkit is installed)";
  return be->unavailable_reason();
}
bool is_available() { return unavailable_reason().empty(); }
int device_count() { return is_available() ? fg::detail::active_cuda_backend()->device_count() : 0; }
void synchronize() { fg::detail::device_backend(Device(kCUDA, 0), "cuda::synchronize").synchronize(); }
void empty_cache() {
  if (is_available()) fg::detail::active_cuda_backend()->empty_cache();
}

}  // namespace fg::cuda
