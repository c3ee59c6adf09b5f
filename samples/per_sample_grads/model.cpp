// A two-layer MLP classifier and its per-example loss; funcgen generates the per-sample gradients,
// one Mlp of gradients (each parameter with the batch dim in front), as torch.func returns the
// gradients in the structure of the parameters.
#include "model.h"

namespace mlp {

fg::Tensor Mlp::forward(const fg::Tensor& x) const { return fc2.forward(fc1.forward(x).relu()); }

// -log_softmax(logits)[target]
FUNCGEN("per_sample_grads = vmap(grad(loss), in_dims=(None, 0, 0))")
fg::Tensor Mlp::loss(const fg::Tensor& x, const fg::Tensor& target) const {
  fg::Tensor logp = forward(x).log_softmax(-1);
  return -logp.gather(0, target.reshape({1})).sum();
}

}  // namespace mlp
