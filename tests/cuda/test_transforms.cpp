// Generated code on kCUDA inputs: funcgen's transforms of tests/cuda/transforms_functions.cpp,
// which never mention a device, run where their inputs are and agree with the same code on the
// CPU (tier 1 on the host-run backend, tier 2 on a GPU; see device_test.h).
#include <tuple>

#include "device_test.h"
#include "transforms_functions.funcgen.h"
#include "transforms_functions.h"

namespace {

using fg::Tensor;
using fg::testing::Cuda;
using fg::testing::cuda;
using fg::testing::expect_close;

TEST_F(Cuda, GradAndPerSampleGradsOfAnMlp) {
  fg::manual_seed(11);
  const Tensor w = fg::randn({5, 7}) * 0.3, b = fg::randn({5}) * 0.1;
  const Tensor x = fg::randn({6, 7}), y = fg::randn({6, 5});
  const auto [gw, gb] = cudatest::mlp_loss_grad(w, b, x, y);
  const auto [cgw, cgb] = cudatest::mlp_loss_grad(cuda(w), cuda(b), cuda(x), cuda(y));
  expect_close(cgw, gw, 1e-5, 1e-6);
  expect_close(cgb, gb, 1e-5, 1e-6);
  const auto [pw, pb] = cudatest::mlp_per_sample_grads(w, b, x, y);
  const auto [cpw, cpb] = cudatest::mlp_per_sample_grads(cuda(w), cuda(b), cuda(x), cuda(y));
  EXPECT_EQ(cpw.sizes(), (std::vector<int64_t>{6, 5, 7}));
  expect_close(cpw, pw, 1e-5, 1e-6);
  expect_close(cpb, pb, 1e-5, 1e-6);
}

TEST_F(Cuda, JacrevAndJvpOfAClassifier) {
  fg::manual_seed(12);
  const Tensor x = fg::randn({4, 3}, fg::kDouble), w = fg::randn({3, 5}, fg::kDouble);
  expect_close(cudatest::classifier_jacobian(cuda(x), cuda(w)), cudatest::classifier_jacobian(x, w), 1e-12, 1e-13);
  const Tensor tx = fg::randn({4, 3}, fg::kDouble), tw = fg::randn({3, 5}, fg::kDouble);
  const auto [out, tangent] = cudatest::classifier_jvp(x, w, tx, tw);
  const auto [cout, ctangent] = cudatest::classifier_jvp(cuda(x), cuda(w), cuda(tx), cuda(tw));
  expect_close(cout, out, 1e-12, 1e-13);
  expect_close(ctangent, tangent, 1e-12, 1e-13);
}

TEST_F(Cuda, PerSampleGradsOfACrossEntropyClassifier) {
  fg::manual_seed(13);
  const Tensor w = fg::randn({4, 6}) * 0.5, b = fg::randn({4}) * 0.1, x = fg::randn({5, 6});
  const Tensor target = fg::tensor({0, 3, 1, 1, 2});
  const auto [pw, pb] = cudatest::classifier_per_sample_grads(w, b, x, target);
  const auto [cpw, cpb] = cudatest::classifier_per_sample_grads(cuda(w), cuda(b), cuda(x), cuda(target));
  EXPECT_EQ(cpw.sizes(), (std::vector<int64_t>{5, 4, 6}));
  expect_close(cpw, pw, 1e-5, 1e-6);
  expect_close(cpb, pb, 1e-5, 1e-6);
}

TEST_F(Cuda, PerSampleGradsOfAConvolutionalNetwork) {
  fg::manual_seed(15);
  const Tensor conv_w = fg::randn({3, 2, 3, 3}) * 0.3, conv_b = fg::randn({3}) * 0.1;
  const Tensor fc_w = fg::randn({4, 3 * 5 * 4}) * 0.1, images = fg::randn({3, 2, 5, 4});
  const Tensor target = fg::tensor({2, 0, 3});
  const auto [pw, pb] = cudatest::cnn_per_sample_grads(conv_w, conv_b, fc_w, images, target);
  const auto [cpw, cpb] =
      cudatest::cnn_per_sample_grads(cuda(conv_w), cuda(conv_b), cuda(fc_w), cuda(images), cuda(target));
  EXPECT_EQ(cpw.sizes(), (std::vector<int64_t>{3, 3, 2, 3, 3}));
  expect_close(cpw, pw, 1e-5, 1e-6);
  expect_close(cpb, pb, 1e-5, 1e-6);
}

TEST_F(Cuda, GradOfAnAttentionBlockWithAnEmbedding) {
  fg::manual_seed(14);
  const Tensor table = fg::randn({7, 4}, fg::kDouble), wq = fg::randn({4, 4}, fg::kDouble);
  const Tensor gamma = fg::rand({4}, fg::kDouble) + 0.5, ids = fg::tensor({1, 0, 6, 1, 3});
  const auto [gt, gq, gg] = cudatest::attention_block_grad(table, wq, gamma, ids);
  const auto [ct, cq, cg] = cudatest::attention_block_grad(cuda(table), cuda(wq), cuda(gamma), cuda(ids));
  expect_close(ct, gt, 1e-11, 1e-12);
  expect_close(cq, gq, 1e-11, 1e-12);
  expect_close(cg, gg, 1e-11, 1e-12);
}

}  // namespace
