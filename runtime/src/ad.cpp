#include "funcgen/runtime/ad.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "funcgen/runtime/random.h"
#include "device.h"
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

namespace {
// matmul's operands and gradient with its 1-D cases made matrices (a vector self a row, a vector
// other a column), so both gradients are plain (broadcast) matrix products.
struct MatmulOperands {
  Tensor a, b, g;
};
MatmulOperands as_matrices(const Tensor& grad, const Tensor& self, const Tensor& other) {
  MatmulOperands m{self.dim() == 1 ? self.unsqueeze(0) : self, other.dim() == 1 ? other.unsqueeze(-1) : other, grad};
  if (self.dim() == 1) m.g = m.g.unsqueeze(other.dim() == 1 ? 0 : -2);
  if (other.dim() == 1) m.g = m.g.unsqueeze(-1);
  return m;
}
}  // namespace

Tensor matmul_backward_self(const Tensor& grad, const Tensor& self, const Tensor& other) {
  const MatmulOperands m = as_matrices(grad, self, other);
  Tensor da = sum_to(fg::matmul(m.g, m.b.transpose(-1, -2)), m.a.sizes());
  return self.dim() == 1 ? da.squeeze(0) : da;
}

Tensor matmul_backward_other(const Tensor& grad, const Tensor& self, const Tensor& other) {
  const MatmulOperands m = as_matrices(grad, self, other);
  Tensor db = sum_to(fg::matmul(m.a.transpose(-1, -2), m.g), m.b.sizes());
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
      const int64_t k = d < 0 ? d + std::max<int64_t>(n, 1) : d;  // a 0-d tensor's dim 0 (or -1) has 1 element
      if (k < 0 || k >= std::max<int64_t>(n, 1))
        fail("ad::reduced_numel", "dim ", d, " is out of range for shape ", sizes);
      count *= n == 0 ? 1 : sizes[static_cast<size_t>(k)];
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

Tensor basis_placeholder(const Tensor& like, IntArrayRef sizes) {
  std::vector<int64_t> shape{static_cast<int64_t>(reduced_numel(sizes, {}))};
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  return fg::zeros({}, like.options()).expand(shape);
}

Tensor basis_matmul(const Tensor& basis, const Tensor& other) { return fg::matmul(basis, other); }
Tensor basis_matmul_scaled(const Tensor& basis, const Tensor& scale, const Tensor& other) {
  return fg::matmul(basis * scale, other);
}
Tensor matmul_basis(const Tensor& other, const Tensor& basis) { return fg::matmul(other, basis); }
Tensor matmul_basis_scaled(const Tensor& other, const Tensor& basis, const Tensor& scale) {
  return fg::matmul(other, basis * scale);
}
Tensor basis_matmul_view(const Tensor& basis, const Tensor& other) { return fg::matmul(basis, other); }
Tensor matmul_basis_view(const Tensor& other, const Tensor& basis) { return fg::matmul(other, basis); }

Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes) {
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  if (d < 0 || d >= x.dim()) fail("ad::unflatten", "dim ", dim, " is out of range for shape ", x.sizes());
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + d);
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  shape.insert(shape.end(), x.sizes().begin() + d + 1, x.sizes().end());
  return x.reshape(shape);
}

std::vector<Tensor> unflatten_each(const std::vector<Tensor>& xs, int64_t dim, IntArrayRef sizes) {
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (const Tensor& x : xs) out.push_back(unflatten(x, dim, sizes));
  return out;
}

std::vector<Tensor> select_each(const std::vector<Tensor>& xs, int64_t dim, int64_t index) {
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (const Tensor& x : xs) out.push_back(x.select(dim, index));
  return out;
}

std::vector<Tensor> list_basis(const std::vector<Tensor>& like, const char* name, const char* param) {
  if (like.empty())
    fail(name, "jacfwd w.r.t. '", param,
         "', a vector that holds no tensors: its basis has no tangents to push "
         "forward; pass at least one tensor, or leave it out of argnums");
  int64_t n = 0;
  for (const Tensor& x : like) n += x.numel();
  const Tensor identity = fg::eye(n, like[0].options());
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (const Tensor& x : like) {
    std::vector<int64_t> shape{n};
    shape.insert(shape.end(), x.sizes().begin(), x.sizes().end());
    out.push_back(identity.narrow(1, offset, x.numel()).contiguous().reshape(shape).to(x.device(), x.dtype()));
    offset += x.numel();
  }
  return out;
}

