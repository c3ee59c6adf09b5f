// Parameters kept in a std::vector<fg::Tensor> and read at run-time indices, as libtorch users keep
// a model's layers and as JAX's autodiff cookbook keeps its MLP's (`for w, b in params[:-1]`): the
// vector is a list of the generated functions, its gradient a vector of the same length.
#include <funcgen/funcgen.h>

#include <vector>

namespace lp {

FUNCGEN("mlp_grad = grad(mlp, argnums=(0, 1))")
FUNCGEN("mlp_grad_x = grad(mlp, argnums=2)")
FUNCGEN("mlp_jvp = jvp(mlp)")
FUNCGEN("mlp_vjp = vjp(mlp)")
FUNCGEN("mlp_linearize = linearize(mlp)")
FUNCGEN("mlp_vmap = vmap(mlp, in_dims=(None, None, 0))")
FUNCGEN("mlp_psg = vmap(grad(mlp, argnums=(0, 1)), in_dims=(None, None, 0))")
FUNCGEN("mlp_hessian = hessian(mlp, argnums=2)")
FUNCGEN("mlp_jacrev = jacrev(mlp, argnums=2)")
FUNCGEN("mlp_jacfwd = jacfwd(mlp, argnums=2)")
FUNCGEN("mlp_hvp = jvp(grad(mlp, argnums=2))")
FUNCGEN("mlp_vjacrev = vmap(jacrev(mlp, argnums=2), in_dims=(None, None, 0))")
// Model ensembling: each element of the vectors holds the stacked weights of every model.
FUNCGEN("mlp_ensemble = vmap(mlp, in_dims=(0, 0, None))")
FUNCGEN("mlp_ensemble_grad = vmap(grad(mlp, argnums=(0, 1)), in_dims=(0, 0, None))")
FUNCGEN("mlp_ensemble_paired = vmap(mlp, in_dims=(0, None, 0))")
fg::Tensor mlp(const std::vector<fg::Tensor>& ws, const std::vector<fg::Tensor>& bs, const fg::Tensor& x) {
  fg::Tensor h = x;
  for (size_t i = 0; i + 1 < ws.size(); ++i) h = fg::tanh(fg::matmul(ws[i], h) + bs[i]);
  return (fg::matmul(ws.back(), h) + bs.back()).pow(2).sum();
}

// A layer the loop skips gets a zero gradient; the list is passed on to a helper whole.
fg::Tensor layer(const std::vector<fg::Tensor>& ws, size_t i, const fg::Tensor& h) { return fg::sin(fg::matmul(ws.at(i), h)); }

FUNCGEN("ranged_grad = grad(ranged)")
FUNCGEN("ranged_psg = vmap(grad(ranged), in_dims=(None, 0))")
FUNCGEN("ranged_jvp = jvp(ranged)")
fg::Tensor ranged(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) {
  fg::Tensor h = x;
  int k = 0;
  for (const auto& w : ws) {
    if (k++ == 1) continue;
    h = fg::sin(fg::matmul(w, h));
  }
  return (h * layer(ws, 2, x)).sum() * ws.front().sum();
}

// A counter declared before the loop and stepped after the read: the reverse pass must add each
// trip's gradient at the index it read, not at the counter's last value.
FUNCGEN("counted_grad = grad(counted)")
FUNCGEN("counted_jvp = jvp(counted)")
fg::Tensor counted(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) {
  fg::Tensor h = x;
  size_t i = 0;
  while (i + 1 < ws.size()) {
    h = fg::tanh(fg::matmul(ws[i], h));
    ++i;
  }
  return fg::matmul(ws.back(), h).sum();
}

// No loop: only back() makes the vector a list; linearize splits its primal and tangent code.
FUNCGEN("last_linearize = linearize(last)")
FUNCGEN("last_vjp = vjp(last)")
fg::Tensor last(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) { return (ws.back() * x).sin().sum(); }

// Jacobians w.r.t. the vectors themselves: one jacobian per element, in a vector, as torch.func's
// jacrev and jacfwd return a list of jacobians w.r.t. a list.
FUNCGEN("net_jacrev = jacrev(net, argnums=(0, 1))")
FUNCGEN("net_jacfwd = jacfwd(net, argnums=(0, 1))")
FUNCGEN("net_vjacrev = vmap(jacrev(net), in_dims=(None, None, 0))")
FUNCGEN("net_vjacfwd = vmap(jacfwd(net), in_dims=(None, None, 0))")
FUNCGEN("net_ensemble_jacrev = vmap(jacrev(net), in_dims=(0, 0, None))")
FUNCGEN("net_ensemble_jacfwd = vmap(jacfwd(net), in_dims=(0, 0, None))")
FUNCGEN("net_ensemble_jacfwd_dim1 = vmap(jacfwd(net, argnums=(0, 1)), in_dims=(1, 0, None))")
fg::Tensor net(const std::vector<fg::Tensor>& ws, const std::vector<fg::Tensor>& bs, const fg::Tensor& x) {
  fg::Tensor h = x;
  for (size_t i = 0; i < ws.size(); ++i) h = fg::tanh(fg::matmul(ws[i], h) + bs[i]);
  return h;
}

// Two outputs (a jacobian each, through the composed form), and an aux output.
FUNCGEN("two_jacrev = jacrev(two)")
FUNCGEN("two_vjacrev = vmap(jacrev(two), in_dims=(None, 0))")
FUNCGEN("two_jacfwd = jacfwd(two)")
FUNCGEN("two_jacrev_aux = jacrev(two, has_aux=True)")
FUNCGEN("two_vjacrev_aux = vmap(jacrev(two, has_aux=True), in_dims=(None, 0))")
std::tuple<fg::Tensor, fg::Tensor> two(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) {
  fg::Tensor h = x;
  for (const auto& w : ws) h = fg::sin(fg::matmul(w, h));
  return {h, h.pow(2).sum()};
}

}  // namespace lp
