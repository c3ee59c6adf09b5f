// Tensor metadata, data access, copies and casts, and the helpers shared by the op files.
#include <algorithm>
#include <cstring>

#include "device.h"
#include "funcgen/runtime/cuda.h"
#include "internal.h"
#include "strided_loop.h"

namespace fg {
namespace detail {

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t n = ndim == 0 ? 1 : ndim;  // a 0-d tensor accepts dim 0 and -1, as in torch
  if (dim < -n || dim >= n)
    fail(op, "dimension ", dim, " is out of range for a tensor of ", ndim, " dimension",
         ndim == 1 ? "" : "s", " (expected to be in range [", -n, ", ", n - 1, "])");
  return dim < 0 ? dim + n : dim;
}

std::vector<int64_t> contiguous_strides(IntArrayRef sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

int64_t product(IntArrayRef sizes) {
  int64_t p = 1;
  for (int64_t s : sizes) p *= s;
  return p;
}

int64_t checked_mul(int64_t a, int64_t b, const char* op) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    fail(op, "size calculation overflowed: ", a, " * ", b, " does not fit in int64");
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const char* op) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    fail(op, "size calculation overflowed: ", a, " + ", b, " does not fit in int64");
  return r;
}

bool numel_overflows(IntArrayRef sizes) {
  int64_t extent = 1;
  bool overflowed = false;
  for (int64_t s : sizes) overflowed |= __builtin_mul_overflow(extent, s > 1 ? s : 1, &extent);
  return overflowed;
}

int64_t checked_numel(IntArrayRef sizes, const char* op) {
  for (int64_t s : sizes)
    if (s < 0) fail(op, "sizes must be non-negative, got ", sizes);
  if (numel_overflows(sizes)) fail(op, "storage size calculation overflowed with sizes=", sizes);
  return product(sizes);  // at most the product of the sizes counted as one when zero
}

size_t checked_nbytes(IntArrayRef sizes, ScalarType dtype, const char* op) {
  int64_t bytes;
  if (__builtin_mul_overflow(checked_numel(sizes, op), static_cast<int64_t>(elementSize(dtype)), &bytes))
    fail(op, "storage size calculation overflowed with sizes=", sizes);
  return static_cast<size_t>(bytes);
}

std::string shape_str(IntArrayRef sizes) {
  std::ostringstream os;
  os << sizes;
  return os.str();
}

void check_defined(const Tensor& t, const char* op, const char* arg) {
  if (!t.defined()) fail(op, "the ", arg, " tensor is undefined");
}

Tensor make_view(const Tensor& self, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                 int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = self.unsafeGetTensorImpl()->storage;
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = self.dtype();
  return Tensor(std::move(impl));
}

bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() &&
         a.unsafeGetTensorImpl()->storage->data == b.unsafeGetTensorImpl()->storage->data;
}

namespace {
// Whether t's elements cover one block of memory without gaps or repeats, in some order of its
// dims (torch's is_non_overlapping_and_dense).
bool non_overlapping_and_dense(const Tensor& t) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return t.stride(a) < t.stride(b); });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}
}  // namespace

Overlap overlap(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return Overlap::Full;
  if (a.numel() == 0 || b.numel() == 0 || !shares_storage(a, b)) return Overlap::None;
  if (!non_overlapping_and_dense(a) || !non_overlapping_and_dense(b)) return Overlap::TooHard;
  const char* a0 = byte_ptr(a);
  const char* b0 = byte_ptr(b);
  const char* a1 = a0 + a.numel() * static_cast<int64_t>(a.element_size());
  const char* b1 = b0 + b.numel() * static_cast<int64_t>(b.element_size());
  if (a0 == b0 && a1 == b1) return a.strides() == b.strides() ? Overlap::Full : Overlap::Partial;
  return a0 < b1 && b0 < a1 ? Overlap::Partial : Overlap::None;
}

void check_no_internal_overlap(const Tensor& self, const char* op) {
  for (int64_t i = 0; i < self.dim(); ++i)
    if (self.stride(i) == 0 && self.size(i) > 1)
      fail(op, "unsupported operation: more than one element of the written-to tensor (shape ", self.sizes(),
           ", strides ", self.strides(), ") refers to a single memory location; clone() it before writing to it");
}

Tensor& assign_out(Tensor& out, const Tensor& result, const char* op) {
  check_defined(out, op, "out");
  if (!can_cast(result.dtype(), out.dtype()))
    fail(op, "result type ", result.dtype(), " cannot be cast to the desired output type ", out.dtype());
  if (out.device() != result.device())
    fail(op, "expected the out tensor on ", result.device(), " (where the inputs are), got one on ", out.device());
  if (out.sizes() == result.sizes()) {
    out.copy_(result);
    return out;
  }
  // As torch does for an out= tensor of the wrong shape: resize it (new storage), keep dtype.
  Tensor converted = result.dtype() == out.dtype() ? result : result.to(out.dtype());
  auto& impl = *out.unsafeGetTensorImpl();
  const auto& src = *converted.unsafeGetTensorImpl();
  impl.storage = src.storage;
  impl.sizes = src.sizes;
  impl.strides = src.strides;
  impl.offset = src.offset;
  return out;
}

