// The fixed versions of the UX Limitations gallery (samples/limitations/fixed.cpp): funcgen
// transforms them without a diagnostic, and the generated vmaps give what the page's mental model
// says, the stack of the function over the examples.
#include <gtest/gtest.h>

#include <funcgen/funcgen.h>

#include <functional>
#include <tuple>
#include <vector>

#include "fixed.funcgen.h"

std::tuple<fg::Tensor, fg::Tensor> sin_sin(const fg::Tensor& x);
fg::Tensor pure(const fg::Tensor& x);
fg::Tensor diag_embed_fixed(const fg::Tensor& vec);
fg::Tensor norm_fixed(const fg::Tensor& x);
fg::Tensor plus(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor relu_fixed(const fg::Tensor& x);
fg::Tensor custom_dot(const fg::Tensor& x);
fg::Tensor relu_branchy(const fg::Tensor& x);
fg::Tensor clip_or_double(const fg::Tensor& x);
fg::Tensor halve_until_small(const fg::Tensor& x, double limit);
fg::Tensor twice(const fg::Tensor& x);
fg::Tensor nonzero_mask(const fg::Tensor& x);

namespace {

// torch.stack([f(x_i) for x_i in x.unbind(0)])
fg::Tensor loop(const std::function<fg::Tensor(const fg::Tensor&)>& f, const fg::Tensor& x) {
  std::vector<fg::Tensor> items;
  for (int64_t i = 0; i < x.size(0); ++i) items.push_back(f(x.select(0, i)));
  return fg::stack(items, 0);
}

void expect_same(const fg::Tensor& actual, const fg::Tensor& expected) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_TRUE(fg::allclose(actual.to(fg::kDouble), expected.to(fg::kDouble), 1e-6, 1e-6))
      << "actual\n" << actual << "\nexpected\n" << expected;
}

class FixedGallery : public ::testing::Test {
 protected:
  void SetUp() override { fg::manual_seed(7); }
  fg::Tensor x = fg::randn({4, 3});
};

}  // namespace

TEST_F(FixedGallery, ReturnedIntermediateInsteadOfGlobal) {
  auto [z, intermediate] = batched_sin_sin(x);
  expect_same(z, loop([](const fg::Tensor& xi) { return std::get<0>(sin_sin(xi)); }, x));
  expect_same(intermediate, loop([](const fg::Tensor& xi) { return std::get<1>(sin_sin(xi)); }, x));
}

TEST_F(FixedGallery, PureFunction) { expect_same(batched_pure(x), loop(pure, x)); }

TEST_F(FixedGallery, BatchNormWithoutRunningStatisticsHasPerExampleStatistics) {
  const fg::Tensor xs = fg::randn({3, 2, 4, 5}, fg::kDouble);
  expect_same(batched_norm_fixed(xs), loop(norm_fixed, xs));
}

TEST_F(FixedGallery, NewZerosMakesTheDestinationBatched) {
  const fg::Tensor vecs = fg::tensor({{0., 1., 2.}, {3., 4., 5.}});
  const fg::Tensor out = batched_diag_embed_fixed(vecs);
  expect_same(out, loop(diag_embed_fixed, vecs));
  // The page's numbers: each example's vector on the diagonal of its own matrix.
  EXPECT_EQ(out.select(0, 1).diagonal().sum().item<double>(), 12.0);
  EXPECT_EQ(out.sum().item<double>(), 15.0);
}

TEST_F(FixedGallery, FunctionalFormInsteadOfOut) {
  const fg::Tensor y = fg::randn({4, 3});
  std::vector<fg::Tensor> items;
  for (int64_t i = 0; i < 4; ++i) items.push_back(plus(x.select(0, i), y.select(0, i)));
  expect_same(batched_plus(x, y), fg::stack(items, 0));
}

TEST_F(FixedGallery, WhereInsteadOfDataDependentIf) {
  expect_same(batched_relu_fixed(x), loop(relu_fixed, x));
  EXPECT_TRUE(fg::equal(batched_relu_fixed(x), x.relu()));
}

TEST_F(FixedGallery, ControlFlowOnShapesIsFine) {
  expect_same(batched_custom_dot(x), loop(custom_dot, x));
  const fg::Tensor m = fg::randn({2, 3, 5});
  expect_same(batched_custom_dot(m), loop(custom_dot, m));
}

TEST_F(FixedGallery, TensorOpsInsteadOfItem) { expect_same(batched_twice(x), loop(twice, x)); }

TEST_F(FixedGallery, MaskInsteadOfNonzero) {
  const fg::Tensor xs = fg::tensor({{0., 1., 2.}, {0., 0., 3.}});
  EXPECT_TRUE(fg::equal(batched_nonzero_mask(xs), loop(nonzero_mask, xs)));
}

// Beyond torch.func: control_flow='select' turns branches and loops on batched values into
// per-example selection; the result is still the loop over examples of the original function.
TEST_F(FixedGallery, SelectedIfWithEarlyReturn) {
  const fg::Tensor xs = fg::randn({6});
  expect_same(batched_relu_select(xs), loop(relu_branchy, xs));
}

TEST_F(FixedGallery, SelectedIfElseAssignment) {
  const fg::Tensor xs = fg::randn({8, 3});
  const fg::Tensor out = batched_clip_or_double(xs);
  expect_same(out, loop(clip_or_double, xs));
  // Both branches were taken by some example, or the test would not show the selection.
  const fg::Tensor positive = fg::gt(xs.sum({1}), 0);
  const double taken = positive.to(fg::kDouble).sum().item<double>();
  EXPECT_GT(taken, 0);
  EXPECT_LT(taken, 8);
}

TEST_F(FixedGallery, SelectedWhileLoopRunsUntilNoExampleIsActive) {
  const fg::Tensor xs = fg::randn({5, 4}) * fg::tensor({1., 10., 100., 1000., 0.1}).unsqueeze(1);
  const fg::Tensor out = batched_halve(xs, 0.5);
  expect_same(out, loop([](const fg::Tensor& xi) { return halve_until_small(xi, 0.5); }, xs));
  EXPECT_LE(out.abs().amax().item<double>(), 0.5);
}
