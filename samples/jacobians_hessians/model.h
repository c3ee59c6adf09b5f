#pragma once

#include <funcgen/funcgen.h>

namespace model {
fg::Tensor predict(const fg::Tensor& weight, const fg::Tensor& bias, const fg::Tensor& x);
}  // namespace model
