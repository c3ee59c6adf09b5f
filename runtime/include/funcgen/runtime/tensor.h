// fg::Tensor: a handle to shared storage plus sizes, strides, offset, dtype and device, with the
// method API of at::Tensor. Copying a Tensor copies the handle; views share storage, and in-place
// ops (`add_`, `copy_`, ...) write through every view of it, as in libtorch.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <ostream>
#include <tuple>
#include <vector>

#include "funcgen/runtime/array_ref.h"
#include "funcgen/runtime/error.h"
#include "funcgen/runtime/scalar_type.h"

namespace fg {

// Owns (or, for from_blob, borrows) one allocation.
struct Storage {
  std::shared_ptr<void> owner;  // frees the allocation when the last tensor lets go
  void* data = nullptr;
  size_t nbytes = 0;
  Device device = Device(kCPU);
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements
  int64_t offset = 0;            // in elements
  ScalarType dtype = kFloat;
};

class Tensor {
 public:
  Tensor() = default;  // undefined; defined() is false
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  ~Tensor() = default;

  // ---- assignment, as libtorch's ----
  // To a named tensor: rebinds it to other's storage (`y = x` makes y another handle of x's memory).
  Tensor& operator=(const Tensor& other) & = default;
  Tensor& operator=(Tensor&& other) & noexcept = default;
  // To a temporary, such as a view (`x[i] = v`, `x.select(1, j) = v`, `x.narrow(0, 1, 2) = 0.0`):
  // copies into its memory, as `copy_(value)` (broadcast to its shape, converted to its dtype) or
  // `fill_(value)` does; errors name `Tensor::operator=`.
  Tensor& operator=(const Tensor& value) &&;
  Tensor& operator=(Tensor&& value) &&;
  Tensor& operator=(const Scalar& value) &&;

  // ---- metadata and data access ----
  bool defined() const { return impl_ != nullptr; }
  IntArrayRef sizes() const { return impl().sizes; }
  IntArrayRef strides() const { return impl().strides; }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(impl().sizes.size()); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const;
  int64_t storage_offset() const { return impl().offset; }
  ScalarType dtype() const { return impl().dtype; }
  ScalarType scalar_type() const { return impl().dtype; }
  size_t element_size() const { return elementSize(dtype()); }
  Device device() const { return impl().storage->device; }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_floating_point() const { return isFloatingType(dtype()); }
  bool is_contiguous() const;
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }
  // The value of a one-element tensor, converted to T.
  template <typename T>
  T item() const;
  Scalar item() const;
  // Pointer to the first element; T must match dtype() exactly.
  template <typename T>
  T* data_ptr() const;
  void* data_ptr() const;
  const std::shared_ptr<TensorImpl>& unsafeGetTensorImpl() const { return impl_; }

  // ---- copies and conversions ----
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(ScalarType dtype) const;
  Tensor to(Device device) const;
  Tensor to(Device device, ScalarType dtype) const;
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor cuda() const { return to(Device(kCUDA, 0)); }

  // ---- factories shaped like this tensor's options ----
  Tensor new_zeros(IntArrayRef size) const;
  Tensor new_ones(IntArrayRef size) const;
  Tensor new_empty(IntArrayRef size) const;
  Tensor new_full(IntArrayRef size, const Scalar& value) const;
  Tensor new_zeros(IntArrayRef size, TensorOptions options) const;
  Tensor new_ones(IntArrayRef size, TensorOptions options) const;
  Tensor new_empty(IntArrayRef size, TensorOptions options) const;
  Tensor new_full(IntArrayRef size, const Scalar& value, TensorOptions options) const;

