// The tutorial's model and loss; funcgen generates per_sample_grads (one SimpleCNN of gradients,
// each parameter with the batch dim in front) and example_grad (one example's, for the loop).
#include "model.h"

namespace cnn {

fg::Tensor SimpleCNN::forward(const fg::Tensor& input) const {
  fg::Tensor x = conv1.forward(input);
  x = fg::relu(x);
  x = conv2.forward(x);
  x = fg::relu(x);
  x = fg::max_pool2d(x, 2);
  x = fg::flatten(x, 1);
  x = fc1.forward(x);
  x = fg::relu(x);
  x = fc2.forward(x);
  return fg::log_softmax(x, 1);
}

FUNCGEN("per_sample_grads = vmap(grad(loss), in_dims=(None, 0, 0))")
FUNCGEN("example_grad = grad(loss)")
fg::Tensor SimpleCNN::loss(const fg::Tensor& sample, const fg::Tensor& target) const {
  const fg::Tensor batch = sample.unsqueeze(0);
  const fg::Tensor targets = target.unsqueeze(0);
  return fg::nll_loss(forward(batch), targets);
}

}  // namespace cnn
