// The CNN of torch.func's per-sample-gradients tutorial (conv 1 -> 32 -> 64 3x3, max_pool2d 2,
// linear 9216 -> 128 -> 10, log_softmax, nll_loss) for bench_cnn, written as a user writes it.
#pragma once

#include <funcgen/funcgen.h>

namespace bench_cnn {

struct SimpleCNN {
  fg::Tensor conv1_w, conv1_b, conv2_w, conv2_b, fc1_w, fc1_b, fc2_w, fc2_b;
  fg::Tensor forward(const fg::Tensor& x) const;
  fg::Tensor loss(const fg::Tensor& x, const fg::Tensor& targets) const;        // a minibatch's mean
  fg::Tensor example_loss(const fg::Tensor& x, const fg::Tensor& target) const;  // one example's
};

}  // namespace bench_cnn
