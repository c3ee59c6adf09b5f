// The tutorial's model in libtorch's style: layers whose tensors are members, and member functions
// that compute with them. funcgen takes the model object as the first argument of what it
// generates from an annotated member function, as torch.func's functional_call takes the module.
#pragma once

#include <funcgen/funcgen.h>

namespace mlp {

struct Linear {
  fg::Tensor weight, bias;
  fg::Tensor forward(const fg::Tensor& x) const { return fg::linear(x, weight, bias); }
};

struct Mlp {
  Linear fc1, fc2;
  fg::Tensor forward(const fg::Tensor& x) const;
  // Cross entropy of one example (x: [in], target: a class index).
  fg::Tensor loss(const fg::Tensor& x, const fg::Tensor& target) const;
};

}  // namespace mlp
