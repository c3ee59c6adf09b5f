// A fixed-point iteration z <- layer(z), a fixed number of times. funcgen differentiates through
// the iterations of the lambda it is given (unrolled, as autograd would; a deep-equilibrium model
// would differentiate implicitly, which a custom_vjp could express).
#pragma once

#include <funcgen/funcgen.h>

namespace deq {

template <typename Layer>
fg::Tensor fixed_point(Layer layer, fg::Tensor z, int iterations) {
  for (int i = 0; i < iterations; ++i) z = layer(z);
  return z;
}

}  // namespace deq
