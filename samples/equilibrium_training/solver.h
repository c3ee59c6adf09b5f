// A fixed-point iteration z <- f(z), as JAX's cookbook writes `fixed_point(f, z0)`; funcgen
// differentiates through the iterations of the lambda it is given.
#pragma once

#include <funcgen/funcgen.h>

namespace deq {

template <typename Layer>
fg::Tensor fixed_point(Layer layer, fg::Tensor z, int iterations) {
  for (int i = 0; i < iterations; ++i) z = layer(z);
  return z;
}

}  // namespace deq
