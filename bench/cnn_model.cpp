// What bench_cnn times: the minibatch's gradient (forward and backward) and per-sample gradients.
#include "cnn_model.h"

namespace bench_cnn {

fg::Tensor SimpleCNN::forward(const fg::Tensor& x) const {
  fg::Tensor h = fg::conv2d(x, conv1_w, conv1_b).relu();
  h = fg::conv2d(h, conv2_w, conv2_b).relu();
  h = fg::max_pool2d(h, 2).flatten(1);
  h = fg::linear(h, fc1_w, fc1_b).relu();
  return fg::linear(h, fc2_w, fc2_b).log_softmax(1);
}

FUNCGEN("minibatch_grad = grad(loss)")
fg::Tensor SimpleCNN::loss(const fg::Tensor& x, const fg::Tensor& targets) const {
  return fg::nll_loss(forward(x), targets);
}

FUNCGEN("per_sample_grads = vmap(grad(example_loss), in_dims=(None, 0, 0))")
fg::Tensor SimpleCNN::example_loss(const fg::Tensor& x, const fg::Tensor& target) const {
  return fg::nll_loss(forward(x.unsqueeze(0)), target.unsqueeze(0));
}

}  // namespace bench_cnn
