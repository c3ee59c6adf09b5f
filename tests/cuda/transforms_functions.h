// Functions transformed by funcgen for tests/cuda/test_transforms.cpp, written as a user would,
// with no mention of a device.
#pragma once

#include "funcgen/funcgen.h"

namespace cudatest {
fg::Tensor mlp_loss(const fg::Tensor& w, const fg::Tensor& b, const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor classifier(const fg::Tensor& x, const fg::Tensor& w);
fg::Tensor classifier_loss(const fg::Tensor& w, const fg::Tensor& b, const fg::Tensor& sample,
                           const fg::Tensor& target);
fg::Tensor cnn_loss(const fg::Tensor& conv_w, const fg::Tensor& conv_b, const fg::Tensor& fc_w, const fg::Tensor& image,
                    const fg::Tensor& target);
fg::Tensor attention_block(const fg::Tensor& table, const fg::Tensor& wq, const fg::Tensor& gamma,
                           const fg::Tensor& ids);
}  // namespace cudatest