std::vector<int64_t> broadcast_byte_strides(IntArrayRef sizes, IntArrayRef strides,
                                            size_t element_size, IntArrayRef shape) {
  std::vector<int64_t> out(shape.size(), 0);
  const size_t lead = shape.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i)
    out[lead + i] = sizes[i] == 1 ? 0 : strides[i] * static_cast<int64_t>(element_size);
  return out;
}

Tensor empty_like_layout(IntArrayRef shape, TensorOptions options, const Tensor& ref) {
  if (ref.sizes() != shape || ref.dim() < 2 || ref.is_contiguous()) return empty(shape, options);
  // Dims ordered by decreasing stride must give a dense, non-overlapping layout.
  std::vector<int64_t> perm(ref.dim());
  for (int64_t i = 0; i < ref.dim(); ++i) perm[i] = i;
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return ref.stride(a) > ref.stride(b); });
  int64_t expected = 1;
  for (size_t i = perm.size(); i-- > 0;) {
    const int64_t d = perm[i];
    if (ref.size(d) == 1) continue;
    if (ref.stride(d) != expected) return empty(shape, options);
    expected *= ref.size(d);
  }
  std::vector<int64_t> permuted(perm.size()), inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    permuted[i] = shape[perm[i]];
    inverse[perm[i]] = static_cast<int64_t>(i);
  }
  return empty(permuted, options).permute(inverse);
}

namespace {

template <typename To, typename From>
void cast_run(char* const* p, const int64_t* s, int64_t n) {
  char* dst = p[0];
  const char* src = p[1];
  for (int64_t i = 0; i < n; ++i) {
    const From v = *reinterpret_cast<const From*>(src + i * s[1]);
    To* d = reinterpret_cast<To*>(dst + i * s[0]);
    if constexpr (std::is_same_v<To, bool>) {
      *d = v != From(0);
    } else {
      *d = static_cast<To>(v);
    }
  }
}

}  // namespace

// Copies src (broadcast to dst's shape) into dst, converting dtypes; no aliasing checks.
void copy_strided(const Tensor& dst, const Tensor& src) {
  // Nothing to copy; and the data of an empty tensor may be null (fg::tensor of an empty vector),
  // which memcpy must not be given even for no bytes.
  if (dst.numel() == 0) return;
  if (!dst.is_cpu() || !src.is_cpu()) return device_copy(dst, src);
  const auto bs = broadcast_byte_strides(src.sizes(), src.strides(), src.element_size(), dst.sizes());
  std::vector<int64_t> ds(dst.dim());
  for (int64_t i = 0; i < dst.dim(); ++i) ds[i] = dst.stride(i) * static_cast<int64_t>(dst.element_size());
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() &&
      src.sizes() == dst.sizes()) {
    std::memcpy(dst.data_ptr(), src.data_ptr(), dst.numel() * dst.element_size());
    return;
  }
  dispatch_all(dst.dtype(), [&](auto to) {
    using To = decltype(to);
    dispatch_all(src.dtype(), [&](auto from) {
      using From = decltype(from);
      strided_loop<2>(dst.sizes(), {byte_ptr(dst), byte_ptr(src)}, {ds.data(), bs.data()},
                      cast_run<To, From>);
    });
  });
}

}  // namespace detail

using namespace detail;

TensorImpl& Tensor::impl() const {
  if (!impl_) fail("Tensor", "the tensor is undefined (default-constructed)");
  return *impl_;
}

// A 0-d tensor has no size to index (wrap_dim accepts dim 0 for ops that treat it as one dim).
int64_t Tensor::size(int64_t d) const {
  if (dim() == 0) fail("size", "dimension specified as ", d, " but tensor has no dimensions");
  return impl().sizes[wrap_dim(d, dim(), "size")];
}
int64_t Tensor::stride(int64_t d) const {
  if (dim() == 0) fail("stride", "dimension specified as ", d, " but tensor has no dimensions");
  return impl().strides[wrap_dim(d, dim(), "stride")];
}
int64_t Tensor::numel() const { return product(impl().sizes); }

bool Tensor::is_contiguous() const {
  const auto& im = impl();
  if (numel() == 0) return true;  // nothing to lay out, as in torch
  int64_t expected = 1;
  for (size_t i = im.sizes.size(); i-- > 0;) {
    if (im.sizes[i] == 1) continue;
    if (im.strides[i] != expected) return false;
    expected *= im.sizes[i];
  }
  return true;
}

void* Tensor::data_ptr() const {
  const auto& im = impl();
  return static_cast<char*>(im.storage->data) + im.offset * static_cast<int64_t>(elementSize(im.dtype));
}

