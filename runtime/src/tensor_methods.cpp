// Tensor methods that are the free functions with `self` first (libtorch's method variants).
#include "internal.h"

namespace fg {

Tensor Tensor::new_zeros(IntArrayRef size) const { return zeros(size, options()); }
Tensor Tensor::new_ones(IntArrayRef size) const { return ones(size, options()); }
Tensor Tensor::new_empty(IntArrayRef size) const { return empty(size, options()); }
Tensor Tensor::new_full(IntArrayRef size, const Scalar& value) const { return full(size, value, options()); }
namespace {
// Options given to new_* override this tensor's; what they leave unset comes from it.
TensorOptions merged(const Tensor& self, TensorOptions o) {
  return o.has_dtype() ? o : o.dtype(self.dtype());
}
}  // namespace
Tensor Tensor::new_zeros(IntArrayRef size, TensorOptions o) const { return zeros(size, merged(*this, o)); }
Tensor Tensor::new_ones(IntArrayRef size, TensorOptions o) const { return ones(size, merged(*this, o)); }
Tensor Tensor::new_empty(IntArrayRef size, TensorOptions o) const { return empty(size, merged(*this, o)); }
Tensor Tensor::new_full(IntArrayRef size, const Scalar& value, TensorOptions o) const {
  return full(size, value, merged(*this, o));
}

Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const { return fg::add(*this, other, alpha); }
Tensor Tensor::add(const Scalar& other, const Scalar& alpha) const { return fg::add(*this, other, alpha); }
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const { return fg::sub(*this, other, alpha); }
Tensor Tensor::sub(const Scalar& other, const Scalar& alpha) const { return fg::sub(*this, other, alpha); }
Tensor Tensor::mul(const Tensor& other) const { return fg::mul(*this, other); }
Tensor Tensor::mul(const Scalar& other) const { return fg::mul(*this, other); }
Tensor Tensor::div(const Tensor& other) const { return fg::div(*this, other); }
Tensor Tensor::div(const Scalar& other) const { return fg::div(*this, other); }
Tensor Tensor::pow(const Tensor& exponent) const { return fg::pow(*this, exponent); }
Tensor Tensor::pow(const Scalar& exponent) const { return fg::pow(*this, exponent); }
Tensor Tensor::maximum(const Tensor& other) const { return fg::maximum(*this, other); }
Tensor Tensor::minimum(const Tensor& other) const { return fg::minimum(*this, other); }

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return fg::sum(*this, dtype); }
Tensor Tensor::sum(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return fg::sum(*this, dim, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return fg::mean(*this, dtype); }
Tensor Tensor::mean(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return fg::mean(*this, dim, keepdim, dtype);
}
Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const { return fg::amax(*this, dim, keepdim); }
Tensor Tensor::amin(IntArrayRef dim, bool keepdim) const { return fg::amin(*this, dim, keepdim); }
Tensor Tensor::max() const { return fg::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return fg::max(*this, dim, keepdim); }
Tensor Tensor::min() const { return fg::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return fg::min(*this, dim, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return fg::argmax(*this, dim, keepdim); }
Tensor Tensor::logsumexp(IntArrayRef dim, bool keepdim) const { return fg::logsumexp(*this, dim, keepdim); }
Tensor Tensor::norm(const Scalar& p) const { return fg::norm(*this, p); }
Tensor Tensor::norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) const {
  return fg::norm(*this, p, dim, keepdim);
}
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const { return fg::softmax(*this, dim, dtype); }
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return fg::log_softmax(*this, dim, dtype);
}

Tensor Tensor::matmul(const Tensor& other) const { return fg::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& mat2) const { return fg::mm(*this, mat2); }
Tensor Tensor::bmm(const Tensor& mat2) const { return fg::bmm(*this, mat2); }
Tensor Tensor::mv(const Tensor& vec) const { return fg::mv(*this, vec); }
Tensor Tensor::dot(const Tensor& other) const { return fg::dot(*this, other); }
Tensor Tensor::outer(const Tensor& vec2) const { return fg::outer(*this, vec2); }

Tensor Tensor::view(IntArrayRef size) const { return fg::view(*this, size); }
Tensor Tensor::view_as(const Tensor& other) const { return fg::view(*this, other.sizes()); }
Tensor Tensor::reshape(IntArrayRef shape) const { return fg::reshape(*this, shape); }
Tensor Tensor::reshape_as(const Tensor& other) const { return fg::reshape(*this, other.sizes()); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const { return fg::flatten(*this, start_dim, end_dim); }
Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const { return fg::transpose(*this, dim0, dim1); }
Tensor Tensor::t() const { return fg::t(*this); }
Tensor Tensor::permute(IntArrayRef dims) const { return fg::permute(*this, dims); }
Tensor Tensor::movedim(int64_t source, int64_t destination) const { return fg::movedim(*this, source, destination); }
Tensor Tensor::unsqueeze(int64_t dim) const { return fg::unsqueeze(*this, dim); }
Tensor Tensor::squeeze() const { return fg::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return fg::squeeze(*this, dim); }
Tensor Tensor::expand(IntArrayRef size) const { return fg::expand(*this, size); }
Tensor Tensor::expand_as(const Tensor& other) const { return fg::expand(*this, other.sizes()); }
Tensor Tensor::select(int64_t dim, int64_t index) const { return fg::select(*this, dim, index); }
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return fg::slice(*this, dim, start, end, step);
}
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const { return fg::narrow(*this, dim, start, length); }
Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  return fg::diagonal(*this, offset, dim1, dim2);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return fg::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return fg::gather(*this, dim, index); }
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return fg::scatter_add(*this, dim, index, src);
}
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return fg::unbind(*this, dim); }
std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const { return fg::split(*this, split_size, dim); }
std::vector<Tensor> Tensor::split(IntArrayRef split_sizes, int64_t dim) const { return fg::split(*this, split_sizes, dim); }
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const { return fg::chunk(*this, chunks, dim); }
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const { return fg::masked_fill(*this, mask, value); }
Tensor Tensor::triu(int64_t diagonal) const { return fg::triu(*this, diagonal); }
Tensor Tensor::tril(int64_t diagonal) const { return fg::tril(*this, diagonal); }
Tensor Tensor::flip(IntArrayRef dims) const { return fg::flip(*this, dims); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const { return fg::roll(*this, shifts, dims); }
Tensor Tensor::repeat(IntArrayRef repeats) const { return fg::repeat(*this, repeats); }
Tensor Tensor::detach() const { return fg::detach(*this); }
Tensor Tensor::var(IntArrayRef dim, bool unbiased, bool keepdim) const { return fg::var(*this, dim, unbiased, keepdim); }
Tensor Tensor::std(IntArrayRef dim, bool unbiased, bool keepdim) const { return fg::std(*this, dim, unbiased, keepdim); }

Tensor Tensor::nonzero() const { return fg::nonzero(*this); }
bool Tensor::is_nonzero() const { return fg::is_nonzero(*this); }
Tensor Tensor::masked_select(const Tensor& mask) const { return fg::masked_select(*this, mask); }

}  // namespace fg
