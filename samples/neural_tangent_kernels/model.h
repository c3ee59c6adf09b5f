// The CNN of torch.func's neural-tangent-kernel tutorial, in libtorch's style: three 3x3
// convolutions of 32 channels with relu between them, flatten, and a linear layer to 10 outputs.
// (The tutorial's images are 3x32x32; this sample's are 3x12x12, so that the jacobians stay small.)
#pragma once

#include <funcgen/funcgen.h>

namespace ntk {

struct Conv2d {
  fg::Tensor weight, bias;
  fg::Tensor forward(const fg::Tensor& x) const { return fg::conv2d(x, weight, bias); }
};

struct Linear {
  fg::Tensor weight, bias;
  fg::Tensor forward(const fg::Tensor& x) const { return fg::linear(x, weight, bias); }
};

struct CNN {
  Conv2d conv1, conv2, conv3;
  Linear fc;
  // One image [3, H, W] -> its 10 outputs (the tutorial's fnet_single: a batch of one).
  fg::Tensor forward(const fg::Tensor& x) const;
  // <forward(x), v>: its gradient w.r.t. the parameters is J(x)^T v, a vector-jacobian product.
  fg::Tensor project(const fg::Tensor& x, const fg::Tensor& v) const;
};

}  // namespace ntk
