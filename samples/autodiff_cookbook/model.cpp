#include "model.h"

namespace cookbook {

// jacfwd / jacrev of the network w.r.t. its input, and its hessian w.r.t. the input.
FUNCGEN("input_jacrev = jacrev(predict, argnums=2)")
FUNCGEN("input_jacfwd = jacfwd(predict, argnums=2)")
fg::Tensor predict(const Layers& ws, const Layers& bs, const fg::Tensor& inputs) {
  fg::Tensor x = inputs;
  fg::Tensor outputs;
  for (size_t i = 0; i < ws.size(); ++i) {
    outputs = fg::matmul(x, ws[i]) + bs[i];
    x = fg::tanh(outputs);
  }
  return outputs;
}

// grad(loss) w.r.t. the layers (vectors of gradients, as JAX returns the list of tuples), the
// per-example gradients of vmap(grad), and the hessian w.r.t. the inputs.
FUNCGEN("loss_grad = grad(loss, argnums=(0, 1))")
FUNCGEN("per_example_grads = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))")
FUNCGEN("input_hessian = hessian(loss, argnums=2)")
fg::Tensor loss(const Layers& ws, const Layers& bs, const fg::Tensor& inputs, const fg::Tensor& targets) {
  const fg::Tensor preds = predict(ws, bs, inputs);
  return (preds - targets).pow(2).sum();
}

}  // namespace cookbook
