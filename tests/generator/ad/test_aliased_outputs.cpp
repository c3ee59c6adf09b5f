// Outputs that are one tensor more than once (aliased_outputs_functions.cpp): vjp, jacrev, jvp,
// jacfwd, vjp(vmap), vmap(jacrev), vmap(grad) of a cotangent product, and grad and hessian through
// a helper, against central finite differences in float64 of the functions as written.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "aliased_outputs_functions.funcgen.h"
#include "../test_inputs.h"
#include "aliased_outputs.h"

namespace ao {  // the functions as written (defined in aliased_outputs_functions.cpp)
std::tuple<fg::Tensor, fg::Tensor> dup(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> dups(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor, fg::Tensor, fg::Tensor> aliases(const fg::Tensor& x);
Both both(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> with_aux(const fg::Tensor& x);
fg::Tensor through_helper(const fg::Tensor& x);
}  // namespace ao

namespace {

using T = fg::Tensor;
using Unary = std::function<T(const T&)>;
using test_inputs::input;
using test_inputs::numeric_jacobian;

// ct^T J and J t for a jacobian of shape out.shape + x.shape.
T pull(const T& jac, const T& ct, const T& x) {
  return fg::matmul(ct.reshape({1, -1}), jac.reshape({ct.numel(), x.numel()})).reshape(x.sizes());
}
T push(const T& jac, const T& t, const T& out) {
  return fg::matmul(jac.reshape({out.numel(), t.numel()}), t.reshape({-1, 1})).reshape(out.sizes());
}

void expect_close(const T& actual, const T& expected, const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(fg::allclose(actual, expected, 1e-5, 1e-6)) << what << "\nactual\n" << actual << "\nexpected\n" << expected;
}

template <size_t K, typename F>
Unary output(F f) {
  return [f](const T& x) { return std::get<K>(f(x)); };
}

const T x0 = input({3, 4}, 0.3), t0 = input({3, 4}, 1.1), c1 = input({3, 4}, 2.0), c2 = input({3, 4}, 2.9);

}  // namespace

TEST(AliasedOutputs, AnInputReturnedTwiceGetsBothCotangents) {
  const T j0 = numeric_jacobian(output<0>(ao::dup), x0), j1 = numeric_jacobian(output<1>(ao::dup), x0);
  auto [out, pullback] = ao::dup_vjp(x0);
  expect_close(std::get<0>(out), x0, "vjp's first output");
  expect_close(std::get<1>(out), x0, "vjp's second output");
  expect_close(std::get<0>(pullback(c1, c2)), pull(j0, c1, x0) + pull(j1, c2, x0), "vjp");
  expect_close(std::get<0>(pullback(fg::ones_like(x0), fg::ones_like(x0))), fg::full_like(x0, 2.0), "vjp of ones");
  auto [r0, r1] = ao::dup_jacrev(x0);
  expect_close(r0, j0, "jacrev, first");
  expect_close(r1, j1, "jacrev, second");
  auto [f0, f1] = ao::dup_jacfwd(x0);
  expect_close(f0, j0, "jacfwd, first");
  expect_close(f1, j1, "jacfwd, second");
  auto [values, tangents] = ao::dup_jvp(x0, t0);
  expect_close(std::get<0>(tangents), push(j0, t0, x0), "jvp, first");
  expect_close(std::get<1>(tangents), push(j1, t0, x0), "jvp, second");
}

TEST(AliasedOutputs, AValueReturnedTwiceGetsBothCotangents) {
  const T j0 = numeric_jacobian(output<0>(ao::dups), x0), j1 = numeric_jacobian(output<1>(ao::dups), x0);
  auto [out, pullback] = ao::dups_vjp(x0);
  expect_close(std::get<1>(out), x0.sin(), "vjp's output");
  expect_close(std::get<0>(pullback(c1, c2)), pull(j0, c1, x0) + pull(j1, c2, x0), "vjp");
  auto [r0, r1] = ao::dups_jacrev(x0);
  expect_close(r0, j0, "jacrev, first");
  expect_close(r1, j1, "jacrev, second");
  auto [f0, f1] = ao::dups_jacfwd(x0);
  expect_close(f0, j0, "jacfwd, first");
  expect_close(f1, j1, "jacfwd, second");
  auto [values, tangents] = ao::dups_jvp(x0, t0);
  expect_close(std::get<0>(tangents), push(j0, t0, x0), "jvp, first");
  expect_close(std::get<1>(tangents), push(j1, t0, x0), "jvp, second");
}

TEST(AliasedOutputs, BatchedAValueReturnedTwiceGetsBothCotangents) {
  const T xs = input({2, 3, 4}, 0.7), cs1 = input({2, 3, 4}, 1.3), cs2 = input({2, 3, 4}, 2.2);
  auto [out, pullback] = ao::dups_vjp_of_vmap(xs);  // vjp(vmap(dups))
  const T g = std::get<0>(pullback(cs1, cs2));
  const T batched = ao::dot_dups_batched(x0, cs1, cs2);  // vmap(grad(<dups(x), ct>)), x shared
  const auto [jr0, jr1] = ao::dups_vjacrev(xs);  // vmap(jacrev(dups))
  for (int64_t b = 0; b < 2; ++b) {
    const T x = xs[b];
    const T j0 = numeric_jacobian(output<0>(ao::dups), x), j1 = numeric_jacobian(output<1>(ao::dups), x);
    expect_close(g[b], pull(j0, cs1[b], x) + pull(j1, cs2[b], x), "vjp(vmap), example " + std::to_string(b));
    const T k0 = numeric_jacobian(output<0>(ao::dups), x0), k1 = numeric_jacobian(output<1>(ao::dups), x0);
    expect_close(batched[b], pull(k0, cs1[b], x0) + pull(k1, cs2[b], x0), "vmap(grad), example " + std::to_string(b));
    expect_close(jr0[b], j0, "vmap(jacrev), first, example " + std::to_string(b));
    expect_close(jr1[b], j1, "vmap(jacrev), second, example " + std::to_string(b));
  }
}

TEST(AliasedOutputs, CopiesAndViewsOfOneValue) {
  std::vector<T> jac;
  jac.push_back(numeric_jacobian(output<0>(ao::aliases), x0));
  jac.push_back(numeric_jacobian(output<1>(ao::aliases), x0));
  jac.push_back(numeric_jacobian(output<2>(ao::aliases), x0));
  jac.push_back(numeric_jacobian(output<3>(ao::aliases), x0));
  const T cv = input({4, 3}, 3.3), cs = input({3, 4}, 4.1);
  auto [out, pullback] = ao::aliases_vjp(x0);
  expect_close(std::get<0>(pullback(c1, c2, cv, cs)),
               pull(jac[0], c1, x0) + pull(jac[1], c2, x0) + pull(jac[2], cv, x0) + pull(jac[3], cs, x0), "vjp");
  auto [r0, r1, r2, r3] = ao::aliases_jacrev(x0);
  auto [f0, f1, f2, f3] = ao::aliases_jacfwd(x0);
  const std::vector<T> rev{r0, r1, r2, r3}, fwd{f0, f1, f2, f3};
  auto [values, tangents] = ao::aliases_jvp(x0, t0);
  const std::vector<T> tan{std::get<0>(tangents), std::get<1>(tangents), std::get<2>(tangents), std::get<3>(tangents)};
  const std::vector<T> outs{std::get<0>(values), std::get<1>(values), std::get<2>(values), std::get<3>(values)};
  for (size_t k = 0; k < 4; ++k) {
    expect_close(rev[k], jac[k], "jacrev, output " + std::to_string(k));
    expect_close(fwd[k], jac[k], "jacfwd, output " + std::to_string(k));
    expect_close(tan[k], push(jac[k], t0, outs[k]), "jvp, output " + std::to_string(k));
  }
}

TEST(AliasedOutputs, AStructureHoldingOneTensorInBothLeaves) {
  const T j = numeric_jacobian([](const T& x) { return ao::both(x).first; }, x0);
  auto [out, pullback] = ao::both_vjp(x0);
  expect_close(out.second, x0.exp() * 0.5, "vjp's output");
  expect_close(std::get<0>(pullback(ao::Both{c1, c2})), pull(j, c1, x0) + pull(j, c2, x0), "vjp");
  auto [value, tangent] = ao::both_jvp(x0, t0);
  expect_close(tangent.first, push(j, t0, x0), "jvp, first");
  expect_close(tangent.second, push(j, t0, x0), "jvp, second");
}

TEST(AliasedOutputs, AnAuxThatIsTheOutput) {
  const T j = numeric_jacobian(output<0>(ao::with_aux), x0);
  auto [out, pullback, aux] = ao::aux_vjp(x0);
  expect_close(aux, x0.sin() * x0, "aux");
  expect_close(std::get<0>(pullback(c1)), pull(j, c1, x0), "vjp");
}

TEST(AliasedOutputs, AHelperThatReturnsOneValueTwice) {
  const Unary f = [](const T& x) { return ao::through_helper(x); };
  const T g = ao::helper_grad(x0);
  expect_close(g, numeric_jacobian(f, x0), "grad");
  expect_close(ao::helper_hessian(x0), numeric_jacobian(ao::helper_grad, x0), "hessian");
  const T xs = input({2, 3, 4}, 0.9);
  const T psg = ao::helper_psg(xs);
  for (int64_t b = 0; b < 2; ++b) expect_close(psg[b], ao::helper_grad(xs[b]), "vmap(grad), example " + std::to_string(b));
}
