// A two-layer MLP classifier and its per-example loss; funcgen generates the per-sample gradients.
#include "model.h"

namespace mlp {

static fg::Tensor forward(const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2, const fg::Tensor& b2,
                          const fg::Tensor& x) {
  fg::Tensor h = fg::linear(x, w1, b1).relu();
  return fg::linear(h, w2, b2);
}

// Cross entropy of one example (x: [in], target: a class index): -log_softmax(logits)[target].
FUNCGEN("per_sample_grads = vmap(grad(loss, argnums=(0, 1, 2, 3)), in_dims=(None, None, None, None, 0, 0))")
fg::Tensor loss(const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2, const fg::Tensor& b2,
                const fg::Tensor& x, const fg::Tensor& target) {
  fg::Tensor logp = forward(w1, b1, w2, b2, x).log_softmax(-1);
  return -logp.gather(0, target.reshape({1})).sum();
}

}  // namespace mlp
