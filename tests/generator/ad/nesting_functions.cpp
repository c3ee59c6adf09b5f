// Transforms nested in each other and vmap inside derivatives (test_nesting.cpp): every result
// comes out of composition (a jacobian inside another transform is the vjp or jvp of the function
// vmapped over a basis, and that vmap is differentiated again like any op).
#include <funcgen/funcgen.h>

namespace nest {

// A function from R^n to R^n whose second derivatives are all different.
FUNCGEN("f_jacrev = jacrev(f)")
FUNCGEN("f_jacrev_jacrev = jacrev(jacrev(f))")
FUNCGEN("f_jacfwd_jacrev = jacfwd(jacrev(f))")
FUNCGEN("f_jacrev_jacfwd = jacrev(jacfwd(f))")
FUNCGEN("f_jacfwd_jacfwd = jacfwd(jacfwd(f))")
FUNCGEN("f_jvp_jacrev = jvp(jacrev(f))")
FUNCGEN("f_batched_jacrev_jacrev = vmap(jacrev(jacrev(f)))")
FUNCGEN("f_chunked_jacrev_jacrev = jacrev(jacrev(f, chunk_size=3), chunk_size=1)")
FUNCGEN("f_batched_chunked = vmap(jacrev(jacrev(f, chunk_size=2)))")
fg::Tensor f(const fg::Tensor& x) { return (x * x).sin() * x.sum() + x.tanh() * x[0]; }

// Scalar functions of two arguments: hessians of every pair of arguments.
FUNCGEN("g_hessian = hessian(g)")
FUNCGEN("g_hessian_pairs = hessian(g, argnums=(0, 1))")
FUNCGEN("g_grad = grad(g, argnums=(0, 1))")
FUNCGEN("g_jacrev_jacrev = jacrev(jacrev(g))")
FUNCGEN("g_batched_hessian = vmap(hessian(g), in_dims=(0, None))")
FUNCGEN("g_hvp = jvp(grad(g))")
fg::Tensor g(const fg::Tensor& x, const fg::Tensor& w) { return (x.matmul(w).tanh() * x.sum()).sum() + (x * x * x).sum(); }

// vmap inside the derivative transforms: w is shared by the batch, so its derivative sums over it.
FUNCGEN("h_batched = vmap(h, in_dims=(0, None))")
FUNCGEN("h_jacrev_vmap = jacrev(vmap(h, in_dims=(0, None)), argnums=(0, 1))")
FUNCGEN("h_jacfwd_vmap = jacfwd(vmap(h, in_dims=(0, None)), argnums=(0, 1))")
FUNCGEN("h_jvp_vmap = jvp(vmap(h, in_dims=(0, None)))")
FUNCGEN("h_vjp_vmap = vjp(vmap(h, in_dims=(0, None)))")
fg::Tensor h(const fg::Tensor& x, const fg::Tensor& w) { return (x.matmul(w)).sin() * x.sum(); }

// Several outputs and has_aux.
FUNCGEN("pair_jacrev = jacrev(pair)")
FUNCGEN("pair_jacfwd = jacfwd(pair)")
std::tuple<fg::Tensor, fg::Tensor> pair(const fg::Tensor& x) { return std::make_tuple(x.sin() * 3, x.exp().sum()); }

FUNCGEN("aux_jacfwd = jacfwd(with_aux, has_aux=True)")
FUNCGEN("aux_jacrev = jacrev(with_aux, has_aux=True)")
std::tuple<fg::Tensor, fg::Tensor> with_aux(const fg::Tensor& x) {
  return std::make_tuple(x.sin() * x.sum(), x.cos() * 2);
}

// A random function: derivative code that runs it again (the jvp or vjp of its jacobian's rows)
// draws what the first run drew, so values and derivatives belong to one draw.
FUNCGEN("noisy_jacrev_jvp = jvp(jacrev(noisy))")
FUNCGEN("noisy_jacrev_vjp = vjp(jacrev(noisy))")
fg::Tensor noisy(const fg::Tensor& x) { return x.sin() * fg::rand_like(x); }

// vmap's randomness inside derivative transforms: the derivative code reruns the vmapped function
// on the first run's draws, per example ('different') or shared by the batch ('same'); jacfwd's
// randomness is its basis vmap's.
FUNCGEN("scaled_jvp_different = jvp(vmap(scaled_noise, randomness='different'))")
FUNCGEN("scaled_jvp_same = jvp(vmap(scaled_noise, randomness='same'))")
FUNCGEN("scaled_vjp_different = vjp(vmap(scaled_noise, randomness='different'))")
FUNCGEN("scaled_jacrev_different = jacrev(vmap(scaled_noise, randomness='different'))")
FUNCGEN("scaled_jacfwd_same = jacfwd(vmap(scaled_noise, randomness='same'), randomness='same')")
FUNCGEN("scaled_vjp_jacfwd_different = vjp(jacfwd(scaled_noise, randomness='different'))")
fg::Tensor scaled_noise(const fg::Tensor& x) { return x.sin() * fg::randn_like(x); }

// out_dims=None inside derivative transforms: an output that does not depend on the mapped inputs
// is returned once, unbatched, and so are its cotangent and tangent.
FUNCGEN("split_vjp = vjp(vmap(split, in_dims=(0, None), out_dims=(0, None)))")
FUNCGEN("split_jvp = jvp(vmap(split, in_dims=(0, None), out_dims=(0, None)))")
FUNCGEN("split_jacrev = jacrev(vmap(split, in_dims=(0, None), out_dims=(0, None)), argnums=1)")
std::tuple<fg::Tensor, fg::Tensor> split(const fg::Tensor& x, const fg::Tensor& w) {
  return std::make_tuple(x * w, w.sin());
}

// Jacobians whose basis is never formed (transforms/ad/structured_basis.h): the first op of the
// pullback and of the jvp multiplies the basis (a diagonal of it) by a weight.
FUNCGEN("layers_jacrev = jacrev(layers)")
FUNCGEN("layers_jacfwd = jacfwd(layers)")
FUNCGEN("layers_batched_jacrev = vmap(jacrev(layers), in_dims=(0, None, None, None))")
FUNCGEN("layers_batched_jacfwd = vmap(jacfwd(layers), in_dims=(0, None, None, None))")
FUNCGEN("layers_weight_jacrev = jacrev(layers, argnums=1)")
// Weights per model (the outer level), inputs per example (the inner): each residual of jacrev's
// forward pass reaches its pullback at the levels that batch it, the shared w2 at none.
FUNCGEN("layers_models_jacrev = vmap(vmap(jacrev(layers), in_dims=(0, None, None, None)), in_dims=(None, 0, 0, None))")
fg::Tensor layers(const fg::Tensor& x, const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2) {
  return fg::linear(fg::linear(x, w1, b1).tanh(), w2).tanh();
}
// The basis on the right of a product: matmul(w, basis) is w's columns.
FUNCGEN("rotated_jacrev = jacrev(rotated, argnums=1)")
FUNCGEN("rotated_jacfwd = jacfwd(rotated, argnums=1)")
FUNCGEN("rotated_batched_jacfwd = vmap(jacfwd(rotated, argnums=1), in_dims=(None, 0))")
// W.r.t. the matrix: a basis of matrices, which the products form (the fast path is for vectors).
FUNCGEN("rotated_weight_jacfwd = jacfwd(rotated)")
fg::Tensor rotated(const fg::Tensor& w, const fg::Tensor& x) { return fg::matmul(w, x.sin()) * 2; }
// A linear map: the weight is its pullback's only residual, and the vmap batches that.
FUNCGEN("linear_batched_jacrev = vmap(jacrev(linear_map), in_dims=(0, None))")
fg::Tensor linear_map(const fg::Tensor& x, const fg::Tensor& w) { return fg::matmul(w, x); }

// Two outputs of one value: still two tensors after common subexpressions (transforms/simplify.h).
FUNCGEN("twice_batched = vmap(twice)")
FUNCGEN("twice_jacrev = jacrev(twice)")
std::tuple<fg::Tensor, fg::Tensor> twice(const fg::Tensor& x) { return std::make_tuple(x.sin(), x.sin()); }

// Equal values reaching outputs through views, and in the returned expression itself.
FUNCGEN("thrice_batched = vmap(thrice)")
std::tuple<fg::Tensor, fg::Tensor, fg::Tensor> thrice(const fg::Tensor& x) {
  const fg::Tensor s = x.sin();
  const fg::Tensor a = s.unsqueeze(0);
  const fg::Tensor s2 = x.sin();
  return std::make_tuple(a, s2.unsqueeze(0), x.sin());
}
// A jacobian that is the weight itself (its rows taken from it, not formed): its own memory.
FUNCGEN("product_jacfwd = jacfwd(product, argnums=1)")
fg::Tensor product(const fg::Tensor& w, const fg::Tensor& x) { return fg::matmul(w, x); }

}  // namespace nest
