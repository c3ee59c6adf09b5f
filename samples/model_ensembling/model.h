#pragma once

#include <funcgen/funcgen.h>

namespace ensemble {

// A two-layer MLP classifier: [N, 784] -> [N, 10] logits.
fg::Tensor predict(const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2, const fg::Tensor& b2,
                   const fg::Tensor& x);

}  // namespace ensemble
