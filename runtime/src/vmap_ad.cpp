// Batching rules of the fg::ad derivative helpers: each works on the logical tensors (the dims
// after the batch dims) and runs once over the whole batch.
#include <algorithm>
#include <vector>

#include "funcgen/runtime/ad.h"
#include "funcgen/runtime/vmap.h"
#include "internal.h"

namespace fg::vmap::ad {

namespace {

int64_t nb(const Batched& x) { return nbatch(x.levels); }
int64_t rank(const Batched& x) { return x.value.dim() - nb(x); }
std::vector<int64_t> batch_sizes(const Batched& x) {
  return std::vector<int64_t>(x.value.sizes().begin(), x.value.sizes().begin() + nb(x));
}
// Every logical dim of x, as physical dims.
std::vector<int64_t> logical_dims(const Batched& x) {
  std::vector<int64_t> d;
  for (int64_t i = 0; i < rank(x); ++i) d.push_back(nb(x) + i);
  return d;
}
Batched unsqueeze(const Batched& x, int64_t logical) { return {x.value.unsqueeze(dim(logical, nb(x))), x.levels}; }
Batched squeeze(const Batched& x, int64_t logical) { return {x.value.squeeze(dim(logical, nb(x))), x.levels}; }
Batched transpose_last(const Batched& x) { return {x.value.transpose(-1, -2), x.levels}; }
// The batch size of every level of `all` (in level order), from the operands that have it.
std::vector<int64_t> union_sizes(std::initializer_list<const Batched*> ops, Levels all) {
  std::vector<int64_t> sizes;
  for (int l = 0; l < 32; ++l) {
    if (((all >> l) & 1u) == 0) continue;
    int64_t size = -1;
    for (const Batched* b : ops)
      if (b->value.defined() && ((b->levels >> l) & 1u) != 0) {
        size = b->value.size(nbatch(b->levels & ((1u << l) - 1u)));
        break;
      }
    if (size < 0) detail::fail("vmap", "no operand is batched at vmap level ", l);
    sizes.push_back(size);
  }
  return sizes;
}
// Zeros of g's batch sizes followed by `sizes`, with g written into the view that `view` takes of
// it (given the physical zeros and g's number of batch dims).
template <typename View>
Batched write_into_zeros(const Batched& g, IntArrayRef sizes, View&& view) {
  Tensor out = fg::zeros(with_batch(batch_sizes(g), sizes), g.value.options());
  view(out, nb(g)).copy_(g.value);
  return {out, g.levels};
}

}  // namespace

Batched grad_seed(const Batched& output, const char* fn) {
  if (logical_numel(output.value, nb(output)) != 1)
    detail::fail("grad", fn, ": the function must return a tensor with one element, got shape ",
                 logical_sizes(output.value, nb(output)));
  return {fg::ones_like(output.value), output.levels};
}

Batched sum_to(const Batched& self, IntArrayRef sizes) {
  const int64_t n = nb(self), lead = rank(self) - static_cast<int64_t>(sizes.size());
  if (lead < 0)
    detail::fail("ad::sum_to", "cannot sum a gradient of logical shape ", logical_sizes(self.value, n), " to shape ",
                 sizes);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(n + d);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t d = n + lead + static_cast<int64_t>(i);
    if (sizes[i] == 1 && self.value.size(d) != 1) dims.push_back(d);
  }
  if (dims.empty()) return self;
  return {self.value.sum(dims, true).reshape(with_batch(batch_sizes(self), sizes)), self.levels};
}

Batched sum_backward(const Batched& g, IntArrayRef self_sizes, IntArrayRef dim, bool keepdim) {
  const int64_t n = nb(g);
  std::vector<int64_t> physical;
  if (dim.empty()) {
    for (size_t i = 0; i < self_sizes.size(); ++i) physical.push_back(n + static_cast<int64_t>(i));
  } else {
    const int64_t r = static_cast<int64_t>(self_sizes.size());
    for (int64_t d : dim) physical.push_back((d < 0 ? d + r : d) + n);
  }
  // The reduced dims back as size 1 (unless kept), then broadcast to the batch and self's shape.
  Tensor x = g.value;
  if (!keepdim || dim.empty()) {
    if (dim.empty()) {
      x = x.reshape(with_batch(batch_sizes(g), std::vector<int64_t>(self_sizes.size(), 1)));
    } else {
      std::vector<int64_t> sorted = physical;
      std::sort(sorted.begin(), sorted.end());
      for (int64_t d : sorted) x = x.unsqueeze(d);
    }
  }
  return {x.expand(with_batch(batch_sizes(g), self_sizes)), g.levels};
}

