// The vmap "op database" (like functorch's test_ops.py): functions written against the fg API, each
// with several vmap specs. funcgen generates the batched functions (vmap_functions.funcgen.h);
// test_vmap.cpp checks every one against a loop of calls of the function below over the batch.
#include "vmap_functions.h"

namespace vt {

// ---------------------------------------------------------------- element-wise

FUNCGEN("unary_chain_v0 = vmap(unary_chain)")
FUNCGEN("unary_chain_v1 = vmap(unary_chain, in_dims=1)")
FUNCGEN("unary_chain_vm1 = vmap(unary_chain, in_dims=-1, out_dims=-1)")
FUNCGEN("unary_chain_o1 = vmap(unary_chain, out_dims=1)")
FUNCGEN("unary_chain_vv = vmap(vmap(unary_chain), in_dims=1, out_dims=1)")
FUNCGEN("unary_chain_bad_out = vmap(unary_chain, out_dims=4)")
FUNCGEN("unary_chain_vvm1 = vmap(vmap(unary_chain, in_dims=-1, out_dims=-1), in_dims=-1, out_dims=-1)")
fg::Tensor unary_chain(const fg::Tensor& x) {
  const fg::Tensor pos = x * x + 1;
  return fg::exp(x.sin()).log1p() + pos.sqrt() - x.tanh() * x.sigmoid() + fg::relu(x).neg() + x.cos().abs() +
         pos.log() * pos.rsqrt() + fg::tan(x * 0.5) + x.erf() + fg::silu(x) * fg::log_sigmoid(x);
}

FUNCGEN("binary_ops_v00 = vmap(binary_ops)")
FUNCGEN("binary_ops_v0n = vmap(binary_ops, in_dims=(0, None))")
FUNCGEN("binary_ops_vn1 = vmap(binary_ops, in_dims=(None, 1))")
FUNCGEN("binary_ops_v1m1 = vmap(binary_ops, in_dims=(1, -1), out_dims=-1)")
FUNCGEN("binary_ops_vv = vmap(vmap(binary_ops, in_dims=(0, None)), in_dims=(None, 0))")
FUNCGEN("binary_ops_vv01 = vmap(vmap(binary_ops, in_dims=(1, 0), out_dims=1), in_dims=(0, 1))")
FUNCGEN("binary_ops_c1 = vmap(binary_ops, in_dims=(0, None), chunk_size=1)")
FUNCGEN("binary_ops_c2 = vmap(binary_ops, in_dims=(0, 1), chunk_size=2)")
FUNCGEN("binary_ops_c100 = vmap(binary_ops, chunk_size=100)")
FUNCGEN("binary_ops_vv_c2 = vmap(vmap(binary_ops, chunk_size=2), in_dims=(1, None))")
FUNCGEN("binary_ops_vvv = vmap(vmap(vmap(binary_ops, in_dims=(0, None)), in_dims=(None, 0)), in_dims=(1, 1))")
fg::Tensor binary_ops(const fg::Tensor& x, const fg::Tensor& y) {
  return (x + y) * (x - y) / (y * y + 1) + fg::maximum(x, y) - fg::minimum(x, y) +
         fg::pow(x * x + 1, y) + fg::add(x, y, 0.5) - fg::sub(y, x).mul(x) + x.div(y.abs() + 1);
}

FUNCGEN("scalar_operands_v0 = vmap(scalar_operands)")
FUNCGEN("scalar_operands_v1 = vmap(scalar_operands, in_dims=(1, None))")
fg::Tensor scalar_operands(const fg::Tensor& x, double alpha) {
  return x * 2.0 + 1 - 3.0 / (x * x + 1) + (2.0 - x) * alpha + x.pow(2) + fg::pow(2.0, x) + x.add(alpha, 2) +
         x.sub(1).div(alpha);
}

FUNCGEN("where_clamp_v00 = vmap(where_clamp, in_dims=(0, 0, None, None))")
FUNCGEN("where_clamp_v0n = vmap(where_clamp, in_dims=(0, None, None, None))")
FUNCGEN("where_clamp_vn0 = vmap(where_clamp, in_dims=(None, 0, None, None))")
fg::Tensor where_clamp(const fg::Tensor& x, const fg::Tensor& y, double lo, double hi) {
  return fg::where(x > y, x, y * 2) + x.clamp(lo, hi) + fg::clamp(y, -0.5, 0.5) + x.clamp_min(0.1) +
         fg::clamp_max(y, 0.2) + fg::where(x < 0, x, 0.5) + y.where(y > x, x) +
         fg::where(fg::logical_or(x > 0.5, fg::logical_xor(y < 0, x < y).logical_not()), x, y) +
         fg::where(fg::logical_and(x, y > 0), 1.0, 0.0) + fg::leaky_relu(x, 0.1) * fg::hardtanh(y, -0.2, 0.3) +
         fg::elu(x) + fg::softplus(y, 2.0);
}

FUNCGEN("compare_ops_v0n = vmap(compare_ops, in_dims=(0, None))")
FUNCGEN("compare_ops_vn0 = vmap(compare_ops, in_dims=(None, 0))")
fg::Tensor compare_ops(const fg::Tensor& x, const fg::Tensor& y) {
  // An unbatched operand of higher rank than the batched one broadcasts the result up.
  const fg::Tensor both = (x > y).to(fg::kDouble) + x.le(y).to(fg::kDouble) * 2 + (x == x).to(fg::kDouble);
  return both * x + y.ne(0.0).to(fg::kDouble);
}

// ---------------------------------------------------------------- reductions

FUNCGEN("reduce_all_v0 = vmap(reduce_all)")
FUNCGEN("reduce_all_v1 = vmap(reduce_all, in_dims=1)")
FUNCGEN("reduce_all_vv = vmap(vmap(reduce_all), in_dims=-1)")
fg::Tensor reduce_all(const fg::Tensor& x) {
  return x.sum() + x.mean() * 2 + x.amax() - fg::max(x) + fg::amin(x) + x.norm() + fg::sum(x * x);
}

FUNCGEN("reduce_dims_v0 = vmap(reduce_dims)")
FUNCGEN("reduce_dims_v2 = vmap(reduce_dims, in_dims=2, out_dims=1)")
fg::Tensor reduce_dims(const fg::Tensor& x) {
  // x: [3, 4] logically.
  return x.sum({0}) + x.mean({0}) + x.amax({0}) - x.amin(0) + fg::sum(x, {-2}) + x.sum({0, 1}) +
         fg::mean(x, {-1, 0});
}

FUNCGEN("reduce_keepdim_v0 = vmap(reduce_keepdim)")
FUNCGEN("reduce_keepdim_vm1 = vmap(reduce_keepdim, in_dims=-1, out_dims=2)")
fg::Tensor reduce_keepdim(const fg::Tensor& x) {
  return x.sum({1}, true) + x.mean({-1}, true) * x.amax({1}, true) + fg::logsumexp(x, {1}, true) +
         fg::norm(x, 1, {-1}, true);
}

FUNCGEN("max_dim_get_v0 = vmap(max_dim_get)")
FUNCGEN("max_dim_get_v1 = vmap(max_dim_get, in_dims=1, out_dims=(1, 0))")
std::tuple<fg::Tensor, fg::Tensor> max_dim_get(const fg::Tensor& x) {
  const auto m = x.max(1);
  return std::make_tuple(std::get<0>(m) * 2, std::get<1>(m));
}

FUNCGEN("max_dim_bind_v0 = vmap(max_dim_bind)")
FUNCGEN("max_dim_bind_vm1 = vmap(max_dim_bind, in_dims=-1, out_dims=(-1, 0))")
std::tuple<fg::Tensor, fg::Tensor> max_dim_bind(const fg::Tensor& x) {
  auto [values, indices] = fg::max(x, -1, true);
  return std::make_tuple(values + 1, indices);
}

FUNCGEN("argmax_fn_v0 = vmap(argmax_fn)")
FUNCGEN("argmax_fn_v1 = vmap(argmax_fn, in_dims=1, out_dims=(0, 1))")
std::tuple<fg::Tensor, fg::Tensor> argmax_fn(const fg::Tensor& x) {
  return std::make_tuple(x.argmax(), fg::argmax(x, 0) + x.argmax(-1, true));
}

FUNCGEN("logsumexp_norm_v0 = vmap(logsumexp_norm)")
FUNCGEN("logsumexp_norm_v1 = vmap(logsumexp_norm, in_dims=1)")
fg::Tensor logsumexp_norm(const fg::Tensor& x) {
  return fg::logsumexp(x, {0}) + x.logsumexp({-1, 0}) + fg::norm(x, 2, {0}) + x.norm(1, {1}).sum() + fg::norm(x);
}

FUNCGEN("softmaxes_v0 = vmap(softmaxes)")
FUNCGEN("softmaxes_v1 = vmap(softmaxes, in_dims=1, out_dims=2)")
FUNCGEN("softmaxes_vv = vmap(vmap(softmaxes, in_dims=1), in_dims=0)")
fg::Tensor softmaxes(const fg::Tensor& x) {
  return x.softmax(-1) + fg::log_softmax(x, 0) + fg::softmax(x, 1) * x.log_softmax(-2);
}

// ---------------------------------------------------------------- views

FUNCGEN("transpose_t_v0 = vmap(transpose_t)")
FUNCGEN("transpose_t_v1 = vmap(transpose_t, in_dims=1, out_dims=1)")
fg::Tensor transpose_t(const fg::Tensor& x) {
  return x.transpose(0, 1) * 2 + x.t() + fg::transpose(x, -1, -2) + fg::t(x).t().t();
}

FUNCGEN("permute_fn_v0 = vmap(permute_fn)")
FUNCGEN("permute_fn_vm1 = vmap(permute_fn, in_dims=-1, out_dims=-1)")
fg::Tensor permute_fn(const fg::Tensor& x) {
  return x.permute({2, 0, 1}) + fg::permute(x, {-1, 0, 1}) * 2;
}

FUNCGEN("squeeze_unsqueeze_v0 = vmap(squeeze_unsqueeze)")
FUNCGEN("squeeze_unsqueeze_v2 = vmap(squeeze_unsqueeze, in_dims=2, out_dims=(1, 0))")
std::tuple<fg::Tensor, fg::Tensor> squeeze_unsqueeze(const fg::Tensor& x) {
  // x: [3, 1, 4] logically.
  return std::make_tuple(x.squeeze(1).unsqueeze(0).unsqueeze(-1), x.squeeze() + fg::unsqueeze(x, 1).squeeze(2).sum(1));
}

FUNCGEN("select_index_v0 = vmap(select_index)")
FUNCGEN("select_index_v1 = vmap(select_index, in_dims=1)")
fg::Tensor select_index(const fg::Tensor& x) {
  // x: [3, 4] logically.
  return x.select(0, 1) + x[2] + x.select(1, -1).sum() + fg::select(x, -1, 0).unsqueeze(1).sum(0);
}

FUNCGEN("slice_narrow_v0 = vmap(slice_narrow)")
FUNCGEN("slice_narrow_v1 = vmap(slice_narrow, in_dims=1, out_dims=-1)")
fg::Tensor slice_narrow(const fg::Tensor& x) {
  // x: [6, 4] logically.
  return x.slice(0, 1, 5, 2) + x.narrow(0, 2, 2) + fg::narrow(x, -1, 0, 1).narrow(0, 0, 2) + x.slice(1, 1, 2).slice(0, 0, 2) +
         fg::slice(x, 0, 4);
}

FUNCGEN("diagonal_fn_v0 = vmap(diagonal_fn)")
FUNCGEN("diagonal_fn_vm1 = vmap(diagonal_fn, in_dims=-1)")
fg::Tensor diagonal_fn(const fg::Tensor& x) {
  // x: [4, 4] logically.
  return x.diagonal() + x.diagonal(0, -2, -1) * 2 + fg::diagonal(x, 0, 1, 0) + x.diagonal(1).sum();
}

FUNCGEN("flatten_reshape_v0 = vmap(flatten_reshape)")
FUNCGEN("flatten_reshape_v1 = vmap(flatten_reshape, in_dims=1, out_dims=(1, 0, -1))")
std::tuple<fg::Tensor, fg::Tensor, fg::Tensor> flatten_reshape(const fg::Tensor& x) {
  // x: [2, 3, 4] logically.
  return std::make_tuple(x.flatten(), x.flatten(1) + fg::flatten(x, 0, 1).reshape({2, 12}),
                         x.reshape({-1, 4}) + fg::reshape(x, {6, 4}));
}

FUNCGEN("view_fn_v0 = vmap(view_fn)")
FUNCGEN("view_fn_vv = vmap(vmap(view_fn))")
fg::Tensor view_fn(const fg::Tensor& x) {
  // x: [2, 3, 4] logically, contiguous.
  return x.view({6, 4}) + x.view({2, -1}).view({6, 4}) + fg::view(x, {-1}).view({6, 4});
}

FUNCGEN("expand_fn_v0 = vmap(expand_fn)")
FUNCGEN("expand_fn_v1 = vmap(expand_fn, in_dims=1, out_dims=(0, 1))")
std::tuple<fg::Tensor, fg::Tensor> expand_fn(const fg::Tensor& x) {
  // x: [3, 1] logically.
  return std::make_tuple(x.expand({3, 4}) + fg::expand(x, {-1, 4}), x.expand({2, 3, 5}));
}

FUNCGEN("movedim_fn_v0 = vmap(movedim_fn)")
FUNCGEN("movedim_fn_v1 = vmap(movedim_fn, in_dims=1, out_dims=2)")
fg::Tensor movedim_fn(const fg::Tensor& x) {
  // x: [2, 3, 4] logically.
  return x.movedim(0, -1) + fg::movedim(x, 2, 0).permute({2, 0, 1});
}

// ---------------------------------------------------------------- in place

FUNCGEN("add_into_v00 = vmap(add_into)")
FUNCGEN("add_into_v0n = vmap(add_into, in_dims=(0, None))")
FUNCGEN("add_into_v1m1 = vmap(add_into, in_dims=(1, -1), out_dims=1)")
fg::Tensor add_into(fg::Tensor y, const fg::Tensor& x) {
  y.add_(x);
  return y;
}

FUNCGEN("plus_assign_v00 = vmap(plus_assign)")
FUNCGEN("plus_assign_v0n = vmap(plus_assign, in_dims=(0, None))")
fg::Tensor plus_assign(fg::Tensor y, const fg::Tensor& x) {
  y += x;
  y *= 2;
  y.sub_(x, 0.5);
  y.exp_();
  return y;
}

FUNCGEN("inplace_local_v00 = vmap(inplace_local)")
FUNCGEN("inplace_local_v0n = vmap(inplace_local, in_dims=(0, None))")
FUNCGEN("inplace_local_vn0 = vmap(inplace_local, in_dims=(None, 0))")
fg::Tensor inplace_local(const fg::Tensor& x, const fg::Tensor& y) {
  // The local is batched as soon as any operand is: it is a copy of x (x + 0) and y is added.
  fg::Tensor z = x + y;
  z.mul_(y);
  z += x;
  z.clamp_(-1.0, 1.0);
  return z;
}

FUNCGEN("diag_embed_copy_v0 = vmap(diag_embed_copy)")
FUNCGEN("diag_embed_copy_v1 = vmap(diag_embed_copy, in_dims=1, out_dims=2)")
fg::Tensor diag_embed_copy(const fg::Tensor& v) {
  fg::Tensor result = v.new_zeros({v.size(0), v.size(0)});
  result.diagonal().copy_(v);
  return result;
}

FUNCGEN("zero_fill_v0 = vmap(zero_fill)")
FUNCGEN("zero_fill_v1 = vmap(zero_fill, in_dims=1)")
fg::Tensor zero_fill(const fg::Tensor& x) {
  fg::Tensor z = x.clone();
  z.narrow(0, 0, 1).zero_();
  z.select(0, 1).fill_(3.0);
  z.select(1, 0).copy_(z.select(1, 1));
  return z;
}

FUNCGEN("new_factories_v0 = vmap(new_factories)")
FUNCGEN("new_factories_v1 = vmap(new_factories, in_dims=1, out_dims=1)")
fg::Tensor new_factories(const fg::Tensor& x) {
  // x: [3, 4] logically.
  const fg::Tensor a = x.new_ones({x.size(0), x.size(1)}) + fg::zeros_like(x) + fg::ones_like(x) * 2;
  const fg::Tensor b = x.new_zeros({4}) + fg::zeros({4}, x.options()) + x.new_full({3, 4}, 1.5);
  return a * x + b + fg::full_like(x, 0.25) + fg::ones({3, 1}, x.options());
}

// ---------------------------------------------------------------- linear algebra

FUNCGEN("matmul_fn_v00 = vmap(matmul_fn)")
FUNCGEN("matmul_fn_v0n = vmap(matmul_fn, in_dims=(0, None))")
FUNCGEN("matmul_fn_vn0 = vmap(matmul_fn, in_dims=(None, 0))")
FUNCGEN("matmul_fn_vm1 = vmap(matmul_fn, in_dims=(-1, 0), out_dims=-1)")
FUNCGEN("matmul_fn_vv = vmap(vmap(matmul_fn, in_dims=(0, None)), in_dims=(None, 0))")
fg::Tensor matmul_fn(const fg::Tensor& a, const fg::Tensor& b) { return fg::matmul(a, b); }

FUNCGEN("matmul_method_v00 = vmap(matmul_method)")
fg::Tensor matmul_method(const fg::Tensor& a, const fg::Tensor& b) { return a.matmul(b) * 2; }

FUNCGEN("mm_fn_v00 = vmap(mm_fn)")
FUNCGEN("mm_fn_v0n = vmap(mm_fn, in_dims=(0, None))")
FUNCGEN("mm_fn_vn1 = vmap(mm_fn, in_dims=(None, 1))")
fg::Tensor mm_fn(const fg::Tensor& a, const fg::Tensor& b) { return fg::mm(a, b) + a.mm(b); }

FUNCGEN("mv_fn_v00 = vmap(mv_fn)")
FUNCGEN("mv_fn_v0n = vmap(mv_fn, in_dims=(0, None))")
FUNCGEN("mv_fn_vn0 = vmap(mv_fn, in_dims=(None, 0))")
fg::Tensor mv_fn(const fg::Tensor& a, const fg::Tensor& v) { return fg::mv(a, v) + a.mv(v); }

FUNCGEN("dot_fn_v00 = vmap(dot_fn)")
FUNCGEN("dot_fn_v0n = vmap(dot_fn, in_dims=(0, None))")
FUNCGEN("dot_fn_vv = vmap(vmap(dot_fn, in_dims=(None, 0)), in_dims=(0, None))")
fg::Tensor dot_fn(const fg::Tensor& a, const fg::Tensor& b) { return fg::dot(a, b) + a.dot(b); }

FUNCGEN("outer_fn_v00 = vmap(outer_fn)")
FUNCGEN("outer_fn_vn0 = vmap(outer_fn, in_dims=(None, 0), out_dims=2)")
fg::Tensor outer_fn(const fg::Tensor& a, const fg::Tensor& b) { return fg::outer(a, b) + a.outer(b); }

FUNCGEN("bmm_fn_v00 = vmap(bmm_fn)")
FUNCGEN("bmm_fn_v0n = vmap(bmm_fn, in_dims=(0, None))")
FUNCGEN("bmm_fn_vn1 = vmap(bmm_fn, in_dims=(None, 1))")
fg::Tensor bmm_fn(const fg::Tensor& a, const fg::Tensor& b) { return fg::bmm(a, b) + a.bmm(b); }

FUNCGEN("linear_fn_vx = vmap(linear_fn, in_dims=(0, None, None))")
FUNCGEN("linear_fn_vw = vmap(linear_fn, in_dims=(None, 0, 0))")
FUNCGEN("linear_fn_vall = vmap(linear_fn, in_dims=(1, 0, 0))")
FUNCGEN("linear_fn_vb = vmap(linear_fn, in_dims=(None, None, 0))")
FUNCGEN("linear_fn_vv = vmap(vmap(linear_fn, in_dims=(0, None, None)), in_dims=(None, 0, 0))")
fg::Tensor linear_fn(const fg::Tensor& x, const fg::Tensor& w, const fg::Tensor& b) { return fg::linear(x, w, b); }

// Convolutions: the input batched alone (folded into N), the weight or bias batched (folded into
// the channels and groups), both at two levels, unbatched inputs, "same" padding, transposes.
FUNCGEN("conv_fn_vx = vmap(conv_fn, in_dims=(0, None, None))")
FUNCGEN("conv_fn_vw = vmap(conv_fn, in_dims=(None, 0, None))")
FUNCGEN("conv_fn_vall = vmap(conv_fn, in_dims=(1, 0, 0))")
FUNCGEN("conv_fn_vb = vmap(conv_fn, in_dims=(None, None, 0))")
FUNCGEN("conv_fn_vv = vmap(vmap(conv_fn, in_dims=(0, None, None)), in_dims=(None, 0, 0))")
fg::Tensor conv_fn(const fg::Tensor& x, const fg::Tensor& w, const fg::Tensor& b) {
  return fg::conv2d(x, w, b, {2, 1}, 1, 1, 2).relu() + fg::conv2d(x, w, {}, 1, "same", 2, 2).narrow(-2, 0, 1);
}
FUNCGEN("conv1d_unbatched_vx = vmap(conv1d_unbatched, in_dims=(1, None))")
FUNCGEN("conv1d_unbatched_vw = vmap(conv1d_unbatched, in_dims=(None, 0))")
fg::Tensor conv1d_unbatched(const fg::Tensor& x, const fg::Tensor& w) {
  return fg::conv1d(x, w, std::nullopt, 2).sum() + fg::conv_transpose1d(fg::conv1d(x, w), w);
}
FUNCGEN("conv_transpose_fn_vx = vmap(conv_transpose_fn, in_dims=(0, None))")
FUNCGEN("conv_transpose_fn_vw = vmap(conv_transpose_fn, in_dims=(None, 0))")
FUNCGEN("conv_transpose_fn_vv = vmap(vmap(conv_transpose_fn, in_dims=(None, 0)), in_dims=(0, None))")
fg::Tensor conv_transpose_fn(const fg::Tensor& x, const fg::Tensor& w) {
  return fg::conv_transpose2d(x, w, w.sum({0, 2, 3}), 2, 1, 1);
}

// Normalization, attention and the other layers: weights batched or not, indices batched, two
// levels (fg::vmap's rules in runtime/src/vmap_layers.cpp).
FUNCGEN("norms_vx = vmap(norms, in_dims=(0, None, None))")
FUNCGEN("norms_vw = vmap(norms, in_dims=(None, 0, 0))")
FUNCGEN("norms_vv = vmap(vmap(norms, in_dims=(0, None, None)), in_dims=(None, 0, 0))")
fg::Tensor norms(const fg::Tensor& x, const fg::Tensor& w, const fg::Tensor& b) {
  return fg::layer_norm(x, {4}, w, b) + fg::group_norm(x, 2, w, b) + fg::batch_norm(x, w, b, {}, {}, true) +
         fg::batch_norm(x, {}, b, fg::arange(4, x.options()) * 0.1, fg::arange(4, x.options()) + 1, false) +
         x.var({1}, true, true) + x.std() + fg::layer_norm(x, {4, 4});
}
// Running statistics updated from an unbatched input while the weight is batched: allowed.
FUNCGEN("norm_stats_vw = vmap(norm_stats, in_dims=(None, 0, None, None))")
fg::Tensor norm_stats(const fg::Tensor& x, const fg::Tensor& w, const fg::Tensor& mean, const fg::Tensor& var) {
  return fg::batch_norm(x, w, {}, mean, var, true);
}
FUNCGEN("attention_vq = vmap(attention, in_dims=(0, None, None))")
FUNCGEN("attention_vkv = vmap(attention, in_dims=(None, 0, 0))")
FUNCGEN("attention_vv = vmap(vmap(attention, in_dims=(0, None, None)), in_dims=(None, 0, 0))")
fg::Tensor attention(const fg::Tensor& q, const fg::Tensor& k, const fg::Tensor& v) {
  return fg::scaled_dot_product_attention(q, k, v) +
         fg::scaled_dot_product_attention(q, k, v, fg::arange(5) <= fg::arange(3).unsqueeze(1) + 1) +
         fg::scaled_dot_product_attention(q, q, q.narrow(1, 0, 2), {}, 0.0, true);
}
FUNCGEN("layers_vx = vmap(layers, in_dims=(0, None))")
FUNCGEN("layers_vw = vmap(layers, in_dims=(None, 0))")
FUNCGEN("layers_v00 = vmap(layers, in_dims=(0, 0))")
fg::Tensor layers(const fg::Tensor& x, const fg::Tensor& table) {
  const fg::Tensor rows = fg::embedding(table, fg::arange(3) * 2, 0) + fg::embedding(table, x.argmax(1));
  return (rows * x).triu(1) + x.tril() + x.flip({0}) * 2 + x.roll({1}, {1}) + x.roll(2) +
         x.repeat({1, 2}).narrow(1, 1, 4) + x.masked_fill(x > 0.5, 0.25) + fg::one_hot(fg::arange(3), 4) * table.narrow(0, 0, 3);
}
FUNCGEN("losses_vx = vmap(losses, in_dims=(0, None))")
FUNCGEN("losses_v00 = vmap(losses, in_dims=(0, 0))")
fg::Tensor losses(const fg::Tensor& x, const fg::Tensor& t) {
  return fg::binary_cross_entropy_with_logits(x, t.sigmoid()) +
         fg::binary_cross_entropy_with_logits(x, t.sigmoid(), t.exp(), t.cos() + 2, fg::Reduction::Sum) +
         fg::smooth_l1_loss(x, t, fg::Reduction::Mean, 0.5) + fg::huber_loss(x, t) +
         fg::binary_cross_entropy_with_logits(x, t.sigmoid(), {}, {}, fg::Reduction::None).sum(1).sum();
}
FUNCGEN("pieces_v = vmap(pieces)")
fg::Tensor pieces(const fg::Tensor& x) {
  const std::vector<fg::Tensor> parts = x.split(2);
  const std::vector<fg::Tensor> halves = x.chunk(2, 1);
  const std::vector<fg::Tensor> sized = fg::split(x, {1, 4});
  return parts[0] * halves[1].sum(1).narrow(0, 0, 2).unsqueeze(1) + parts[2] + sized[0];
}

FUNCGEN("linear_nobias_vx = vmap(linear_nobias, in_dims=(0, None))")
FUNCGEN("linear_nobias_vw = vmap(linear_nobias, in_dims=(None, 0))")
fg::Tensor linear_nobias(const fg::Tensor& x, const fg::Tensor& w) { return fg::linear(x, w); }

FUNCGEN("einsum_fn_v00 = vmap(einsum_fn)")
FUNCGEN("einsum_fn_v0n = vmap(einsum_fn, in_dims=(0, None))")
FUNCGEN("einsum_fn_vn1 = vmap(einsum_fn, in_dims=(None, 1))")
FUNCGEN("einsum_fn_vv = vmap(vmap(einsum_fn, in_dims=(0, None)), in_dims=(None, 0))")
fg::Tensor einsum_fn(const fg::Tensor& a, const fg::Tensor& b) {
  // a: [3, 4], b: [4, 5] logically.
  return fg::einsum("ij,jk->ik", {a, b}) + fg::einsum("ij,jk->ki", {a, b}).t() +
         fg::einsum("ij,ij->i", {a, a}).unsqueeze(1) + fg::einsum("ii,jk->jk", {a.narrow(1, 0, 3), b}).sum();
}

// ---------------------------------------------------------------- joining and indexing

FUNCGEN("cat_stack_v00 = vmap(cat_stack)")
FUNCGEN("cat_stack_v0n = vmap(cat_stack, in_dims=(0, None))")
FUNCGEN("cat_stack_vn1 = vmap(cat_stack, in_dims=(None, 1), out_dims=1)")
FUNCGEN("cat_stack_vv = vmap(vmap(cat_stack, in_dims=(0, None)), in_dims=(None, 0))")
fg::Tensor cat_stack(const fg::Tensor& x, const fg::Tensor& y) {
  // x, y: [3, 4] logically.
  const fg::Tensor c = fg::cat({x, y * 2}, 0) + fg::cat({y, x}, 0);         // [6, 4]
  const fg::Tensor d = fg::cat({x, y, x}, -1).narrow(1, 2, 4);              // [3, 4]
  const fg::Tensor s = fg::stack({x, y}) + fg::stack({y, x}, 0);            // [2, 3, 4]
  const fg::Tensor u = fg::stack({x, d}, -1).sum(-1);                       // [3, 4]
  return c.narrow(0, 0, 3) + d + s.sum(0) + u + fg::stack({x, y}, 1).sum(1);
}

FUNCGEN("index_ops_v00 = vmap(index_ops)")
FUNCGEN("index_ops_v0n = vmap(index_ops, in_dims=(0, None))")
FUNCGEN("index_ops_vn0 = vmap(index_ops, in_dims=(None, 0))")
FUNCGEN("index_ops_v1n = vmap(index_ops, in_dims=(1, None), out_dims=1)")
FUNCGEN("index_ops_vv = vmap(vmap(index_ops, in_dims=(0, None)), in_dims=(None, 0))")
fg::Tensor index_ops(const fg::Tensor& x, const fg::Tensor& idx) {
  // x: [5, 4], idx: [3] int64 in [0, 4).
  return x.index_select(0, idx) * 2 + fg::index_select(x, 1, idx).t().narrow(1, 0, 4).narrow(0, 0, 3);
}

FUNCGEN("gather_fn_v00 = vmap(gather_fn)")
FUNCGEN("gather_fn_v0n = vmap(gather_fn, in_dims=(0, None))")
FUNCGEN("gather_fn_vn0 = vmap(gather_fn, in_dims=(None, 0))")
FUNCGEN("gather_fn_vv = vmap(vmap(gather_fn, in_dims=(None, 0)), in_dims=(0, None))")
fg::Tensor gather_fn(const fg::Tensor& x, const fg::Tensor& idx) {
  // x: [3, 4], idx: [3, 2] int64 in [0, 3).
  return fg::gather(x, 1, idx) + x.gather(0, idx) * 2;
}

// ---------------------------------------------------------------- losses and a model

FUNCGEN("mse_fn_v00 = vmap(mse_fn)")
FUNCGEN("mse_fn_v0n = vmap(mse_fn, in_dims=(0, None))")
FUNCGEN("mse_fn_vn1 = vmap(mse_fn, in_dims=(None, 1))")
fg::Tensor mse_fn(const fg::Tensor& x, const fg::Tensor& y) {
  return fg::mse_loss(x, y) + fg::mse_loss(x, y, fg::Reduction::Sum) + fg::mse_loss(y, x, fg::Reduction::None).sum();
}

FUNCGEN("nll_fn_v00 = vmap(nll_fn)")
FUNCGEN("nll_fn_v0n = vmap(nll_fn, in_dims=(0, None))")
FUNCGEN("nll_fn_vn0 = vmap(nll_fn, in_dims=(None, 0))")
FUNCGEN("nll_fn_vv = vmap(vmap(nll_fn, in_dims=(0, None)), in_dims=(None, 0))")
fg::Tensor nll_fn(const fg::Tensor& logits, const fg::Tensor& target) {
  const fg::Tensor logp = fg::log_softmax(logits, 1);
  return fg::nll_loss(logp, target) + fg::nll_loss(logp, target, {}, fg::Reduction::Sum) +
         fg::nll_loss(logp, target, {}, fg::Reduction::None).sum();
}

FUNCGEN("cross_entropy_fn_v00 = vmap(cross_entropy_fn)")
FUNCGEN("cross_entropy_fn_v0n = vmap(cross_entropy_fn, in_dims=(0, None))")
FUNCGEN("cross_entropy_fn_vn0 = vmap(cross_entropy_fn, in_dims=(None, 0))")
fg::Tensor cross_entropy_fn(const fg::Tensor& logits, const fg::Tensor& target) {
  return fg::cross_entropy(logits, target) + fg::cross_entropy(logits, target, {}, fg::Reduction::Sum) * 0.5;
}

// Per-example losses (the data mapped) and a model ensemble (the parameters mapped).
FUNCGEN("mlp_loss_per_example = vmap(mlp_loss, in_dims=(None, None, None, None, 0, 0))")
FUNCGEN("mlp_loss_ensemble = vmap(mlp_loss, in_dims=(0, 0, 0, 0, None, None))")
FUNCGEN("mlp_loss_ensemble_per_example = vmap(vmap(mlp_loss, in_dims=(None, None, None, None, 0, 0)), in_dims=(0, 0, 0, 0, None, None))")
FUNCGEN("mlp_loss_chunked = vmap(mlp_loss, in_dims=(None, None, None, None, 0, 0), chunk_size=3)")
fg::Tensor mlp_loss(const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2, const fg::Tensor& b2,
                    const fg::Tensor& x, const fg::Tensor& target) {
  const fg::Tensor h = fg::relu(fg::linear(x, w1, b1));
  const fg::Tensor logits = fg::linear(h, w2, b2);
  return fg::nll_loss(fg::log_softmax(logits, 1), target);
}

// ---------------------------------------------------------------- user functions

static fg::Tensor square(const fg::Tensor& a) { return a * a; }

fg::Tensor helper_mix(const fg::Tensor& a, const fg::Tensor& b) { return square(a) + b.sin() * a.sum(); }

FUNCGEN("calls_helpers_v00 = vmap(calls_helpers)")
FUNCGEN("calls_helpers_v0n = vmap(calls_helpers, in_dims=(0, None))")
FUNCGEN("calls_helpers_vv = vmap(vmap(calls_helpers, in_dims=(None, 0)), in_dims=(0, None))")
fg::Tensor calls_helpers(const fg::Tensor& x, const fg::Tensor& y) {
  // helper_mix is batched three ways (x and y, x only, y only); square(y) is left alone when y is not batched.
  return helper_mix(x, y) + helper_mix(y, x) + square(y) + helper_mix(x, x) + helper_mix(y, y);
}

// ---------------------------------------------------------------- control flow on shapes

FUNCGEN("custom_dot_v0 = vmap(custom_dot)")
FUNCGEN("custom_dot_v1 = vmap(custom_dot, in_dims=1)")
fg::Tensor custom_dot(const fg::Tensor& x) {
  if (x.dim() == 1) return fg::dot(x, x);
  return (x * x).sum();
}

FUNCGEN("loop_accumulate_v0 = vmap(loop_accumulate, in_dims=(0, None))")
FUNCGEN("loop_accumulate_v1 = vmap(loop_accumulate, in_dims=(1, None), out_dims=1)")
fg::Tensor loop_accumulate(const fg::Tensor& x, int n) {
  fg::Tensor acc = fg::zeros_like(x.select(0, 0));
  for (int64_t i = 0; i < x.size(0); ++i) acc = acc + x.select(0, i) * static_cast<double>(i + 1);
  for (int k = 0; k < n; ++k) acc = acc.tanh() + x[k];
  return acc;
}

FUNCGEN("factory_accumulator_v0 = vmap(factory_accumulator)")
FUNCGEN("factory_accumulator_v1 = vmap(factory_accumulator, in_dims=1)")
fg::Tensor factory_accumulator(const fg::Tensor& x) {
  // The accumulator starts as an unbatched factory tensor and becomes batched in the loop.
  fg::Tensor acc = fg::zeros({x.size(1)}, x.options());
  for (int64_t i = 0; i < x.size(0); ++i) acc = acc + x[i];
  return acc;
}

// ---------------------------------------------------------------- tuples and scalars

FUNCGEN("pair_fn_v00 = vmap(pair_fn)")
FUNCGEN("pair_fn_o01 = vmap(pair_fn, out_dims=(0, 1))")
FUNCGEN("pair_fn_om10 = vmap(pair_fn, in_dims=(1, 0), out_dims=(-1, 0))")
FUNCGEN("pair_fn_v0n = vmap(pair_fn, in_dims=(0, None), out_dims=(0, None))")
FUNCGEN("pair_fn_v0n_o00 = vmap(pair_fn, in_dims=(0, None), out_dims=0)")
FUNCGEN("pair_fn_vv = vmap(vmap(pair_fn, in_dims=(0, None), out_dims=(0, None)), in_dims=(None, 0), out_dims=(1, 0))")
FUNCGEN("pair_fn_c2 = vmap(pair_fn, out_dims=(1, 0), chunk_size=2)")
FUNCGEN("pair_fn_again = vmap(pair_fn_o01, in_dims=1)")
FUNCGEN("pair_fn_outer_c2 = vmap(vmap(pair_fn, in_dims=(0, None), out_dims=(0, None)), in_dims=(None, 0), chunk_size=2)")
FUNCGEN("pair_fn_v0n_c2 = vmap(pair_fn, in_dims=(0, None), out_dims=(0, None), chunk_size=2)")
std::tuple<fg::Tensor, fg::Tensor> pair_fn(const fg::Tensor& x, const fg::Tensor& y) {
  // x, y: [3, 4] logically; the second output depends on y only.
  return {x * y + x.sum(0), y.cos()};
}

FUNCGEN("scale_select_v0 = vmap(scale_select, in_dims=(0, None, None))")
FUNCGEN("scale_select_all0 = vmap(scale_select)")
FUNCGEN("scale_select_v1 = vmap(scale_select, in_dims=(1, None, None), out_dims=-1)")
fg::Tensor scale_select(const fg::Tensor& x, double a, int k) { return x.select(0, k) * a + k; }

// ---------------------------------------------------------------- more ops and patterns

FUNCGEN("dims_from_params_v0 = vmap(dims_from_params, in_dims=(0, None, None))")
FUNCGEN("dims_from_params_v1 = vmap(dims_from_params, in_dims=(1, None, None), out_dims=-1)")
fg::Tensor dims_from_params(const fg::Tensor& x, int d, int64_t e) {
  // Dims that are only known at run time: shifted past the batch dims by fg::vmap::dim(s).
  return x.sum({d}, true) + x.softmax(d) + x.transpose(d, e).transpose(d, e) + x.logsumexp({e}, true) +
         fg::zeros(x.sizes(), x.options()) + x.new_zeros(x.sizes()) + x.narrow(d, 0, x.size(d)) * x.size(-1);
}

FUNCGEN("misc_ops_v0 = vmap(misc_ops)")
FUNCGEN("misc_ops_v1 = vmap(misc_ops, in_dims=1, out_dims=1)")
fg::Tensor misc_ops(const fg::Tensor& x) {
  // x: [3, 4] logically.
  const fg::Tensor a = -x + x / 2 - (-x.sum()) + x.squeeze(-2).flatten(-2, -1).view({3, 4}) + x.movedim(-1, 0).t();
  const fg::Tensor b = fg::diag_embed(x).diagonal(0, -2, -1) + x.to(fg::kDouble).contiguous() + fg::full({4}, 2.0, x.options());
  const fg::Tensor c = x.dim() > 1 ? x.sum(0) : x;
  fg::Tensor d = x.clone();
  int64_t k = 0;
  while (k < x.size(0)) {
    d = d + x.select(0, k);
    ++k;
  }
  return a + b + c + d + x.max() + fg::min(x) + x.norm(1) + x.mean({0}, false, fg::kDouble);
}

FUNCGEN("scatter_fn_v00 = vmap(scatter_fn)")
FUNCGEN("scatter_fn_v0nn = vmap(scatter_fn, in_dims=(0, None, None))")
FUNCGEN("scatter_fn_vn0n = vmap(scatter_fn, in_dims=(None, 0, None))")
FUNCGEN("scatter_fn_vnn0 = vmap(scatter_fn, in_dims=(None, None, 0))")
FUNCGEN("scatter_fn_vv = vmap(vmap(scatter_fn, in_dims=(0, None, None)), in_dims=(None, 0, 0))")
fg::Tensor scatter_fn(const fg::Tensor& x, const fg::Tensor& idx, const fg::Tensor& src) {
  // x: [3, 4], idx: [3, 2] int64 in [0, 4), src: [3, 2].
  return x.scatter_add(1, idx, src) + fg::scatter_add(x, 1, idx, src * 2);
}

FUNCGEN("fallback_fn_v00 = vmap(fallback_fn)")
FUNCGEN("fallback_fn_v0n = vmap(fallback_fn, in_dims=(0, None))")
fg::Tensor fallback_fn(const fg::Tensor& x, const fg::Tensor& y) {
  // expand_as and reshape_as have no batching rule: they run once per example.
  return x.expand_as(y) + y.reshape_as(y.t()).t();  // NOLINT(funcgen-vmap-fallback)
}

// Calls of functions whose bodies funcgen cannot see run once per example, whatever they return.
FUNCGEN("uses_unseen_v0 = vmap(uses_unseen)")
FUNCGEN("uses_unseen_v1 = vmap(uses_unseen, in_dims=1, out_dims=1)")
fg::Tensor uses_unseen(const fg::Tensor& x) {
  auto [a, b] = unseen_split(x);  // NOLINT(funcgen-vmap-fallback)
  unseen_record(a);               // NOLINT(funcgen-vmap-fallback)
  return a * b + std::get<1>(unseen_split(x * 2));  // NOLINT(funcgen-vmap-fallback)
}

FUNCGEN("const_out_v0 = vmap(const_out)")
FUNCGEN("const_out_v0_none = vmap(const_out, out_dims=(0, None))")
std::tuple<fg::Tensor, fg::Tensor> const_out(const fg::Tensor& x) {
  // The second output depends on no input: out_dims=0 repeats it along the batch.
  return std::make_tuple(x, fg::ones({2}, x.options()));
}

FUNCGEN("branch_return_v0n = vmap(branch_return, in_dims=(0, None, None))")
fg::Tensor branch_return(const fg::Tensor& x, const fg::Tensor& y, int n) {
  // One branch returns a batched value, the other one that is not batched.
  if (n > 0) return x + y;
  return y.sin();
}

FUNCGEN("branch_assign_v0n = vmap(branch_assign, in_dims=(0, None, None))")
fg::Tensor branch_assign(const fg::Tensor& x, const fg::Tensor& y, int n) {
  // A batched local assigned a value that is not batched.
  fg::Tensor r = x * 2;
  if (n > 0) r = y.cos();
  return r;
}

static std::tuple<fg::Tensor, fg::Tensor> split_scale(const fg::Tensor& a, double s) {
  return std::make_tuple(a * s, a.sum(0));
}

static void add_bias(fg::Tensor& y, const fg::Tensor& b) { y.add_(b); }

FUNCGEN("tuple_helper_v0 = vmap(tuple_helper)")
FUNCGEN("tuple_helper_v0n = vmap(tuple_helper, in_dims=(0, None))")
FUNCGEN("tuple_helper_vn0 = vmap(tuple_helper, in_dims=(None, 0))")
fg::Tensor tuple_helper(const fg::Tensor& x, const fg::Tensor& b) {
  auto [p, q] = split_scale(x, 2.0);
  fg::Tensor r = p * q + std::get<0>(split_scale(b, -1.0));
  add_bias(r, b);
  return r;
}


static std::tuple<fg::Tensor, fg::Tensor> scaled_and_plain(const fg::Tensor& a, const fg::Tensor& b) {
  return {a * 2, b};
}

FUNCGEN("mixed_tuples_v0n = vmap(mixed_tuples, in_dims=(0, None))")
FUNCGEN("mixed_tuples_vn0 = vmap(mixed_tuples, in_dims=(None, 0))")
std::tuple<fg::Tensor, fg::Tensor> mixed_tuples(const fg::Tensor& x, const fg::Tensor& y) {
  // Tuples whose elements are batched differently: from a helper, and as a local.
  auto [p, q] = scaled_and_plain(x, y);
  const auto pair = std::make_tuple(x.sum(0), y);
  return std::make_tuple(p + q.sum(0) + std::get<1>(scaled_and_plain(x, y)).sum(0), std::get<1>(pair).sum(0) * 3);
}

FUNCGEN("reassign_param_vn0 = vmap(reassign_param, in_dims=(None, 0))")
FUNCGEN("reassign_param_v0n = vmap(reassign_param, in_dims=(0, None))")
fg::Tensor reassign_param(fg::Tensor y, const fg::Tensor& x) {
  // y is read before and after it is given a batched value.
  const fg::Tensor before = y.sum(0);
  y = y * 2 + x;
  return y + before;
}

FUNCGEN("choices_v0n = vmap(choices, in_dims=(0, None, None, None))")
FUNCGEN("choices_vn0 = vmap(choices, in_dims=(None, 0, None, None))")
fg::Tensor choices(const fg::Tensor& x, const fg::Tensor& y, const fg::Tensor& w, int n) {
  // Values chosen by scalars: one side batched, the other not.
  const fg::Tensor a = (n > 0 ? x * 2 : y.sin()) + 1;
  fg::Tensor b;
  if (n > 1) {
    b = x.cos();
  } else {
    b = y;
  }
  fg::Tensor c = x;
  switch (n) {
    case 0:
      c = y * 3;
      break;
    case 1:
      c = x - y;
      break;
    default:
      break;
  }
  int k = 0;
  do {
    c = c + a;
    ++k;
  } while (k < n);
  // Reading a value of a tensor that is not batched is allowed.
  const double scale = w.sum().item<double>();
  return a + b + c * scale;
}

// ---------------------------------------------------------------- element-wise runs around writes

// What the fused runs (transforms/fuse.cpp) read is what the user's code reads where it reads it:
// an operand evaluated after an in-place write, a copy of a handle whose variable gets another
// one through a reference, a buffer an out= op writes, a local assigned after its last read.
FUNCGEN("write_then_read_v0 = vmap(write_then_read)")
fg::Tensor write_then_read(const fg::Tensor& x) {
  fg::Tensor y = x * 1;
  const fg::Tensor z = y.mul_(2).add(y * 3 + 1);  // y * 3 + 1 reads y doubled
  std::vector<fg::Tensor> v = {y.mul_(2), y * 3 + 1};
  return z + v[0] * v[1];
}

FUNCGEN("copy_through_reference_v0 = vmap(copy_through_reference)")
fg::Tensor copy_through_reference(const fg::Tensor& x, const fg::Tensor& y) {
  fg::Tensor a = x * 1;
  fg::Tensor& r = a;
  const fg::Tensor b = r;  // the old handle
  a = y * 1;               // r sees the new one
  return b.sin() * 2 + r.cos() * 3;
}

FUNCGEN("out_variant_write_v0 = vmap(out_variant_write, in_dims=(0, None))")
fg::Tensor out_variant_write(const fg::Tensor& x, const fg::Tensor& w) {
  fg::Tensor buf = w.clone();
  const fg::Tensor a = buf.sin() * 2;
  const fg::Tensor& r = fg::add_out(buf, w, w);  // writes buf after a read it
  const fg::Tensor b = buf.sin() * 2;              // the same expression as a, on the new buf
  return x * a + r + b;
}

FUNCGEN("reassigned_unread_v0 = vmap(reassigned_unread)")
fg::Tensor reassigned_unread(const fg::Tensor& x) {
  fg::Tensor t = x.sin() * 2;
  const fg::Tensor u = x.cos() + 1;
  t = x.exp();
  return u;
}

// ---------------------------------------------------------------- randomness

FUNCGEN("add_noise_same = vmap(add_noise, randomness='same')")
FUNCGEN("add_noise_different = vmap(add_noise, randomness='different')")
FUNCGEN("add_noise_vv_different = vmap(vmap(add_noise, randomness='different'), randomness='different')")
FUNCGEN("add_noise_different_c2 = vmap(add_noise, randomness='different', chunk_size=2)")
FUNCGEN("add_noise_same_c2 = vmap(add_noise, randomness='same', chunk_size=2)")
fg::Tensor add_noise(const fg::Tensor& x) { return x + fg::randn_like(x); }

FUNCGEN("add_fresh_noise_same = vmap(add_fresh_noise, randomness='same')")
FUNCGEN("add_fresh_noise_different = vmap(add_fresh_noise, randomness='different')")
fg::Tensor add_fresh_noise(const fg::Tensor& x) { return x + fg::randn({x.size(0)}, x.options()) + fg::rand_like(x); }

FUNCGEN("dropout_fn_same = vmap(dropout_fn, randomness='same')")
FUNCGEN("dropout_fn_different = vmap(dropout_fn, randomness='different')")
fg::Tensor dropout_fn(const fg::Tensor& x) { return fg::dropout(x, 0.5, true); }
// dropout in evaluation (train a constant false) is the identity: vmap takes it with the default
// randomness='error', as torch.func does
constexpr bool kEvaluating = false;
FUNCGEN("eval_dropout_v = vmap(eval_dropout)")
fg::Tensor eval_dropout(const fg::Tensor& x) {
  return fg::dropout(x, 0.5, false) * fg::dropout(x.sin(), 0.2, kEvaluating) + fg::feature_dropout(x, 0.1, false);
}

FUNCGEN("bernoulli_fn_same = vmap(bernoulli_fn, randomness='same')")
FUNCGEN("bernoulli_fn_different = vmap(bernoulli_fn, randomness='different')")
fg::Tensor bernoulli_fn(const fg::Tensor& p) { return fg::bernoulli(p); }

}  // namespace vt
