// The op database of the AD tests (as functorch's test_ops.py): one function per differentiable op
// (and per interesting case of one: broadcasting, 1-D matmul, reductions with and without dim),
// each with the same matrix of transforms. test_opdb.cpp checks every entry against central finite
// differences in float64 and the transforms against each other.
#include <funcgen/funcgen.h>

namespace opdb {

// Every op gets: jvp and vjp (against finite differences), jacrev and jacfwd (against each other),
// vmap(jvp) (against the loop of jvp), the vjp as vmap(grad(<f, ct>)) (against the loop of the
// pullback), and the hessian of a scalar function of it (symmetric, against finite differences
// of its grad, equal to jacrev(jacrev)).
#define FG_OP(name, expression)                                                                              \
  FUNCGEN(#name "_jvp = jvp(f_" #name ")")                                                                  \
  FUNCGEN(#name "_vjp = vjp(f_" #name ")")                                                                  \
  FUNCGEN(#name "_jacrev = jacrev(f_" #name ", argnums=(0, 1))")                                            \
  FUNCGEN(#name "_jacfwd = jacfwd(f_" #name ", argnums=(0, 1))")                                            \
  FUNCGEN(#name "_batched_jvp = vmap(jvp(f_" #name "))")                                                    \
  fg::Tensor f_##name(const fg::Tensor& x, const fg::Tensor& y) { return expression; }                      \
  FUNCGEN(#name "_batched_vjp = vmap(grad(dot_" #name ", argnums=(0, 1)), in_dims=(None, None, 0))")       \
  fg::Tensor dot_##name(const fg::Tensor& x, const fg::Tensor& y, const fg::Tensor& ct) {                   \
    return (f_##name(x, y) * ct).sum();                                                                     \
  }                                                                                                         \
  FUNCGEN(#name "_hessian = hessian(scalar_" #name ")")                                                     \
  FUNCGEN(#name "_jacrev_jacrev = jacrev(jacrev(scalar_" #name "))")                                        \
  FUNCGEN(#name "_scalar_grad = grad(scalar_" #name ")")                                                    \
  fg::Tensor scalar_##name(const fg::Tensor& x, const fg::Tensor& y) { return (f_##name(x, y).sin() * 2).sum(); }

// element-wise, with broadcasting where the op has it
FG_OP(add, x + y)
FG_OP(add_alpha, fg::add(x, y, 0.5))
FG_OP(sub, x - y * 3)
FG_OP(rsub, 2 - x + y)
FG_OP(mul, x * y)
FG_OP(div, x / (y * y + 1))
FG_OP(rdiv, 1.5 / (x * x + 1) + y)
FG_OP(pow_scalar, (x * x + 0.5).pow(1.5) + y)
FG_OP(pow_tensor, (x * x + 0.5).pow(y))
FG_OP(neg, -x + y)
FG_OP(abs, x.abs() * y)
FG_OP(exp, x.exp() + y)
FG_OP(log, (x * x + 1).log() * y)
FG_OP(log1p, (x * x).log1p() + y)
FG_OP(expm1, (x * 0.5).expm1() * y + fg::expm1(y))
FG_OP(sqrt, (x * x + 0.5).sqrt() + y)
FG_OP(rsqrt, (x * x + 0.5).rsqrt() * y)
FG_OP(sin, x.sin() * y)
FG_OP(cos, x.cos() + y)
FG_OP(tan, (x * 0.5).tan() + y)
FG_OP(tanh, x.tanh() * y)
FG_OP(sigmoid, x.sigmoid() + y)
FG_OP(relu, x.relu() * y)
FG_OP(erf, x.erf() * y)
FG_OP(silu, fg::silu(x) + y)
FG_OP(log_sigmoid, fg::log_sigmoid(x * 2) * y + fg::logsigmoid(y))
FG_OP(leaky_relu, fg::leaky_relu(x, 0.2) * y + fg::leaky_relu(y))
FG_OP(elu, fg::elu(x * 2, 0.7) + y)
FG_OP(softplus, fg::softplus(x * 3, 2.0, 4.0) * y + fg::softplus(y))
FG_OP(hardtanh, fg::hardtanh(x * 3, -0.6, 0.9) + y)
FG_OP(gelu, fg::gelu(x * 2) * y + fg::gelu(y, "tanh"))
FG_OP(maximum, fg::maximum(x, y))
FG_OP(minimum, fg::minimum(x, y * 2))
FG_OP(clamp, x.clamp(-0.3, 0.4) + y)
FG_OP(clamp_min, x.clamp_min(-0.2) * y)
FG_OP(clamp_max, x.clamp_max(0.3) + y)
FG_OP(where, fg::where(x > y, x * 2, y.sin()))
// reductions and normalisations
FG_OP(sum_all, (x * y).sum())
FG_OP(sum_dim, (x * y).sum({1}))
FG_OP(sum_keepdim, (x * y).sum({0}, true))
FG_OP(mean_all, (x * y).mean())
FG_OP(mean_dim, (x + y).mean({-1}, true))
FG_OP(logsumexp, (x * y).logsumexp({1}))
FG_OP(softmax, (x + y).softmax(1))
FG_OP(log_softmax, (x * y).log_softmax(0))
// max/min reductions (random inputs have no ties) and norms
FG_OP(amax_dim, (x * y).amax({1}))
FG_OP(amax_keepdim, (x + y).amax({0}, true))
FG_OP(amax_all, fg::amax(x * y))
FG_OP(amin_dims, (x - y).amin({0, -1}, true))
FG_OP(amin_dim, fg::amin(x * y, {-1}))
FG_OP(max_all, (x * y).max())
FG_OP(max_dim, std::get<0>((x * y).max(1)))
FG_OP(min_dim_keepdim, std::get<0>(fg::min(x + y, 0, true)) * 2)
FG_OP(min_all, fg::min(x + y))
FG_OP(max_binary, fg::max(x, y))
FG_OP(min_binary, fg::min(x, y * 2))
FG_OP(norm_all, (x * y).norm())
FG_OP(norm_dim, (x + y).norm(2, {1}))
FG_OP(norm_p3_keepdim, fg::norm(x * y, 3, {0}, true))
FG_OP(norm_p1, (x - y).norm(1, {-1}))
FG_OP(norm_p15, (x * y).norm(1.5))
// linear algebra
FG_OP(matmul, x.matmul(y))
FG_OP(matmul_vec, x.matmul(y.select(1, 0)))
FG_OP(vec_matmul, x.select(0, 0).matmul(y))
FG_OP(mm, x.mm(y.t()))
FG_OP(mv, x.mv(y.select(0, 1)))
FG_OP(dot, x.select(0, 0).dot(y.select(0, 2)))
FG_OP(outer, fg::outer(x.select(1, 0), y.select(0, 1)))
FG_OP(linear, fg::linear(x, y, y.select(1, 0)))
FG_OP(linear_no_bias, fg::linear(x, y, {}))  // {} for the optional bias: an undefined tensor, a constant
FG_OP(bmm, x.bmm(y))
FG_OP(bmm_free, fg::bmm(x * 2, y.sin()))
FG_OP(einsum_matmul, fg::einsum("ij,jk->ik", {x, y}))
FG_OP(einsum_batched, fg::einsum("bij,bjk->bki", {x, y.sin()}))
FG_OP(einsum_summed_index, fg::einsum("ij,kl->ik", {x, y}))  // j and l are summed over in one operand only
FG_OP(einsum_ellipsis, fg::einsum("...ij,jk->...ik", {x, y}))
FG_OP(einsum_ellipsis_broadcast, fg::einsum("...ij,...jk->...ki", {x.exp(), y}))  // y's '...' is empty
FG_OP(einsum_implicit_ellipsis, fg::einsum("b...,bk", {x, y}))
FG_OP(einsum_ellipsis_summed, fg::einsum("...ij,jk->ik", {x, y}))  // x's '...' dims summed away
FG_OP(einsum_ellipsis_dot, fg::einsum("...i,...i->i", {x, y.exp()}))  // y's '...' broadcast; both summed away
FG_OP(einsum_ellipsis_own_index, fg::einsum("...ij->...i", {x}) * y)  // j only in x
FG_OP(einsum_implicit_three, fg::einsum("ij,jk,j", {x, y, x.sum({0})}))
FG_OP(einsum_diagonal, fg::einsum("ii->i", {x}) * y)  // x's gradient lies on its diagonal
FG_OP(einsum_trace_of_blocks, fg::einsum("iij,jk->k", {x, y.exp()}))  // a repeated index summed over
// shapes and views
FG_OP(t, x.t() * y.t())
FG_OP(transpose, x.transpose(0, 1) + y.t())
FG_OP(unsqueeze, x.unsqueeze(1) * y.unsqueeze(0))
FG_OP(squeeze, x.unsqueeze(0).squeeze(0) + y)
FG_OP(reshape, x.reshape({-1}) * y.reshape({-1}))
FG_OP(view, x.view({-1}) + y.flatten())
FG_OP(expand, x.select(1, 0).unsqueeze(1).expand({3, 4}) * y)
FG_OP(clone, x.clone() * y.contiguous())
FG_OP(gather, x.gather(1, fg::tensor(std::vector<int64_t>{2, 0, 1, 3, 3, 0}).reshape({3, 2})) * 2 + y.select(1, 0).unsqueeze(1))
FG_OP(scatter_add, x.scatter_add(1, fg::tensor(std::vector<int64_t>{0, 0, 3, 1, 2, 2}).reshape({3, 2}), y.select(1, 0).unsqueeze(1).expand({3, 2})))
FG_OP(permute, x.permute({2, 0, 1}) * y)
FG_OP(permute_negative, fg::permute(x, {-1, 0, -2}) + y.sin())
FG_OP(movedim, x.movedim(0, 2) * y)
FG_OP(movedim_negative, fg::movedim(x, -1, 0) + y.sin())
FG_OP(broadcast_to, fg::broadcast_to(x, {2, 3, 4}) * y)
FG_OP(slice, x.slice(1, 1, 3) * y.slice(1, 0, 2))
FG_OP(slice_step, x.slice(1, 0, std::nullopt, 2) * y.slice(1, 1, std::nullopt, 2))
FG_OP(slice_default_end, x.slice(0, 1) * fg::slice(y, 0, -2))
FG_OP(narrow, x.narrow(1, 1, 2) + y.narrow(1, -3, 2) * x.narrow(0, 0, 3).narrow(1, 2, 2))
FG_OP(diagonal, x.diagonal() * y.diagonal(1))
FG_OP(diagonal_dims, x.diagonal(-1, 2, 1) * y.diagonal(0, -1, -2))
FG_OP(diag_embed, fg::diag_embed(x) * y.unsqueeze(1))
FG_OP(diag_embed_offset, fg::diag_embed(x.select(0, 0), 1) + fg::diag_embed(y.select(0, 1) * x.select(0, 2), -1, 1, 0))
FG_OP(index_select, x.index_select(1, fg::tensor(std::vector<int64_t>{2, 0, 2})) * y.select(1, 0).unsqueeze(1))
FG_OP(index_select_dim0, fg::index_select(x, 0, fg::tensor(std::vector<int64_t>{1, 1, 0, 2})) + y.index_select(-1, fg::tensor(std::vector<int64_t>{3, 1, 0, 2})))
// losses
FG_OP(mse_loss, fg::mse_loss(x, y))
FG_OP(mse_loss_sum, fg::mse_loss(x.sin(), y, fg::Reduction::Sum))
FG_OP(mse_loss_none, fg::mse_loss(x, y * y, fg::Reduction::None))
static fg::Tensor targets(std::vector<int64_t> classes) { return fg::tensor(classes); }
static fg::Tensor class_weight() { return fg::tensor({0.5, 2.0, 1.0, 1.5}, fg::kDouble); }
FG_OP(nll_loss, fg::nll_loss((x * y).log_softmax(1), targets({2, 0, 3})))
FG_OP(nll_loss_weight_sum, fg::nll_loss(x * y, targets({1, 3, 1}), class_weight(), fg::Reduction::Sum))
FG_OP(nll_loss_weight_mean_ignore, fg::nll_loss(x * y + x, targets({1, 3, 2}), class_weight(), fg::Reduction::Mean, 3))
FG_OP(nll_loss_none_ignore, fg::nll_loss(x + y.sin(), targets({1, -100, 3}), std::nullopt, fg::Reduction::None))
FG_OP(nll_loss_1d, fg::nll_loss(x.select(0, 1) * y.select(0, 2), targets({2}).reshape({})))
FG_OP(nll_loss_kdim, fg::nll_loss(x * y, targets({0, 2, 1, 1, 2, 0, 0, 1}).reshape({2, 4})))
FG_OP(cross_entropy, fg::cross_entropy(x * y, targets({2, 0, 3})))
FG_OP(cross_entropy_weight_sum, fg::cross_entropy(x + y, targets({3, 3, 0}), class_weight(), fg::Reduction::Sum))
FG_OP(cross_entropy_no_weight, fg::cross_entropy(x * y, targets({1, 2, 1}), {}, fg::Reduction::Sum))
FG_OP(cross_entropy_none_ignore, fg::cross_entropy(x * y, targets({1, 2, 1}), std::nullopt, fg::Reduction::None, 2))
FG_OP(cross_entropy_1d, fg::cross_entropy(x.select(0, 2) + y.select(0, 0), targets({1}).reshape({})))
FG_OP(cross_entropy_kdim, fg::cross_entropy(x * y, targets({0, 2, 1, 1, 2, 0, 0, 1}).reshape({2, 4})))

// convolutions: bias, stride, padding ("same" with an even kernel: uneven), dilation, groups,
// unbatched inputs; the weight is y (the bias a sum of it), so both are differentiated
FG_OP(conv2d, fg::conv2d(x, y, y.sum({1, 2, 3}), 1, 1))
FG_OP(conv2d_strided_groups, fg::conv2d(x, y, {}, {2, 1}, {1, 0}, 1, 2))
FG_OP(conv2d_same_dilated, fg::conv2d(x, y, std::nullopt, 1, "same", 2))
FG_OP(conv1d, fg::conv1d(x, y, y.sum({1, 2}), 2, 1))
FG_OP(conv1d_unbatched, fg::conv1d(x.select(0, 1), y, {}, 1, "valid"))
FG_OP(conv_transpose2d, fg::conv_transpose2d(x, y, y.sum({0, 2, 3}), 2, 1, 1))
FG_OP(conv_transpose1d_groups, fg::conv_transpose1d(x, y, {}, 1, 0, 0, 2))
// pooling (x * y keeps the maxima apart; y's random values break ties)
FG_OP(max_pool2d, fg::max_pool2d(x * y, 2) + fg::max_pool2d(x + y, {3, 2}, {1, 2}, 1, 1, true).narrow(-2, 0, 1).narrow(-1, 0, 1))
FG_OP(max_pool1d, fg::max_pool1d(x * y, 3, 2, 1, 2, true))
FG_OP(avg_pool2d, fg::avg_pool2d(x * y, 2) + fg::avg_pool2d(x, 3, 2, 1, true, false).narrow(-1, 0, 1).narrow(-2, 0, 1) + fg::avg_pool2d(y, 2, 1, 0, false, true, 3).narrow(-1, 0, 1).narrow(-2, 0, 1))
FG_OP(adaptive_avg_pool2d, fg::adaptive_avg_pool2d(x * y, {3, 2}) + fg::adaptive_avg_pool2d(x, 1))
// Statistics, normalization, attention, embedding, masks and rearrangements, and losses: the ops
// AD differentiates as decompositions (FG_DECOMPOSE) or by their own rules.
FG_OP(var, fg::var(x * y, {1}) + x.var({0}, false, true).sum() + y.var())
FG_OP(std, (x * y + 1).std({0, 1}, true, true) * x + y.std(false))
FG_OP(layer_norm, fg::layer_norm(x, {3, 4}, y, y * 0.5) + fg::layer_norm(x * y, {4}))
FG_OP(group_norm, fg::group_norm(x, 2, y, y.sin()) + fg::group_norm(x * 2, 4))
FG_OP(batch_norm, fg::batch_norm(x, y, y.cos(), {}, {}, true) + fg::batch_norm(x, {}, y, fg::arange(2, x.options()) * 0.3, fg::arange(2, x.options()) + 1, false))
FG_OP(attention, fg::scaled_dot_product_attention(x, y, y * 0.5) +
                     fg::scaled_dot_product_attention(x, x.sin(), x, {}, 0.0, true) +
                     fg::scaled_dot_product_attention(x.cos(), x, x, {}, 0.0, 0) +  // (a flag written 0)
                     fg::scaled_dot_product_attention(x, y, y.cos(), fg::arange(5) <= fg::arange(3).unsqueeze(1) + 1,
                                                      0.0, false, 0.7) +
                     fg::scaled_dot_product_attention(x, y, y, y.select(-1, 0).unsqueeze(-2) * 0.3))  // a float mask, broadcast
FG_OP(embedding, fg::embedding(x, fg::arange(4).reshape({2, 2})) * y + fg::embedding(x * 2, fg::arange(3) * 2, 1).sum(0))
FG_OP(masked_fill, (x * y).masked_fill(fg::arange(3).unsqueeze(1) > fg::arange(4) - 2, 1.5) + x.masked_fill(fg::arange(4) > 1, -2))
FG_OP(triangles, (x * y).triu(1) + x.tril(-1) * 2 + fg::triu(y))
FG_OP(flip_roll, x.flip({0, 2}) * y + x.roll({1, -2}, {1, 2}) + x.roll(3))
FG_OP(repeat, x.repeat({2, 1, 2}) * y)
// pieces of different sizes, indexed where they are made (lowered to fg::ad::split_piece / chunk_piece)
FG_OP(split_chunk, x.chunk(2, 0)[1] * y.split(3, -1)[1] + fg::chunk(x, 3, -1)[1].sum(1, true) * fg::split(y, 2)[1].sum(0) +
                       x.split({2, 1}, 0)[0].sum(0) * fg::split(y, {1, 3}, 1)[1].sum(1, true))
FG_OP(one_hot, x * fg::one_hot(fg::arange(3), 4) + y)
FG_OP(bce_with_logits, fg::binary_cross_entropy_with_logits(x, y.sigmoid()) +
                           fg::binary_cross_entropy_with_logits(x * 2, y.sigmoid(), y.sigmoid(), x.exp(), fg::Reduction::None).sum(0).sum())
FG_OP(smooth_l1_huber, fg::smooth_l1_loss(x * 3, y, fg::Reduction::None, 0.5) + fg::huber_loss(x * 3, y, fg::Reduction::None, 0.7) +
                           fg::smooth_l1_loss(x, y) + fg::huber_loss(x, y * 2, fg::Reduction::Sum))
// ops on lists of tensors (one element constant in some)
FG_OP(cat, fg::cat({x, y.sin()}, 0))
FG_OP(cat_last_dim, fg::cat({x * 2, fg::ones_like(y), y}, -1))
FG_OP(stack, fg::stack({x, y.exp(), x * y}, 1))
FG_OP(stack_last_dim, fg::stack({fg::zeros_like(x), x.tanh() + y}, -1))
// helpers, locals, in-place ops
static fg::Tensor affine(const fg::Tensor& a, const fg::Tensor& b) { return a * 2 + b; }
FG_OP(helper_call, affine(x, y).tanh())
static fg::Tensor updated(const fg::Tensor& x, const fg::Tensor& y) {
  fg::Tensor h = x * y;
  h.add_(x);
  h.mul_(0.5);
  h = h + y;
  return h;
}
FG_OP(inplace, updated(x, y))

// Runs of element-wise ops that the optimized code fuses (transforms/fuse.h): values read again
// far from where they are made, numbers on either side, and a run cut by an in-place write and a
// reduction. (The other entries fuse too; with x and y of different shapes their runs take
// fg::Fused's op-by-op path.)
static fg::Tensor chain(const fg::Tensor& x, const fg::Tensor& y) {
  const fg::Tensor s = x.sin(), c = x.cos();
  const fg::Tensor u = (s * y - 1.5) / (c * c + 1);
  const fg::Tensor v = fg::sigmoid(u) * 2 + fg::relu(y) * s;
  return v.tanh() * c - u.exp() * 0.25;
}
FG_OP(elementwise_chain, chain(x, y))
static fg::Tensor chain_cut(const fg::Tensor& x, const fg::Tensor& y) {
  fg::Tensor a = x * y + 1;
  const fg::Tensor b = a.sin();
  a.mul_(2);  // after b read a
  const fg::Tensor m = (b * b).sum();
  const fg::Tensor c = a * b - m;
  return c * c.cos() + (-b).exp();
}
FG_OP(elementwise_cut, chain_cut(x, y))

#undef FG_OP

}  // namespace opdb
