// Factories: tensors made from sizes, values, ranges or caller-owned memory.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "allocator.h"
#include "device.h"
#include "funcgen/runtime/cuda.h"
#include "internal.h"

namespace fg {
using namespace detail;

namespace {

void check_device(const TensorOptions& options, const char* op) {
  if (!options.device().is_cpu())
    fail(op, "cannot wrap memory of ", options.device(), ": from_blob takes cpu memory only so far");
}

// The CPU block, or null when memory is exhausted (the allocator's own bookkeeping may throw).
std::shared_ptr<void> try_allocate(size_t nbytes) {
  try {
    return allocate_cpu(nbytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

}  // namespace

namespace detail {

Tensor empty(IntArrayRef size, TensorOptions options, const char* op) {
  const size_t nbytes = checked_nbytes(size, options.dtype(), op);  // on every device
  if (!options.device().is_cpu()) {
    if (!cuda::is_available())
      fail(op, "cannot create a tensor on ", options.device(), ": ", cuda::unavailable_reason());
    return device_empty(size, options, op);
  }
  std::shared_ptr<void> block = try_allocate(nbytes);
  if (!block) fail(op, "out of memory allocating ", nbytes, " bytes for shape ", size);
  auto storage = std::make_shared<Storage>();
  storage->data = block.get();
  storage->owner = std::move(block);
  storage->nbytes = nbytes;
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->sizes = size.vec();
  impl->strides = contiguous_strides(size);
  impl->dtype = options.dtype();
  return Tensor(std::move(impl));
}

Tensor zeros(IntArrayRef size, TensorOptions options, const char* op) {
  Tensor t = empty(size, options, op);
  if (!t.is_cpu()) return t.zero_();
  std::memset(t.data_ptr(), 0, static_cast<size_t>(t.numel()) * t.element_size());
  return t;
}

Tensor full(IntArrayRef size, const Scalar& value, TensorOptions options, const char* op) {
  // torch.full infers the dtype from the value when none is given.
  if (!options.has_dtype()) {
    if (value.isBoolean()) options = options.dtype(kBool);
    else if (value.isIntegral(false)) options = options.dtype(kLong);
  }
  Tensor t = empty(size, options, op);
  t.fill_(value);
  return t;
}

}  // namespace detail

Tensor empty(IntArrayRef size, TensorOptions options) { return detail::empty(size, options, "empty"); }
Tensor zeros(IntArrayRef size, TensorOptions options) { return detail::zeros(size, options, "zeros"); }

Tensor ones(IntArrayRef size, TensorOptions options) {
  // Unlike full, ones keeps the default float dtype rather than inferring int64 from the 1.
  return detail::full(size, 1, options.has_dtype() ? options : options.dtype(kFloat), "ones");
}

Tensor full(IntArrayRef size, const Scalar& value, TensorOptions options) {
  return detail::full(size, value, options, "full");
}

namespace {
TensorOptions like_options(const Tensor& self, const std::optional<TensorOptions>& options) {
  check_defined(self, "empty_like");
  if (!options) return self.options();
  TensorOptions o = *options;
  if (!o.has_dtype()) o = o.dtype(self.dtype());
  return o;
}
}  // namespace

Tensor empty_like(const Tensor& self, std::optional<TensorOptions> options) {
  return empty(self.sizes(), like_options(self, options), "empty_like");
}
Tensor zeros_like(const Tensor& self, std::optional<TensorOptions> options) {
  return zeros(self.sizes(), like_options(self, options), "zeros_like");
}
Tensor ones_like(const Tensor& self, std::optional<TensorOptions> options) {
  return full(self.sizes(), 1, like_options(self, options), "ones_like");
}
Tensor full_like(const Tensor& self, const Scalar& value, std::optional<TensorOptions> options) {
  return full(self.sizes(), value, like_options(self, options), "full_like");
}

Tensor arange(const Scalar& end, TensorOptions options) { return arange(0, end, 1, options); }
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options) {
  return arange(start, end, 1, options);
}
namespace {
// arange's element count, after torch's checks of the range; exact for integer arguments.
int64_t arange_length(const Scalar& start, const Scalar& end, const Scalar& step) {
  const double s = start.toDouble(), e = end.toDouble(), st = step.toDouble();
  if (!std::isfinite(s) || !std::isfinite(e)) fail("arange", "unsupported range: ", start, " -> ", end);
  if (!std::isfinite(st)) fail("arange", "unsupported step: ", step);
  if (st == 0) fail("arange", "step must be nonzero");
  if ((st > 0 && e < s) || (st < 0 && e > s))
    fail("arange", "upper bound and larger bound inconsistent with step sign (start ", start,
         ", end ", end, ", step ", step, ")");
  constexpr double kLimit = 9223372036854775808.0;  // 2^63: the first count int64 cannot hold
  if (!start.isFloatingPoint() && !end.isFloatingPoint() && !step.isFloatingPoint()) {
    // In 128 bits: end - start may not fit in int64. The span and step have one sign (or span is 0).
    const __int128 span = static_cast<__int128>(end.toLong()) - start.toLong(), by = step.toLong();
    const __int128 n = span / by + (span % by != 0 ? 1 : 0);
    if (n < static_cast<__int128>(kLimit)) return static_cast<int64_t>(n);
  } else {
    const double n = std::ceil((e - s) / st);
    if (n < kLimit) return static_cast<int64_t>(n);
  }
  fail("arange", "the range ", start, " -> ", end, " with step ", step, " has more elements than int64 can count");
}
}  // namespace

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options) {
  const int64_t n = arange_length(start, end, step);
  const double s = start.toDouble(), st = step.toDouble();
  if (!options.has_dtype()) {
    const bool integral = !start.isFloatingPoint() && !end.isFloatingPoint() && !step.isFloatingPoint();
    options = options.dtype(integral ? kLong : kFloat);
  }
  // Other devices get the values computed here.
  if (!options.device().is_cpu()) return arange(start, end, step, options.device(kCPU)).to(options.device());
  Tensor t = empty({n}, options, "arange");
  dispatch_all(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(t.data_ptr());
    if constexpr (std::is_same_v<T, int64_t>) {
      const int64_t is = start.toLong(), ist = step.toLong();
      for (int64_t i = 0; i < n; ++i) p[i] = is + i * ist;
    } else {
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(s + static_cast<double>(i) * st);
    }
  });
  return t;
}

Tensor eye(int64_t n, TensorOptions options) { return eye(n, n, options); }
Tensor eye(int64_t n, int64_t m, TensorOptions options) {
  if (n < 0 || m < 0) fail("eye", "n and m must be non-negative, got ", n, " and ", m);
  Tensor t = zeros({n, m}, options, "eye");
  t.diagonal().fill_(1);
  return t;
}

Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options) {
  checked_numel(sizes, "from_blob");  // (before the strides are computed)
  return from_blob(data, sizes, contiguous_strides(sizes), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) {
  const int64_t numel = checked_numel(sizes, "from_blob");
  check_device(options, "from_blob");
  if (sizes.size() != strides.size())
    fail("from_blob", "sizes ", sizes, " and strides ", strides, " differ in length");
  if (data == nullptr && numel != 0) fail("from_blob", "data is null for shape ", sizes);
  int64_t extent = 0;  // the last element's index
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (strides[i] < 0) fail("from_blob", "negative strides are not supported, got ", strides);
    if (sizes[i] > 0) extent = checked_add(extent, checked_mul(sizes[i] - 1, strides[i], "from_blob"), "from_blob");
  }
  const int64_t nbytes = checked_mul(checked_add(extent, 1, "from_blob"),
                                     static_cast<int64_t>(elementSize(options.dtype())), "from_blob");
  auto storage = std::make_shared<Storage>();
  storage->data = data;  // borrowed: no owner
  storage->nbytes = static_cast<size_t>(nbytes);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->sizes = sizes.vec();
  impl->strides = strides.vec();
  impl->dtype = options.dtype();
  return Tensor(std::move(impl));
}