  // ---- element-wise (functional and in place) ----
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  const Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& add_(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& mul_(const Tensor& other) const;
  const Tensor& mul_(const Scalar& other) const;
  const Tensor& div_(const Tensor& other) const;
  const Tensor& div_(const Scalar& other) const;
  const Tensor& pow_(const Tensor& exponent) const;
  const Tensor& pow_(const Scalar& exponent) const;

#define FG_UNARY_METHODS(name) \
  Tensor name() const;         \
  const Tensor& name##_() const;
  FG_UNARY_METHODS(neg)
  FG_UNARY_METHODS(abs)
  FG_UNARY_METHODS(exp)
  FG_UNARY_METHODS(log)
  FG_UNARY_METHODS(log1p)
  FG_UNARY_METHODS(expm1)
  FG_UNARY_METHODS(sqrt)
  FG_UNARY_METHODS(rsqrt)
  FG_UNARY_METHODS(sin)
  FG_UNARY_METHODS(cos)
  FG_UNARY_METHODS(tan)
  FG_UNARY_METHODS(tanh)
  FG_UNARY_METHODS(sigmoid)
  FG_UNARY_METHODS(erf)
  FG_UNARY_METHODS(silu)
  FG_UNARY_METHODS(log_sigmoid)
  FG_UNARY_METHODS(relu)
#undef FG_UNARY_METHODS

  Tensor clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_max(const Scalar& max) const;
  const Tensor& clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  const Tensor& clamp_min_(const Scalar& min) const;
  const Tensor& clamp_max_(const Scalar& max) const;
  // torch's Tensor.where(condition, other): self where condition, else other.
  Tensor where(const Tensor& condition, const Tensor& other) const;

#define FG_COMPARE_METHODS(name)              \
  Tensor name(const Tensor& other) const;     \
  Tensor name(const Scalar& other) const;     \
  const Tensor& name##_(const Tensor& other) const; \
  const Tensor& name##_(const Scalar& other) const;
  FG_COMPARE_METHODS(gt)
  FG_COMPARE_METHODS(lt)
  FG_COMPARE_METHODS(ge)
  FG_COMPARE_METHODS(le)
  FG_COMPARE_METHODS(eq)
  FG_COMPARE_METHODS(ne)
  FG_COMPARE_METHODS(logical_and)
  FG_COMPARE_METHODS(logical_or)
  FG_COMPARE_METHODS(logical_xor)
#undef FG_COMPARE_METHODS
  Tensor logical_not() const;

  // ---- reductions ----
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dim, bool keepdim = false) const;
  // (x.var(false) is over every dim, unbiased false; x.var(0) and x.var({0}) over dim 0)
  Tensor var(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor std(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor var() const { return var(IntArrayRef()); }
  Tensor std() const { return std(IntArrayRef()); }
  template <typename Bool, typename = std::enable_if_t<std::is_same_v<Bool, bool>>>
  Tensor var(Bool unbiased) const {
    return var(IntArrayRef(), unbiased);
  }
  template <typename Bool, typename = std::enable_if_t<std::is_same_v<Bool, bool>>>
  Tensor std(Bool unbiased) const {
    return std(IntArrayRef(), unbiased);
  }
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim = false) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;

  // ---- linear algebra ----
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& mat2) const;
  Tensor bmm(const Tensor& mat2) const;
  Tensor mv(const Tensor& vec) const;
  Tensor dot(const Tensor& other) const;
  Tensor outer(const Tensor& vec2) const;

  // ---- shape and views (views share storage) ----
  Tensor view(IntArrayRef size) const;
  Tensor view_as(const Tensor& other) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor reshape_as(const Tensor& other) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(IntArrayRef dims) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor expand(IntArrayRef size) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  const Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor detach() const;

  // ---- in place ----
  const Tensor& copy_(const Tensor& src) const;
  const Tensor& zero_() const;
  const Tensor& fill_(const Scalar& value) const;

  // ---- value-dependent shapes ----
  Tensor nonzero() const;
  bool is_nonzero() const;
  Tensor masked_select(const Tensor& mask) const;

  // ---- operators that assign ----
  const Tensor& operator+=(const Tensor& other) const { return add_(other); }
  const Tensor& operator+=(const Scalar& other) const { return add_(other); }
  const Tensor& operator-=(const Tensor& other) const { return sub_(other); }
  const Tensor& operator-=(const Scalar& other) const { return sub_(other); }
  const Tensor& operator*=(const Tensor& other) const { return mul_(other); }
  const Tensor& operator*=(const Scalar& other) const { return mul_(other); }
  const Tensor& operator/=(const Tensor& other) const { return div_(other); }
  const Tensor& operator/=(const Scalar& other) const { return div_(other); }

 private:
  TensorImpl& impl() const;
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace fg