Batched sum_reduce(const Batched& self, IntArrayRef dim, bool keepdim) {
  if (!dim.empty()) return {self.value.sum(dims(dim, nb(self)), keepdim), self.levels};
  if (rank(self) == 0) return self;
  return {self.value.sum(logical_dims(self), keepdim), self.levels};
}

// A product's gradient at every level of its operands, as the generator's batching analysis takes
// a rule's result to be: the operand read for its shape only may be batched where the gradient
// is not (a cotangent from a jacobian's basis times a weight passed unbatched), and then the
// gradient is the same for each of its examples (expanded, not copied).
static Batched at_every_level(const Batched& r, const Batched& a, const Batched& b, const Batched& c) {
  const Levels all = r.levels | a.levels | b.levels | c.levels;
  if (all == r.levels) return r;
  return {materialize(r.value, r.levels, all, union_sizes({&r, &a, &b, &c}, all)), all};
}

Batched matmul_backward_self(const Batched& g, const Batched& self, const Batched& other) {
  const int64_t ls = rank(self), lo = rank(other);
  Batched b = lo == 1 ? unsqueeze(other, -1) : other;
  Batched gg = g;
  if (ls == 1) gg = unsqueeze(gg, lo == 1 ? 0 : -2);
  if (lo == 1) gg = unsqueeze(gg, -1);
  std::vector<int64_t> a_sizes(logical_sizes(self.value, nb(self)).begin(), logical_sizes(self.value, nb(self)).end());
  if (ls == 1) a_sizes.insert(a_sizes.begin(), 1);
  Batched da = sum_to(matmul(gg, transpose_last(b)), a_sizes);
  return at_every_level(ls == 1 ? squeeze(da, 0) : da, g, self, other);
}

Batched matmul_backward_other(const Batched& g, const Batched& self, const Batched& other) {
  const int64_t ls = rank(self), lo = rank(other);
  Batched a = ls == 1 ? unsqueeze(self, 0) : self;
  Batched gg = g;
  if (ls == 1) gg = unsqueeze(gg, lo == 1 ? 0 : -2);
  if (lo == 1) gg = unsqueeze(gg, -1);
  std::vector<int64_t> b_sizes(logical_sizes(other.value, nb(other)).begin(),
                               logical_sizes(other.value, nb(other)).end());
  if (lo == 1) b_sizes.push_back(1);
  Batched db = sum_to(matmul(transpose_last(a), gg), b_sizes);
  return at_every_level(lo == 1 ? squeeze(db, -1) : db, g, self, other);
}

Batched linear_backward_weight(const Batched& g, const Batched& input, const Batched& weight) {
  // g [..., out], input [..., in] -> [out, in], each as a matrix of rows.
  const auto rows = [](const Batched& x) -> Batched {
    if (rank(x) == 1) return unsqueeze(x, 0);
    return {x.value.reshape(batch_shape(x.value, nb(x), {-1, x.value.size(-1)})), x.levels};
  };
  const IntArrayRef w = logical_sizes(weight.value, nb(weight));
  return at_every_level(sum_to(matmul(transpose_last(rows(g)), rows(input)), std::vector<int64_t>(w.begin(), w.end())),
                        g, input, weight);
}

Batched reduction_apply(const Batched& self, Reduction reduction) {
  if (reduction == Reduction::None || rank(self) == 0) return self;
  const std::vector<int64_t> d = logical_dims(self);
  return {reduction == Reduction::Mean ? self.value.mean(d) : self.value.sum(d), self.levels};
}

Batched reduction_backward(const Batched& g, IntArrayRef sizes, Reduction reduction) {
  if (reduction == Reduction::None) return g;
  const Tensor e = g.value.reshape(with_batch(batch_sizes(g), std::vector<int64_t>(sizes.size(), 1)))
                       .expand(with_batch(batch_sizes(g), sizes));
  return {reduction == Reduction::Mean ? e / fg::ad::reduced_numel(sizes, {}) : e, g.levels};
}

Batched select_backward(const Batched& g, IntArrayRef sizes, int64_t dim, int64_t index) {
  Tensor out = fg::zeros(with_batch(batch_sizes(g), sizes), g.value.options());
  const int64_t d = dim < 0 ? dim : dim + nb(g);
  out.select(d, index).copy_(g.value);
  return {out, g.levels};
}

Batched zero_gradient(const Batched& x) { return {fg::ad::zero_gradient(x.value), x.levels}; }