namespace {

template <typename T>
Tensor tensor_from(const T* values, std::vector<int64_t> sizes, ScalarType natural,
                   TensorOptions options) {
  if (!options.has_dtype()) options = options.dtype(natural);
  Tensor src = from_blob(const_cast<T*>(values), sizes, TensorOptions(CppTypeToScalarType<T>::value));
  Tensor out = empty(sizes, options);
  copy_strided(out, src);
  return out;
}

template <typename Stored>
Tensor tensor_from_rows(const std::vector<Stored>& flat, const std::vector<size_t>& lengths, ScalarType natural,
                        TensorOptions options) {
  const size_t cols = lengths.empty() ? 0 : lengths.front();
  for (size_t n : lengths)
    if (n != cols) fail("tensor", "rows have different lengths (", cols, " and ", n, ")");
  return tensor_from(flat.data(), {static_cast<int64_t>(lengths.size()), static_cast<int64_t>(cols)}, natural, options);
}

}  // namespace

Tensor tensor(std::initializer_list<double> v, TensorOptions o) {
  return tensor_from(v.begin(), {static_cast<int64_t>(v.size())}, kFloat, o);
}
Tensor tensor(std::initializer_list<float> v, TensorOptions o) {
  return tensor_from(v.begin(), {static_cast<int64_t>(v.size())}, kFloat, o);
}
Tensor tensor(std::initializer_list<int> v, TensorOptions o) {
  std::vector<int64_t> w(v.begin(), v.end());
  return tensor_from(w.data(), {static_cast<int64_t>(w.size())}, kLong, o);
}
Tensor tensor(std::initializer_list<int64_t> v, TensorOptions o) {
  return tensor_from(v.begin(), {static_cast<int64_t>(v.size())}, kLong, o);
}
Tensor tensor(std::initializer_list<bool> v, TensorOptions o) {
  std::vector<char> w(v.begin(), v.end());
  return tensor_from(reinterpret_cast<const bool*>(w.data()), {static_cast<int64_t>(w.size())}, kBool, o);
}
namespace detail {
Tensor tensor_rows(const std::vector<double>& flat, const std::vector<size_t>& lengths, TensorOptions o) {
  return tensor_from_rows(flat, lengths, kFloat, o);
}
Tensor tensor_rows(const std::vector<int64_t>& flat, const std::vector<size_t>& lengths, TensorOptions o) {
  return tensor_from_rows(flat, lengths, kLong, o);
}
}  // namespace detail
Tensor tensor(const std::vector<double>& v, TensorOptions o) {
  return tensor_from(v.data(), {static_cast<int64_t>(v.size())}, kFloat, o);
}
Tensor tensor(const std::vector<float>& v, TensorOptions o) {
  return tensor_from(v.data(), {static_cast<int64_t>(v.size())}, kFloat, o);
}
Tensor tensor(const std::vector<int64_t>& v, TensorOptions o) {
  return tensor_from(v.data(), {static_cast<int64_t>(v.size())}, kLong, o);
}
Tensor tensor(const std::vector<int>& v, TensorOptions o) {
  std::vector<int64_t> w(v.begin(), v.end());
  return tensor_from(w.data(), {static_cast<int64_t>(w.size())}, kLong, o);
}
Tensor tensor(const std::vector<bool>& v, TensorOptions o) {
  std::vector<char> w(v.begin(), v.end());
  return tensor_from(reinterpret_cast<const bool*>(w.data()), {static_cast<int64_t>(w.size())}, kBool, o);
}

Tensor scalar_tensor(const Scalar& value, TensorOptions options) {
  if (!options.has_dtype())
    options = options.dtype(kFloat);  // torch.scalar_tensor is float32 whatever the value
  return full({}, value, options);
}

}  // namespace fg
