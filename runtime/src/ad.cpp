#include "funcgen/runtime/ad.h"

#include <vector>

#include "internal.h"

namespace fg::ad {

using detail::fail;

Tensor grad_seed(const Tensor& output, const char* fn) {
  if (output.numel() != 1)
    fail("grad", fn, ": the function must return a tensor with one element, got shape ", output.sizes());
  return fg::ones_like(output);
}

Tensor sum_to(const Tensor& self, IntArrayRef sizes) {
  const Tensor& grad = self;
  if (grad.sizes() == sizes) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  if (lead < 0) fail("ad::sum_to", "cannot sum a gradient of shape ", grad.sizes(), " to shape ", sizes);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] == 1 && grad.size(lead + static_cast<int64_t>(i)) != 1) dims.push_back(lead + static_cast<int64_t>(i));
  Tensor g = dims.empty() ? grad : grad.sum(dims, /*keepdim=*/true);
  if (lead > 0) g = g.reshape(sizes);
  if (g.sizes() != sizes) fail("ad::sum_to", "cannot sum a gradient of shape ", grad.sizes(), " to shape ", sizes);
  return g;
}

namespace {

// grad of a reduction without keepdim, with the reduced dims put back as size 1.
Tensor unsqueeze_reduced(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef dim, bool keepdim) {
  const int64_t n = static_cast<int64_t>(self_sizes.size());
  if (dim.empty()) {
    std::vector<int64_t> ones(static_cast<size_t>(n), 1);
    return grad.reshape(ones);
  }
  if (keepdim) return grad;
  std::vector<bool> reduced(static_cast<size_t>(n), false);
  for (int64_t d : dim) reduced[static_cast<size_t>(d < 0 ? d + n : d)] = true;
  Tensor g = grad;
  for (int64_t d = 0; d < n; ++d)
    if (reduced[static_cast<size_t>(d)]) g = g.unsqueeze(d);
  return g;
}

}  // namespace

Tensor sum_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef dim, bool keepdim) {
  return unsqueeze_reduced(grad, self_sizes, dim, keepdim).expand(self_sizes);
}


Tensor matmul_backward_self(const Tensor& grad, const Tensor& self, const Tensor& other) {
  const Tensor a = self.dim() == 1 ? self.unsqueeze(0) : self;
  const Tensor b = other.dim() == 1 ? other.unsqueeze(-1) : other;
  Tensor g = grad;
  if (self.dim() == 1) g = g.unsqueeze(other.dim() == 1 ? 0 : -2);
  if (other.dim() == 1) g = g.unsqueeze(-1);
  Tensor da = sum_to(fg::matmul(g, b.transpose(-1, -2)), a.sizes());
  return self.dim() == 1 ? da.squeeze(0) : da;
}

Tensor matmul_backward_other(const Tensor& grad, const Tensor& self, const Tensor& other) {
  const Tensor a = self.dim() == 1 ? self.unsqueeze(0) : self;
  const Tensor b = other.dim() == 1 ? other.unsqueeze(-1) : other;
  Tensor g = grad;
  if (self.dim() == 1) g = g.unsqueeze(other.dim() == 1 ? 0 : -2);
  if (other.dim() == 1) g = g.unsqueeze(-1);
  Tensor db = sum_to(fg::matmul(a.transpose(-1, -2), g), b.sizes());
  return other.dim() == 1 ? db.squeeze(-1) : db;
}

Tensor linear_backward_weight(const Tensor& grad, const Tensor& input, const Tensor& weight) {
  // grad [..., out], input [..., in] -> [out, in]
  const Tensor g = grad.dim() == 1 ? grad.unsqueeze(0) : grad.reshape({-1, grad.size(-1)});
  const Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input.reshape({-1, input.size(-1)});
  return sum_to(g.t().mm(x), weight.sizes());
}




Tensor sum_reduce(const Tensor& self, IntArrayRef dim, bool keepdim) {
  if (!dim.empty()) return self.sum(dim, keepdim);
  if (!keepdim) return self.sum();
  std::vector<int64_t> all;
  for (int64_t d = 0; d < self.dim(); ++d) all.push_back(d);
  return all.empty() ? self : self.sum(all, true);
}

double reduced_numel(IntArrayRef sizes, IntArrayRef dim) {
  int64_t count = 1;
  const int64_t n = static_cast<int64_t>(sizes.size());
  if (dim.empty()) {
    for (int64_t s : sizes) count *= s;
  } else {
    for (int64_t d : dim) {
      const int64_t k = d < 0 ? d + n : d;
      if (k < 0 || k >= n) fail("ad::reduced_numel", "dim ", d, " is out of range for shape ", sizes);
      count *= sizes[static_cast<size_t>(k)];
    }
  }
  return static_cast<double>(count);
}

Tensor reduction_apply(const Tensor& self, Reduction reduction) {
  switch (reduction) {
    case Reduction::Mean:
      return self.mean();
    case Reduction::Sum:
      return self.sum();
    case Reduction::None:
      break;
  }
  return self;
}

Tensor reduction_backward(const Tensor& g, IntArrayRef sizes, Reduction reduction) {
  if (reduction == Reduction::None) return g;
  const Tensor e = g.expand(sizes);
  return reduction == Reduction::Mean ? e / reduced_numel(sizes, {}) : e;
}

Tensor basis(const Tensor& like, IntArrayRef sizes) {
  const int64_t n = static_cast<int64_t>(reduced_numel(sizes, {}));
  std::vector<int64_t> shape{n};
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  return fg::eye(n, like.options()).reshape(shape);
}

Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes) {
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  if (d < 0 || d >= x.dim()) fail("ad::unflatten", "dim ", dim, " is out of range for shape ", x.sizes());
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + d);
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  shape.insert(shape.end(), x.sizes().begin() + d + 1, x.sizes().end());
  return x.reshape(shape);
}

Tensor zero_gradient(const Tensor& x) { return x.defined() ? fg::zeros_like(x) : Tensor(); }

Tensor select_backward(const Tensor& g, IntArrayRef sizes, int64_t dim, int64_t index) {
  Tensor out = fg::zeros(sizes, g.options());
  out.select(dim, index).copy_(g);
  return out;
}

}  // namespace fg::ad
