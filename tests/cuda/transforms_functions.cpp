// The per-sample-gradients tutorial's shape of model, and a classifier, under grad, vmap(grad),
// jacrev and jvp: the generated code must run on the device its inputs are on.
#include "transforms_functions.h"

namespace cudatest {

FUNCGEN("mlp_loss_grad = grad(mlp_loss, argnums=(0, 1))")
FUNCGEN("mlp_per_sample_grads = vmap(grad(mlp_loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))")
fg::Tensor mlp_loss(const fg::Tensor& w, const fg::Tensor& b, const fg::Tensor& x, const fg::Tensor& y) {
  const fg::Tensor h = fg::linear(x, w, b).tanh();
  const fg::Tensor d = h - y;
  return (d * d).mean();
}

FUNCGEN("classifier_jacobian = jacrev(classifier, argnums=1)")
FUNCGEN("classifier_jvp = jvp(classifier)")
fg::Tensor classifier(const fg::Tensor& x, const fg::Tensor& w) {
  const fg::Tensor logits = x.mm(w);
  return (logits.log_softmax(1) * logits.softmax(-1)).sum(1);
}

}  // namespace cudatest
