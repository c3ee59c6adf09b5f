#pragma once

#include <funcgen/funcgen.h>

namespace mlp {
fg::Tensor loss(const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2, const fg::Tensor& b2,
                const fg::Tensor& x, const fg::Tensor& target);
}  // namespace mlp