std::vector<Tensor> unflatten_list(const Tensor& columns, int64_t dim, const std::vector<Tensor>& like) {
  const int64_t d = dim < 0 ? dim + columns.dim() : dim;
  int64_t n = 0;
  for (const Tensor& x : like) n += x.numel();
  if (d < 0 || d >= columns.dim() || columns.size(d) != n)
    fail("ad::unflatten_list", "dim ", dim, " of shape ", columns.sizes(), " does not hold the ", n,
         " elements of a list of ", like.size(), " tensors");
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (const Tensor& x : like) {
    out.push_back(unflatten(columns.narrow(d, offset, x.numel()).contiguous(), d, x.sizes()));
    offset += x.numel();
  }
  return out;
}

void tape_add(std::vector<Tensor>& tape, int64_t i, const Tensor& g) {
  if (i < 0) fail("ad::tape_add", "trip ", i, " of a tape (internal error of the generated code)");
  if (i >= static_cast<int64_t>(tape.size())) tape.resize(static_cast<size_t>(i) + 1);
  if (!g.defined()) return;  // the trip's value had none (a branch not taken)
  Tensor& entry = tape[static_cast<size_t>(i)];
  entry = entry.defined() ? entry + g : g;
}

std::vector<Tensor> list_gradient(const std::vector<Tensor>& grads, const std::vector<Tensor>& like) {
  if (grads.size() > like.size())
    fail("ad::list_gradient", "gradients for ", grads.size(), " elements of a list of ", like.size(),
         " (internal error of the generated code)");
  std::vector<Tensor> out(like.size());
  for (size_t k = 0; k < like.size(); ++k)
    out[k] = k < grads.size() && grads[k].defined() ? grads[k] : fg::zeros_like(like[k]);
  return out;
}

int64_t checked_index(size_t size, int64_t i) {
  if (i < 0 || static_cast<size_t>(i) >= size)
    fail("at", "index ", i, " is out of range for a vector of ", size, " tensors");
  return i;
}

void check_tangent_list(const std::vector<Tensor>& primal, const std::vector<Tensor>& tangent, const char* name) {
  if (primal.size() != tangent.size())
    fail("jvp", "the tangent of '", name, "' holds ", tangent.size(), " tensors, but '", name, "' holds ",
         primal.size(), "; give one tangent per tensor");
}

Tensor tape_pop(std::vector<Tensor>& tape) {
  if (tape.empty()) fail("ad::tape_pop", "an empty tape (internal error of the generated code)");
  Tensor g = std::move(tape.back());
  tape.pop_back();
  return g;
}

Tensor tape_read(const std::vector<Tensor>& tape, int64_t i) {
  if (i < 0) fail("ad::tape_read", "trip ", i, " of a tape (internal error of the generated code)");
  return i < static_cast<int64_t>(tape.size()) ? tape[static_cast<size_t>(i)] : Tensor();
}

Tensor tape_take(std::vector<Tensor>& tape, int64_t i) {
  if (i < 0) fail("ad::tape_take", "entry ", i, " of a tape (internal error of the generated code)");
  if (i >= static_cast<int64_t>(tape.size())) return Tensor();
  return std::exchange(tape[static_cast<size_t>(i)], Tensor());
}

void tape_set(std::vector<Tensor>& tape, int64_t i, const Tensor& value) {
  if (i < 0) fail("ad::tape_set", "entry ", i, " of a tape (internal error of the generated code)");
  if (i >= static_cast<int64_t>(tape.size())) tape.resize(static_cast<size_t>(i) + 1);
  tape[static_cast<size_t>(i)] = value;
}

RngState rng_state() { return {default_generator().seed(), default_generator().offset()}; }

RngState rng_replay(const RngState& state) {
  const RngState now = rng_state();
  default_generator().manual_seed(state.seed);
  default_generator().reserve_blocks(state.offset);  // from offset 0 after manual_seed
  return now;
}

Tensor zero_gradient(const Tensor& x) { return x.defined() ? fg::zeros_like(x) : Tensor(); }

Tensor add_gradients(const Tensor& self, const Tensor& other) {
  if (!self.defined()) return other;
  if (!other.defined()) return self;
  return self + other;
}

Tensor select_backward(const Tensor& g, IntArrayRef sizes, int64_t dim, int64_t index) {
  Tensor out = fg::zeros(sizes, g.options());
  out.select(dim, index).copy_(g);
  return out;
}

Tensor slice_backward(const Tensor& g, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step) {
  Tensor out = fg::zeros(sizes, g.options());
  out.slice(dim, start, end, step).copy_(g);
  return out;
}

Tensor narrow_backward(const Tensor& g, IntArrayRef sizes, int64_t dim, int64_t start, int64_t length) {
  Tensor out = fg::zeros(sizes, g.options());
  out.narrow(dim, start, length).copy_(g);
  return out;
}

