// The tutorials' functions and the transforms bench_tutorials times.
#include "tutorials_model.h"

namespace tutorials {

// The tutorial's loss of one example: the model sees a minibatch of one.
FUNCGEN("per_sample_grads = vmap(grad(mlp_loss), in_dims=(None, 0, 0))")
fg::Tensor mlp_loss(const Mlp& p, const fg::Tensor& x, const fg::Tensor& target) {
  const fg::Tensor hidden = fg::relu(fg::linear(x.unsqueeze(0), p.w1, p.b1));
  const fg::Tensor logits = fg::linear(hidden, p.w2, p.b2);
  return fg::cross_entropy(logits, target.unsqueeze(0));
}

FUNCGEN("jacrev_predict = jacrev(predict, argnums=2)")
FUNCGEN("jacfwd_predict = jacfwd(predict, argnums=2)")
FUNCGEN("vmap_jacrev_predict = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))")
fg::Tensor predict(const fg::Tensor& weight, const fg::Tensor& bias, const fg::Tensor& x) {
  return fg::linear(x, weight, bias).tanh();
}

FUNCGEN("hessian_predict_sum = hessian(predict_sum, argnums=2)")
fg::Tensor predict_sum(const fg::Tensor& weight, const fg::Tensor& bias, const fg::Tensor& x) {
  return predict(weight, bias, x).sum();
}

FUNCGEN("ensemble = vmap(mlp3, in_dims=(0, None))")
fg::Tensor mlp3(const Mlp3& p, const fg::Tensor& x) {
  fg::Tensor h = fg::relu(fg::linear(x, p.w1, p.b1));
  h = fg::relu(fg::linear(h, p.w2, p.b2));
  return fg::linear(h, p.w3, p.b3);
}

FUNCGEN("hvp = jvp(grad(sin_cos))")
fg::Tensor sin_cos(const fg::Tensor& x) { return (x.sin() * x.cos()).sum(); }

}  // namespace tutorials