Batched add_gradients(const Batched& self, const Batched& other, Levels all, const std::vector<int64_t>& batch_sizes) {
  if (!self.value.defined() && !other.value.defined()) return {Tensor(), all};
  if (!self.value.defined()) return {materialize(other.value, other.levels, all, batch_sizes), all};
  if (!other.value.defined()) return {materialize(self.value, self.levels, all, batch_sizes), all};
  auto [a, b] = align({self, other});
  return {materialize(a + b, self.levels | other.levels, all, batch_sizes), all};
}

Batched slice_backward(const Batched& g, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                       std::optional<int64_t> end, int64_t step) {
  return write_into_zeros(g, sizes, [&](const Tensor& out, int64_t n) { return out.slice(vmap::dim(dim, n), start, end, step); });
}

Batched narrow_backward(const Batched& g, IntArrayRef sizes, int64_t dim, int64_t start, int64_t length) {
  return write_into_zeros(g, sizes, [&](const Tensor& out, int64_t n) { return out.narrow(vmap::dim(dim, n), start, length); });
}

Batched diagonal_backward(const Batched& g, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  return write_into_zeros(
      g, sizes, [&](const Tensor& out, int64_t n) { return out.diagonal(offset, vmap::dim(dim1, n), vmap::dim(dim2, n)); });
}

Batched index_select_backward(const Batched& g, IntArrayRef sizes, int64_t dim, const Batched& index) {
  const Levels all = g.levels | index.levels;
  if (all == 0) return {fg::ad::index_select_backward(g.value, sizes, dim, index.value), 0};
  const int64_t rank = static_cast<int64_t>(sizes.size());
  if (rank == 0) {  // a 0-d self: the gradient is g (at every level of the index too)
    const std::vector<int64_t> bs = union_sizes({&g, &index}, all);
    return {materialize(g.value, g.levels, all, bs), all};
  }
  const int64_t d = detail::wrap_dim(dim, rank, "ad::index_select_backward");
  // The (possibly per-example) index spread over g's logical dims, then the batched scatter_add.
  std::vector<int64_t> view(static_cast<size_t>(rank), 1);
  view[static_cast<size_t>(d)] = -1;
  const Tensor idx = index.value.reshape(batch_shape(index.value, nb(index), view));
  const IntArrayRef gs = logical_sizes(g.value, nb(g));
  const Batched spread{vmap::expand(idx, nb(index), gs), index.levels};
  return scatter_add({fg::zeros(sizes, g.value.options()), 0}, d, spread, g);
}

Batched nll_loss_backward(const Batched& g, const Batched& input, const Batched& target, const Batched& weight,
                          Reduction reduction, int64_t ignore_index) {
  const bool has_weight = weight.value.defined();
  const Levels all = g.levels | input.levels | target.levels | (has_weight ? weight.levels : 0);
  const std::vector<int64_t> bs = union_sizes({&g, &input, &target, &weight}, all);
  const auto full = [&](const Batched& x) { return materialize(x.value, x.levels, all, bs); };
  const Tensor w = has_weight ? full(weight) : Tensor();
  return {detail::nll_loss_backward(full(g), with_batch(bs, logical_sizes(input.value, nb(input))),
                                    input.value.dtype(), full(target), w, reduction, ignore_index, nbatch(all)),
          all};
}

Batched nll_loss_backward(const Batched& g, const Batched& input, const Batched& target, NoTensor,
                          Reduction reduction, int64_t ignore_index) {
  return nll_loss_backward(g, input, target, Batched{}, reduction, ignore_index);
}

// ------------------------------------------------------------------ products with a basis

