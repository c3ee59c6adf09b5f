// large_functions.cpp's structure of 1000 tensors through grad, vmap(grad), jvp and vjp: the
// generated code compiles (the test builds) and computes the derivatives written out by hand.
#include <gtest/gtest.h>

#include "../test_inputs.h"

#include "large.h"
#include "large_functions.funcgen.h"

namespace large {  // as written (large_functions.cpp)
fg::Tensor reads(const Weights& ws, const fg::Tensor& x);
}  // namespace large

namespace {

using T = fg::Tensor;

using test_inputs::input;

large::Weights weights() {
  large::Weights ws;
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = input({3}, 0.01 * static_cast<double>(i));
  return ws;
}

void expect_close(const T& a, const T& b) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_TRUE(fg::allclose(a, b, 1e-12, 1e-12)) << a << "\n" << b;
}

TEST(LargeStructures, GradOfAThousandLeaves) {
  const large::Weights ws = weights();
  const T x = input({3}, 0.5);
  const large::Weights g = large::reads_grad(ws, x);
  expect_close(g[0], ws[999] * x);
  expect_close(g[999], ws[0] * x);
  expect_close(g[5], ws[5].cos());
  expect_close(g[500], fg::zeros({3}, fg::kDouble));
  const T xs = input({4, 3}, 0.6);
  const large::Weights psg = large::reads_psg(ws, xs);
  expect_close(psg[0], ws[999] * xs);
  expect_close(psg[5], ws[5].cos().expand({4, 3}));
}

TEST(LargeStructures, JvpAndVjpOfAThousandLeaves) {
  const large::Weights ws = weights(), ts = weights();
  const T x = input({3}, 0.5), tx = input({3}, 0.7);
  const auto [value, tangent] = large::reads_jvp(ws, x, ts, tx);
  expect_close(value, large::reads(ws, x));
  expect_close(tangent, ((ts[0] * ws[999] + ws[0] * ts[999]) * x + ws[0] * ws[999] * tx).sum() +
                            (ws[5].cos() * ts[5]).sum());
  auto [out, pullback] = large::scaled_vjp(ws);
  expect_close(out[0], ws[0] * ws[1]);
  expect_close(out[7], ws[7]);
  const large::Weights ct = weights();
  const auto [grads] = pullback(ct);
  expect_close(grads[0], ct[0] * ws[1]);
  expect_close(grads[1], ct[1] + ct[0] * ws[0]);
  expect_close(grads[7], ct[7]);
}

}  // namespace
