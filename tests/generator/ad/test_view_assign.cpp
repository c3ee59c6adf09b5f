// Assignment into views (view_assign_functions.cpp) through every transform: grad, jacrev and
// jacfwd against central finite differences in float64 of the function as written, vjp and jvp
// against that jacobian, hessian against finite differences of the generated grad, vmap and
// vmap(grad) against the loop of unbatched calls.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "../test_inputs.h"
#include "view_assign_functions.funcgen.h"

namespace va {  // the functions as written (defined in view_assign_functions.cpp)
fg::Tensor row_assign(const fg::Tensor& x);
fg::Tensor select_assign(const fg::Tensor& x);
fg::Tensor element_assign(const fg::Tensor& x);
fg::Tensor view_chain(const fg::Tensor& x);
fg::Tensor loop_assign(const fg::Tensor& x);
fg::Tensor assigned(const fg::Tensor& x);
}  // namespace va

namespace {

using T = fg::Tensor;
using Unary = std::function<T(const T&)>;
using test_inputs::input;
using test_inputs::loop_over_batch;
using test_inputs::numeric_jacobian;

void expect_close(const T& actual, const T& expected, const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(fg::allclose(actual, expected, 1e-5, 1e-6)) << what << "\nactual\n" << actual << "\nexpected\n" << expected;
}

struct Assignment {
  std::string name;
  Unary f, grad, jacrev, jacfwd, hessian, vmap, psg;
  std::function<std::tuple<T, T>(const T&, const T&)> jvp;
  std::function<T(const T&, const T&)> vjp;  // (x, ct) -> the pullback's gradient
};
void PrintTo(const Assignment& a, std::ostream* os) { *os << a.name; }

#define ASSIGNMENT(n)                                                                                          \
  Assignment {                                                                                                 \
    #n, va::n, va::n##_grad, va::n##_jacrev, va::n##_jacfwd, va::n##_hessian, va::n##_vmap, va::n##_psg,       \
        [](const T& x, const T& t) { return va::n##_jvp(x, t); }, [](const T& x, const T& ct) {              \
          auto [out, pullback] = va::n##_vjp(x);                                                               \
          return std::get<0>(pullback(ct));                                                                    \
        }                                                                                                      \
  }

class ViewAssignment : public ::testing::TestWithParam<Assignment> {};

TEST_P(ViewAssignment, EveryTransformAgreesWithFiniteDifferencesAndTheLoop) {
  const Assignment& a = GetParam();
  const T x = input({3, 4}, 0.4), t = input({3, 4}, 1.7);
  const T numeric = numeric_jacobian(a.f, x);
  const T grad = a.grad(x);
  expect_close(grad, numeric, "grad");
  expect_close(a.jacrev(x), numeric, "jacrev");
  expect_close(a.jacfwd(x), numeric, "jacfwd");
  expect_close(a.vjp(x, fg::full({}, 2.5, fg::kDouble)), numeric * 2.5, "vjp");
  auto [value, tangent] = a.jvp(x, t);
  expect_close(value, a.f(x), "jvp's value");
  expect_close(tangent, (numeric * t).sum(), "jvp's tangent");
  expect_close(a.hessian(x), numeric_jacobian(a.grad, x), "hessian");
  const T xs = input({2, 3, 4}, 0.9);
  expect_close(a.vmap(xs), loop_over_batch(a.f, xs), "vmap");
  expect_close(a.psg(xs), loop_over_batch(a.grad, xs), "vmap(grad)");
}

INSTANTIATE_TEST_SUITE_P(Cxx, ViewAssignment,
                         ::testing::Values(ASSIGNMENT(row_assign), ASSIGNMENT(select_assign),
                                           ASSIGNMENT(element_assign), ASSIGNMENT(view_chain),
                                           ASSIGNMENT(loop_assign)),
                         [](const ::testing::TestParamInfo<Assignment>& info) { return info.param.name; });

TEST(ViewAssignment, OfATensorResult) {
  const T x = input({3, 4}, 0.2), t = input({3, 4}, 2.3), ct = input({3, 4}, 3.1);
  const T numeric = numeric_jacobian(va::assigned, x);  // [3, 4, 3, 4]
  expect_close(va::assigned_jacrev(x), numeric, "jacrev");
  expect_close(va::assigned_jacfwd(x), numeric, "jacfwd");
  auto [out, pullback] = va::assigned_vjp(x);
  expect_close(out, va::assigned(x), "vjp's value");
  expect_close(std::get<0>(pullback(ct)), (numeric * ct.reshape({3, 4, 1, 1})).sum({0, 1}), "vjp");
  auto [value, tangent] = va::assigned_jvp(x, t);
  expect_close(tangent, (numeric * t).sum({2, 3}), "jvp");
  // The overwritten column has no derivative; the assigned row's is that of x[2] * x[1].
  expect_close(numeric.select(1, 3), fg::zeros({3, 3, 4}, fg::kDouble), "the filled column (finite differences)");
  const T xs = input({2, 3, 4}, 1.4);
  expect_close(va::assigned_vmap(xs), loop_over_batch(va::assigned, xs), "vmap");
}

}  // namespace
