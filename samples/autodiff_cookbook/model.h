// The cookbook's MLP: params = [(W, b) for each layer], kept as two vectors of tensors.
#pragma once

#include <funcgen/funcgen.h>

#include <vector>

namespace cookbook {

using Layers = std::vector<fg::Tensor>;

// def predict(params, inputs): for W, b in params: outputs = dot(inputs, W) + b; inputs = tanh(outputs)
fg::Tensor predict(const Layers& ws, const Layers& bs, const fg::Tensor& inputs);
// def loss(params, batch): return sum((predict(params, inputs) - targets) ** 2)
fg::Tensor loss(const Layers& ws, const Layers& bs, const fg::Tensor& inputs, const fg::Tensor& targets);

}  // namespace cookbook