namespace {

// The level of a basis (batched at exactly one level).
int basis_level(const Batched& basis, const char* fn) {
  if (nbatch(basis.levels) != 1) fg::detail::fail(fn, "internal error: the basis is batched at levels ", basis.levels);
  return __builtin_ctz(basis.levels);
}

// Whether the rows of the product can come from the operands: (basis * scale) is diag(scale) over
// a vector basis of n elements in other's dtype (scale, when given, broadcasts to [n] without
// growing it), and neither operand is batched at the basis's own level (a random draw per basis
// vector under randomness='different' is), so that each holds one value for every basis vector.
bool diagonal(const Batched& basis, const Batched* scale, const Batched& other, int level) {
  const Levels l = other.levels | (scale != nullptr ? scale->levels : 0u);
  if ((l & (1u << level)) != 0 || rank(basis) != 1 || other.value.dtype() != basis.value.dtype()) return false;
  if (rank(other) != 1 && rank(other) != 2) return false;
  if (scale == nullptr) return true;
  if (scale->value.dtype() != basis.value.dtype() || rank(*scale) > 1) return false;
  return rank(*scale) == 0 || scale->value.size(-1) == 1 || scale->value.size(-1) == basis.value.size(-1);
}

// a * b, batched at both operands' levels.
Batched mul(const Batched& a, const Batched& b) {
  const auto [x, y] = align({a, b});
  return {fg::mul(x, y), a.levels | b.levels};
}

// The standard basis `basis` stands for, formed ([n, sizes...] at its level), times the scale.
Batched formed(const Batched& basis, const Batched* scale) {
  const Batched b{fg::ad::basis(basis.value, logical_sizes(basis.value, 1)), basis.levels};
  return scale == nullptr ? b : mul(b, *scale);
}

// A copy of x in x's own memory order: a permuted view of contiguous memory (a weight's
// transpose) copies as one block, where a contiguous copy would gather it across the strides.
Tensor copy_in_layout(const Tensor& x) {
  std::vector<int64_t> order(static_cast<size_t>(x.dim()));
  for (int64_t d = 0; d < x.dim(); ++d) order[static_cast<size_t>(d)] = d;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return x.stride(a) > x.stride(b); });
  const Tensor dense = x.permute(order);
  if (!dense.is_contiguous()) return x.clone();
  std::vector<int64_t> back(order.size());
  for (size_t i = 0; i < order.size(); ++i) back[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return dense.clone().permute(back);
}

// `rows` (batched at levels other than the basis's) with its first logical dim taken as the batch
// dim of level `level`, moved to where that level's batch dim goes. `fresh`: rows is a computed
// tensor of its own, or the generated code only reads the product (the *_view products);
// otherwise it is an operand (the weight itself), which a jacobian must not share memory with
// (the caller may write either), so it is copied.
Batched as_rows(const Batched& rows, int level, bool fresh) {
  const Levels below = rows.levels & ((1u << level) - 1u);
  const int64_t from = nb(rows), to = nbatch(below);
  const Tensor moved = from == to ? rows.value : rows.value.movedim(from, to);
  return {fresh ? moved : copy_in_layout(moved), rows.levels | (1u << level)};
}

// Rows of matmul(diag(scale) or I, other), other [n] or [n, m]; `share`: they may be other's memory.
Batched diagonal_rows(const Batched* scale, const Batched& other, int level, bool share) {
  if (scale == nullptr) return as_rows(other, level, share);
  const Batched s = rank(other) == 2 && rank(*scale) == 1 ? unsqueeze(*scale, -1) : *scale;
  return as_rows(mul(s, other), level, true);
}

Batched basis_product(const Batched& basis, const Batched* scale, const Batched& other, const char* fn,
                      bool share = false) {
  const int level = basis_level(basis, fn);
  if (diagonal(basis, scale, other, level) && logical_sizes(other.value, nb(other))[0] == basis.value.size(-1))
    return diagonal_rows(scale, other, level, share);
  return fg::vmap::matmul(formed(basis, scale), other);
}

// Rows of matmul(other, diag(scale) or I), other [n] or [m, n]: column k of other, scaled.
Batched product_basis(const Batched& other, const Batched& basis, const Batched* scale, const char* fn,
                      bool share = false) {
  const int level = basis_level(basis, fn);
  if (diagonal(basis, scale, other, level) && other.value.size(-1) == basis.value.size(-1)) {
    const Batched scaled = scale == nullptr ? other : mul(other, *scale);
    return as_rows(rank(other) == 2 ? transpose_last(scaled) : scaled, level, scale != nullptr || share);
  }
  return fg::vmap::matmul(other, formed(basis, scale));
}

}  // namespace

Batched basis_matmul(const Batched& basis, const Batched& other) {
  return basis_product(basis, nullptr, other, "ad::basis_matmul");
}
Batched basis_matmul_scaled(const Batched& basis, const Batched& scale, const Batched& other) {
  return basis_product(basis, &scale, other, "ad::basis_matmul_scaled");
}
Batched matmul_basis(const Batched& other, const Batched& basis) {
  return product_basis(other, basis, nullptr, "ad::matmul_basis");
}
Batched matmul_basis_scaled(const Batched& other, const Batched& basis, const Batched& scale) {
  return product_basis(other, basis, &scale, "ad::matmul_basis_scaled");
}
Batched basis_matmul_view(const Batched& basis, const Batched& other) {
  return basis_product(basis, nullptr, other, "ad::basis_matmul_view", true);
}
Batched matmul_basis_view(const Batched& other, const Batched& basis) {
  return product_basis(other, basis, nullptr, "ad::matmul_basis_view", true);
}

}  // namespace fg::vmap::ad