Tensor diagonal_backward(const Tensor& g, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor out = fg::zeros(sizes, g.options());
  out.diagonal(offset, dim1, dim2).copy_(g);
  return out;
}

Tensor index_select_backward(const Tensor& g, IntArrayRef sizes, int64_t dim, const Tensor& index) {
  if (sizes.empty()) return g;  // a 0-d self: index_select copies it
  const int64_t rank = static_cast<int64_t>(sizes.size());
  const int64_t d = detail::wrap_dim(dim, rank, "ad::index_select_backward");
  // index spread over g's other dims, then scatter_add (which accumulates repeated indices).
  std::vector<int64_t> view(static_cast<size_t>(rank), 1);
  view[static_cast<size_t>(d)] = -1;
  const Tensor idx = index.reshape(view).expand(g.sizes());
  return fg::zeros(sizes, g.options()).scatter_add(d, idx, g);
}

Tensor nll_loss_backward(const Tensor& g, const Tensor& input, const Tensor& target,
                         const std::optional<Tensor>& weight, Reduction reduction, int64_t ignore_index) {
  return detail::nll_loss_backward(g, input.sizes(), input.dtype(), target, weight ? *weight : Tensor(), reduction,
                                   ignore_index, 0);
}

std::vector<int64_t> inverse_permutation(IntArrayRef dims) {
  const int64_t n = static_cast<int64_t>(dims.size());
  std::vector<int64_t> inverse(dims.size(), -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = detail::wrap_dim(dims[static_cast<size_t>(i)], n, "ad::inverse_permutation");
    if (inverse[static_cast<size_t>(d)] != -1) fail("ad::inverse_permutation", "dims ", dims, " repeat dimension ", d);
    inverse[static_cast<size_t>(d)] = i;
  }
  return inverse;
}

double gelu_tanh(const std::string& approximate) {
  if (approximate != "none" && approximate != "tanh")
    fail("ad::gelu_tanh", "approximate must be 'none' or 'tanh', got '", approximate, "'");
  return approximate == "tanh" ? 1.0 : 0.0;
}

double norm_order(const std::optional<Scalar>& p) {
  const double order = p ? p->toDouble() : 2.0;
  if (!(order >= 1.0) || std::isinf(order))
    fail("ad::norm_order", "the derivative of norm is implemented for finite p >= 1 only, got p = ", order);
  return order;
}

int64_t class_dim(int64_t input_dim) { return input_dim == 1 ? 0 : 1; }

}  // namespace fg::ad

namespace fg::detail {

Tensor nll_loss_backward(const Tensor& g, IntArrayRef input_sizes, ScalarType dtype, const Tensor& target_in,
                         const Tensor& weight, Reduction reduction, int64_t ignore_index, int64_t nb) {
  // The gradient's device (a 0-d CPU target goes with it, as in the forward).
  const Tensor target = target_in.to(common_device({&g, &target_in}, "ad::nll_loss_backward"));
  const int64_t rank = static_cast<int64_t>(input_sizes.size()) - nb;
  if (rank < 1) fail("ad::nll_loss_backward", "expected an input of at least 1 dimension, got shape ", input_sizes);
  const int64_t cd = nb + (rank == 1 ? 0 : 1);
  const int64_t trank = target.dim() - nb;
  const Tensor keep = target.ne(ignore_index);
  const Tensor safe = fg::where(keep, target, int64_t{0});
  // The weight of each element's class (0 where the target is ignored), shaped like the target.
  Tensor w;
  if (weight.defined()) {
    std::vector<int64_t> flat(target.sizes().begin(), target.sizes().begin() + nb);
    flat.push_back(-1);
    w = fg::gather(weight.to(dtype), nb, safe.reshape(flat)).reshape(target.sizes());
    w = fg::where(keep, w, 0.0);
  } else {
    w = keep.to(dtype);
  }
  Tensor coef;
  if (reduction == Reduction::None) {
    coef = g * w;
  } else {
    std::vector<int64_t> shape(g.sizes().begin(), g.sizes().end());
    shape.insert(shape.end(), static_cast<size_t>(trank), 1);
    coef = g.reshape(shape) * w;
    if (reduction == Reduction::Mean) {
      std::vector<int64_t> logical;
      for (int64_t i = 0; i < trank; ++i) logical.push_back(nb + i);
      coef = coef / (logical.empty() ? w : w.sum(logical, /*keepdim=*/true));  // 0/0 = nan, as the loss
    }
  }
  return fg::zeros(input_sizes, target.options().dtype(dtype))
      .scatter_add(cd, safe.unsqueeze(cd), (-coef).unsqueeze(cd));
}

}  // namespace fg::detail