template <typename T>
T* Tensor::data_ptr() const {
  if (CppTypeToScalarType<T>::value != dtype())
    fail("data_ptr", "expected a tensor of dtype ", CppTypeToScalarType<T>::value, ", got ", dtype());
  return static_cast<T*>(data_ptr());
}
template float* Tensor::data_ptr<float>() const;
template double* Tensor::data_ptr<double>() const;
template int64_t* Tensor::data_ptr<int64_t>() const;
template bool* Tensor::data_ptr<bool>() const;

Scalar Tensor::item() const {
  if (numel() != 1)
    fail("item", "a tensor with ", numel(), " elements cannot be converted to a scalar (shape ",
         sizes(), ")");
  check_defined(*this, "item");
  if (!is_cpu()) return cpu().item();
  return dispatch_all(dtype(), [&](auto tag) -> Scalar {
    using T = decltype(tag);
    return Scalar(*static_cast<const T*>(data_ptr()));
  });
}

template <typename T>
T Tensor::item() const {
  return item().to<T>();
}
template <>
bool Tensor::item<bool>() const {
  return item().toBool();
}
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template int64_t Tensor::item<int64_t>() const;
template int Tensor::item<int>() const;

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  check_defined(*this, "clone");
  Tensor out = empty(sizes(), options());
  copy_strided(out, *this);
  return out;
}

Tensor Tensor::to(ScalarType t) const {
  check_defined(*this, "to");
  if (t == dtype()) return *this;
  Tensor out = empty(sizes(), options().dtype(t));
  copy_strided(out, *this);
  return out;
}

Tensor Tensor::to(Device d) const {
  check_defined(*this, "to");
  if (d == device()) return *this;
  if (!d.is_cpu() && !fg::cuda::is_available())
    fail("to", "cannot move a tensor of shape ", sizes(), " from ", device(), " to ", d, ": ",
         fg::cuda::unavailable_reason());
  Tensor out = empty(sizes(), options().device(d));
  copy_strided(out, *this);
  return out;
}

Tensor Tensor::to(Device d, ScalarType t) const { return to(d).to(t); }

namespace {
// copy_'s work, its errors naming `op` (copy_, or Tensor::operator= where the user assigned).
void copy_into(const Tensor& self, const Tensor& src, const char* op) {
  check_defined(self, op);
  check_defined(src, op, "src");
  check_no_internal_overlap(self, op);
  // The source must broadcast to exactly this tensor's shape.
  const auto shape = infer_size(self.sizes(), src.sizes(), op);
  if (IntArrayRef(shape) != self.sizes())
    fail(op, "source of shape ", src.sizes(), " cannot be copied into a tensor of shape ", self.sizes());
  // As torch: a copy onto the same elements in the same layout is a no-op, and a partial overlap
  // (x.copy_(x.t()), a shifted slice) an error. Other sharing (layouts torch does not judge, such
  // as strided slices) reads from a clone, so that nothing is read after it was written.
  switch (overlap(self, src)) {
    case Overlap::Full:
      if (self.sizes() == src.sizes()) return;
      break;
    case Overlap::Partial:
      fail(op, "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
               "single memory location; clone() the input before copying");
    case Overlap::None:
      copy_strided(self, src);
      return;
    case Overlap::TooHard:
      break;
  }
  copy_strided(self, src.clone());
}
}  // namespace

const Tensor& Tensor::copy_(const Tensor& src) const {
  copy_into(*this, src, "copy_");
  return *this;
}

// Assignment to a temporary writes into its memory, as libtorch's rvalue operator= (copy_, fill_).
Tensor& Tensor::operator=(const Tensor& value) && {
  copy_into(*this, value, "Tensor::operator=");
  return *this;
}

Tensor& Tensor::operator=(Tensor&& value) && {
  copy_into(*this, value, "Tensor::operator=");
  return *this;
}

Tensor& Tensor::operator=(const Scalar& value) && {
  check_defined(*this, "Tensor::operator=");
  check_no_internal_overlap(*this, "Tensor::operator=");
  fill_(value);
  return *this;
}

const Tensor& Tensor::fill_(const Scalar& value) const {
  check_defined(*this, "fill_");
  if (!is_cpu()) {
    device_fill(*this, value);
    return *this;
  }
  dispatch_all(dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = scalar_as<T>(value);
    std::vector<int64_t> bs(dim());
    for (int64_t i = 0; i < dim(); ++i) bs[i] = stride(i) * static_cast<int64_t>(sizeof(T));
    strided_loop<1>(sizes(), {byte_ptr(*this)}, {bs.data()},
                    [v](char* const* p, const int64_t* s, int64_t n) {
                      if (s[0] == sizeof(T)) {
                        T* d = reinterpret_cast<T*>(p[0]);
                        std::fill(d, d + n, v);
                      } else {
                        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
                      }
                    });
  });
  return *this;
}

const Tensor& Tensor::zero_() const { return fill_(0); }

}  // namespace fg
