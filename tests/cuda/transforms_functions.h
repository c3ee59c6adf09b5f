// Functions transformed by funcgen for tests/cuda/test_transforms.cpp, written as a user would,
// with no mention of a device.
#pragma once

#include "funcgen/funcgen.h"

namespace cudatest {
fg::Tensor mlp_loss(const fg::Tensor& w, const fg::Tensor& b, const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor classifier(const fg::Tensor& x, const fg::Tensor& w);
}  // namespace cudatest
