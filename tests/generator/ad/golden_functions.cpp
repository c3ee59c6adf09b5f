// The workloads of torch.func's tutorials, written against fg and transformed by funcgen; the
// golden test compares their results with the values torch.func computed for the same inputs
// (tests/golden/make_golden.py, stored in tests/golden/torch_func_golden.json).
#include <funcgen/funcgen.h>

#include <tuple>

namespace golden {

// ---- per-sample gradients (tutorial "Per-sample-gradients"): a two-layer MLP and cross entropy
static fg::Tensor mlp(const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2, const fg::Tensor& b2,
                      const fg::Tensor& x) {
  fg::Tensor h = fg::linear(x, w1, b1).relu();
  return fg::linear(h, w2, b2);
}

// Cross entropy of one example: -log_softmax(logits)[target].
FUNCGEN("per_sample_grads = vmap(grad(example_loss, argnums=(0, 1, 2, 3)), in_dims=(None, None, None, None, 0, 0))")
FUNCGEN("example_grad = grad(example_loss, argnums=(0, 1, 2, 3))")
fg::Tensor example_loss(const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2, const fg::Tensor& b2,
                        const fg::Tensor& x, const fg::Tensor& target) {
  fg::Tensor logp = mlp(w1, b1, w2, b2, x).log_softmax(-1);
  return -logp.gather(0, target.reshape({1})).sum();
}

// ---- model ensembling (tutorial "Model ensembling"): every model on the same minibatch
FUNCGEN("ensemble = vmap(mlp_forward, in_dims=(0, 0, 0, 0, None))")
fg::Tensor mlp_forward(const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2, const fg::Tensor& b2,
                       const fg::Tensor& x) {
  return mlp(w1, b1, w2, b2, x);
}

// ---- jacobians and hessians (tutorial "Jacobians, Hessians, hvp, vhp, and more")
FUNCGEN("jac_rev = jacrev(predict, argnums=2)")
FUNCGEN("jac_fwd = jacfwd(predict, argnums=2)")
FUNCGEN("jac_rev_wx = jacrev(predict, argnums=(0, 2))")
FUNCGEN("jac_fwd_wx = jacfwd(predict, argnums=(0, 2))")
FUNCGEN("batch_jac_rev = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))")
FUNCGEN("batch_jac_fwd = vmap(jacfwd(predict, argnums=2), in_dims=(None, None, 0))")
FUNCGEN("hess = hessian(predict, argnums=2)")
FUNCGEN("batch_hess = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))")
FUNCGEN("predict_vjp = vjp(predict)")
FUNCGEN("predict_jvp = jvp(predict)")
FUNCGEN("predict_linearize = linearize(predict)")
fg::Tensor predict(const fg::Tensor& weight, const fg::Tensor& bias, const fg::Tensor& x) {
  return fg::linear(x, weight, bias).tanh();
}

// ---- Hessian-vector products: forward over reverse
FUNCGEN("hvp = jvp(grad(energy))")
FUNCGEN("energy_grad_and_value = grad_and_value(energy)")
fg::Tensor energy(const fg::Tensor& x) { return (x.sin() * x * x).sum(); }

// ---- higher order: grad of grad of a scalar function
FUNCGEN("second_derivative = grad(grad(scalar_fn))")
FUNCGEN("third_derivative = grad(grad(grad(scalar_fn)))")
fg::Tensor scalar_fn(const fg::Tensor& x) { return x.tanh() * x * x; }

// ---- has_aux
FUNCGEN("loss_grad_aux = grad(loss_with_aux, has_aux=True)")
FUNCGEN("loss_grad_and_value_aux = grad_and_value(loss_with_aux, has_aux=True)")
std::tuple<fg::Tensor, fg::Tensor> loss_with_aux(const fg::Tensor& w, const fg::Tensor& x) {
  fg::Tensor pred = x.matmul(w);
  return {(pred * pred).mean(), pred};
}


// ---- model layers: each f(x, y) and grad of sum(sin(f) * 2) w.r.t. both (make_golden.py: layers)
#define LAYER(name, expression)                                                                   \
  fg::Tensor layer_##name(const fg::Tensor& x, const fg::Tensor& y) { return expression; }       \
  FUNCGEN("layer_" #name "_grad = grad(layer_" #name "_loss, argnums=(0, 1))")                    \
  fg::Tensor layer_##name##_loss(const fg::Tensor& x, const fg::Tensor& y) { return (layer_##name(x, y).sin() * 2).sum(); }
LAYER(layer_norm, fg::layer_norm(x, {3, 4}, y, y * 0.5) + fg::layer_norm(x * y, {4}))
LAYER(group_norm, fg::group_norm(x, 2, y, y.sin()) + fg::group_norm(x * 2, 4))
LAYER(batch_norm, fg::batch_norm(x, y, y.cos(), {}, {}, true) + fg::batch_norm(x, {}, y, fg::arange(2, x.options()) * 0.3, fg::arange(2, x.options()) + 1, false))
LAYER(attention, fg::scaled_dot_product_attention(x, y, y * 0.5) +
                     fg::scaled_dot_product_attention(x, x.sin(), x, {}, 0.0, true) +
                     fg::scaled_dot_product_attention(x, y, y.cos(), fg::arange(5) <= fg::arange(3).unsqueeze(1) + 1,
                                                      0.0, false, 0.7))
LAYER(embedding, fg::embedding(x, fg::arange(4).reshape({2, 2})) * y + fg::embedding(x * 2, fg::arange(3) * 2, 2).sum(0) +
                     fg::embedding(x.cos(), fg::arange(3), 0).sum(0))  // padding row 0 looked up: no gradient
LAYER(var_std, fg::var(x * y, {1}).unsqueeze(1) + x.var({0}, false, true) + (x * y + 1).std({0, 1}, true, true) * x +
                   y.std(false))
LAYER(masks, (x * y).masked_fill(fg::arange(3).unsqueeze(1) > fg::arange(4) - 2, 1.5) + x.masked_fill(fg::arange(4) > 1, -2) +
                 (x * y).triu(1) + x.tril(-1) * 2)
LAYER(rearrangements, x.flip({0, 2}) * y + x.roll({1, -2}, {1, 2}) + x.roll(3) + y.repeat({2, 1, 1}) +
                          fg::one_hot(fg::arange(3), 4) * y)
LAYER(losses, fg::binary_cross_entropy_with_logits(x, y.sigmoid()) +
                  fg::binary_cross_entropy_with_logits(x * 2, y.sigmoid(), y.sigmoid(), x.exp(), fg::Reduction::None) +
                  fg::smooth_l1_loss(x * 3, y, fg::Reduction::None, 0.5) + fg::huber_loss(x * 3, y, fg::Reduction::None, 0.7) +
                  fg::smooth_l1_loss(x, y) + fg::huber_loss(x, y * 2, fg::Reduction::Sum))
#undef LAYER
}  // namespace golden
