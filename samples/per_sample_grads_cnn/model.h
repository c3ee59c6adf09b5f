// The CNN of torch.func's per-sample-gradients tutorial, in libtorch's style: layers whose tensors
// are members, and member functions that compute with them (funcgen takes the model object as the
// first argument of what it generates, as functional_call takes the module's parameters).
#pragma once

#include <funcgen/funcgen.h>

namespace cnn {

struct Conv2d {
  fg::Tensor weight, bias;
  fg::Tensor forward(const fg::Tensor& x) const { return fg::conv2d(x, weight, bias); }
};

struct Linear {
  fg::Tensor weight, bias;
  fg::Tensor forward(const fg::Tensor& x) const { return fg::linear(x, weight, bias); }
};

// conv 1 -> 32 (3x3), conv 32 -> 64 (3x3), max_pool2d 2, linear 9216 -> 128 -> 10, log_softmax.
struct SimpleCNN {
  Conv2d conv1, conv2;
  Linear fc1, fc2;
  fg::Tensor forward(const fg::Tensor& x) const;
  // nll_loss of one example ([1, 28, 28]) as a batch of one, as the tutorial's compute_loss.
  fg::Tensor loss(const fg::Tensor& sample, const fg::Tensor& target) const;
};

}  // namespace cnn
