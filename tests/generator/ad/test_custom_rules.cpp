// User-given derivative rules (custom_rules_functions.cpp): AD calls the rule instead of
// differentiating the body, in every transform and at every order; rules written in fg ops are
// differentiated again.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "custom_rules_functions.funcgen.h"

namespace custom {
fg::Tensor clipped_loss(const fg::Tensor& x);
}

namespace {

using T = fg::Tensor;

void expect_close(const T& actual, const T& expected, const char* what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(fg::allclose(actual, expected, 1e-10, 1e-12)) << what << "\nactual\n" << actual << "\nexpected\n" << expected;
}

T values(std::vector<double> v) { return fg::from_blob(v.data(), {static_cast<int64_t>(v.size())}, fg::kDouble).clone(); }

}  // namespace

TEST(CustomVjp, TheRuleReplacesTheBodysGradient) {
  // clipped_loss(x) = sum(clip_gradient(3x) * x): d/dx = clip(x, -1, 1) * 3 + 3x, where the body
  // alone would give 3x + 3x.
  const T x = values({-2.0, -0.5, 0.25, 1.5});
  const T expected = x.clamp(-1, 1) * 3 + x * 3;
  expect_close(custom::clipped_grad(x), expected, "grad");
  const T batch = fg::stack({x, x * 0.1}, 0);
  const T per_sample = custom::clipped_per_sample(batch);
  expect_close(per_sample.select(0, 0), expected, "vmap(grad) row 0");
  expect_close(per_sample.select(0, 1), custom::clipped_grad(x * 0.1), "vmap(grad) row 1");
}

TEST(CustomVjp, JacrevOfTheAnnotatedFunctionItselfUsesItsRule) {
  // The jacobian of the identity seen through the rule: rows of the basis, clipped (unchanged).
  const T x = values({3.0, -4.0, 0.5});
  expect_close(custom::clipped_jacrev(x), fg::eye(3, fg::kDouble), "jacrev");
}

TEST(CustomJvp, StableWhereTheBodysDerivativeOverflows) {
  const T x = values({-800.0, -1.0, 0.0, 2.0, 800.0});
  const T t = values({1.0, 2.0, -1.0, 0.5, 3.0});
  const T sigmoid = values({0.0, 1 / (1 + std::exp(1.0)), 0.5, 1 / (1 + std::exp(-2.0)), 1.0});
  auto [out, tangent] = custom::softplus_jvp(x, t);
  expect_close(tangent, (t * sigmoid).sum(), "jvp tangent (the rule, finite at +-800)");
  expect_close(custom::softplus_grad(x), sigmoid, "grad (the custom_vjp rule)");
  // hessian = jacfwd(jacrev): the jvp of the custom_vjp rule's body, d sigmoid = s (1 - s)
  const T h = custom::softplus_hessian(x);
  expect_close(h, fg::diag_embed(sigmoid * (1 - sigmoid)), "hessian");
}

TEST(CustomVjp, RuleWithTwoGradientsAndSecondOrder) {
  // weighted_loss(x, w) = sum(sin(x)^2 w), through weighted's rule (grad x: 2 sin x w cos x).
  const T x = values({0.3, -1.2, 2.0}), w = values({1.5, -0.5, 2.0});
  auto [gx, gw] = custom::weighted_grad(x, w);
  expect_close(gx, x.sin() * x.cos() * w * 2, "grad x");
  expect_close(gw, x.sin() * x.sin(), "grad w");
  // grad(grad) at a scalar: d/dx (2 sin x cos x w) = 2 cos(2x) w
  for (double v : {0.3, -1.1}) {
    const T xs = fg::full({}, v, fg::kDouble), ws = fg::full({}, 1.7, fg::kDouble);
    EXPECT_NEAR(custom::weighted_second(xs, ws).item<double>(), 2 * std::cos(2 * v) * 1.7, 1e-12);
  }
  const T batch = fg::stack({x, x * 2}, 0);
  auto [bx, bw] = custom::weighted_per_sample(batch, w);
  for (int64_t b = 0; b < 2; ++b) {
    auto [ex, ew] = custom::weighted_grad(batch.select(0, b), w);
    expect_close(bx.select(0, b), ex, "vmap(grad) x");
    expect_close(bw.select(0, b), ew, "vmap(grad) w");
  }
}
