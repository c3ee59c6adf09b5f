// The functions of hygiene_functions.cpp with users' names of every odd form against the same
// functions with plain names: the generated code compiles (the test builds) and computes the same.
#include <gtest/gtest.h>

#include "../test_inputs.h"

#include <tuple>

#include "hygiene.h"
#include "hygiene_functions.funcgen.h"

namespace {

using T = fg::Tensor;

using test_inputs::input;

void expect_same(const T& a, const T& b) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_TRUE(fg::allclose(a, b, 1e-12, 1e-12)) << a << "\n" << b;
}

TEST(Hygiene, OddNamesComputeAsPlainNames) {
  const T w = input({3}, 0.1), x = input({3}, 0.2), xs = input({5, 3}, 0.3), tw = input({3}, 0.4),
          tx = input({3}, 0.5);
  expect_same(hy::odd_psg(w, xs), hy::plain_psg(w, xs));
  const auto [o1, t1] = hy::odd_jvp(w, x, tw, tx);
  const auto [o2, t2] = hy::plain_jvp(w, x, tw, tx);
  expect_same(o1, o2);
  expect_same(t1, t2);
  auto [lo1, f1] = hy::odd_linearize(w, x);
  auto [lo2, f2] = hy::plain_linearize(w, x);
  expect_same(lo1, lo2);
  expect_same(f1(tw, tx), f2(tw, tx));
  const auto [jw1, jx1] = hy::odd_jacrev(w, x);
  const auto [jw2, jx2] = hy::plain_jacrev(w, x);
  expect_same(jw1, jw2);
  expect_same(jx1, jx2);
  expect_same(hy::odd_jacfwd(w, xs), hy::plain_jacfwd(w, xs));
  expect_same(hy::odd_hessian(w, x), hy::plain_hessian(w, x));
  expect_same(hy::odd_chunked(w, xs), hy::plain_chunked(w, xs));
}

TEST(Hygiene, UnderscoreStructureComputesAsPlainNames) {
  const hy::P p{input({3}, 0.6), input({3}, 0.7)};
  const T xs = input({4, 3}, 0.8), x = input({3}, 0.9);
  const hy::P g1 = hy::odd_structured_psg(p, xs), g2 = hy::plain_structured_psg(p, xs);
  expect_same(g1._, g2._);
  expect_same(g1.w_, g2.w_);
  const hy::P tp{input({3}, 1.0), input({3}, 1.1)};
  const auto [o1, t1] = hy::odd_structured_jvp(p, x, tp, x);
  const auto [o2, t2] = hy::plain_structured_jvp(p, x, tp, x);
  expect_same(o1, o2);
  expect_same(t1, t2);
}

TEST(Hygiene, SpecsNamedLikeOpsAreCalledUnambiguously) {
  const T xs = input({4, 3}, 1.2);
  expect_same(ge(xs), (xs * xs).sum(1));
  expect_same(calls_relu(xs), xs * xs * 2);  // ::relu is grad(squares): 2x
}

}  // namespace
