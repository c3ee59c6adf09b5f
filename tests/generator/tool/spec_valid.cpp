// Valid specs, nested transforms, specs naming earlier specs: no diagnostics, and every one is
// generated.
// EXIT: 0
#include <funcgen/funcgen.h>

#include <tuple>

FUNCGEN("per_sample_grads = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))")
FUNCGEN("loss_hessian = hessian(loss)")
FUNCGEN("hvp = jvp(grad(loss))")
fg::Tensor loss(const fg::Tensor& w, const fg::Tensor& b, const fg::Tensor& x, const fg::Tensor& y) {
  return fg::mse_loss(fg::linear(x, w, b), y);
}

FUNCGEN("twice = vmap(vmap(scale, in_dims=(0, None)), in_dims=(0, None))")
FUNCGEN("jac = jacrev(scale, has_aux=False)")
fg::Tensor scale(fg::Tensor x, double s) { return x * s; }

FUNCGEN("both = vmap(pair, out_dims=(0, 1))")
std::tuple<fg::Tensor, fg::Tensor> pair(const fg::Tensor& x) { return {x.sin(), x.cos()}; }
FUNCGEN("again = vmap(both)")
fg::Tensor unrelated(const fg::Tensor& x) { return x; }
