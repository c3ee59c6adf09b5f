// Every transform over functions written with each construct of constructs_functions.cpp: grad,
// jacfwd and jvp against central finite differences in float64 of the function; hessian against
// finite differences of the generated grad; jacrev(jacrev) and jvp(grad) against the hessian; vmap
// and vmap(grad) and vmap(jacrev) against a loop over the batch of the unbatched function and grad.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "constructs_containers.funcgen.h"
#include "constructs_functions.funcgen.h"
#include "constructs_objects.funcgen.h"
#include "constructs_pointers.funcgen.h"
#include "constructs_recursion.funcgen.h"
#include "../test_inputs.h"

namespace cs {  // the functions as written (defined in constructs_functions.cpp)
fg::Tensor loop_break(const fg::Tensor& x);
fg::Tensor loop_continue(const fg::Tensor& x);
fg::Tensor loop_return(const fg::Tensor& x);
fg::Tensor nested_jumps(const fg::Tensor& x);
fg::Tensor switch_jumps(const fg::Tensor& x);
fg::Tensor choices(const fg::Tensor& x);
fg::Tensor last_trip(const fg::Tensor& x);
fg::Tensor helper_jumps(const fg::Tensor& x);
fg::Tensor header_helpers(const fg::Tensor& x);
fg::Tensor range_for(const fg::Tensor& x);
fg::Tensor lambdas(const fg::Tensor& x);
fg::Tensor shape_ints(const fg::Tensor& x);
fg::Tensor bindings(const fg::Tensor& x);
fg::Tensor pushed(const fg::Tensor& x);
fg::Tensor slices(const fg::Tensor& x);
fg::Tensor pieces(const fg::Tensor& x);
fg::Tensor switch_breaks(const fg::Tensor& x);
fg::Tensor braced(const fg::Tensor& x);
fg::Tensor local_structs(const fg::Tensor& x);
fg::Tensor out_params(const fg::Tensor& x);
fg::Tensor passed_on(const fg::Tensor& x);
fg::Tensor lambdas_passed(const fg::Tensor& x);
fg::Tensor listed(const fg::Tensor& x);
fg::Tensor assigned(const fg::Tensor& x);
fg::Tensor counters(const fg::Tensor& x);
fg::Tensor captures(const fg::Tensor& x);
fg::Tensor built_lists(const fg::Tensor& x);
fg::Tensor element_refs(const fg::Tensor& x);
fg::Tensor nested_cases(const fg::Tensor& x);
fg::Tensor pointers(const fg::Tensor& x);
fg::Tensor arrays_written(const fg::Tensor& x);
fg::Tensor condition_vars(const fg::Tensor& x);
fg::Tensor tuples_and_fills(const fg::Tensor& x);
fg::Tensor whole_state(const fg::Tensor& x);  // constructs_containers.cpp
fg::Tensor braced_state(const fg::Tensor& x);
fg::Tensor layer_vector(const fg::Tensor& x);
fg::Tensor layer_helper(const fg::Tensor& x);
fg::Tensor array_loops(const fg::Tensor& x);
// constructs_objects.cpp: objects of the user's classes
fg::Tensor number_objects(const fg::Tensor& x);
fg::Tensor object_writes(const fg::Tensor& x);
fg::Tensor compound_assign(const fg::Tensor& x);
fg::Tensor devirtualized(const fg::Tensor& x);
std::vector<fg::Tensor> unrolled(const fg::Tensor& x0, const fg::Tensor& w, int64_t steps);
std::vector<fg::Tensor> filled_rows(const fg::Tensor& x);
std::vector<fg::Tensor> either(const fg::Tensor& x, const fg::Tensor& w, bool from_x);
fg::Tensor defaults(const fg::Tensor& x, double scale, int64_t power);
std::tuple<fg::Tensor, fg::Tensor> shape_aux(const fg::Tensor& x);
fg::Tensor pointer_params(const fg::Tensor& x);  // (constructs_pointers.cpp)
fg::Tensor lazy_assignments(const fg::Tensor& x);
fg::Tensor lazy_compound(const fg::Tensor& x);
// (constructs_recursion.cpp)
fg::Tensor recursion_conditional(const fg::Tensor& x);
fg::Tensor recursion_if(const fg::Tensor& x);
fg::Tensor recursion_mutual(const fg::Tensor& x);
fg::Tensor recursion_tree(const fg::Tensor& x);
fg::Tensor recursion_template(const fg::Tensor& x);
fg::Tensor recursion_structured(const fg::Tensor& x);
fg::Tensor recursion_switch(const fg::Tensor& x);
}  // namespace cs

namespace {

using T = fg::Tensor;
using test_inputs::loop_over_batch;
using test_inputs::numeric_jacobian;
using Unary = std::function<T(const T&)>;
using Binary = std::function<std::tuple<T, T>(const T&, const T&)>;

// One construct's function and what funcgen generated from it.
struct Construct {
  std::string name;
  Unary f, grad, jacfwd, hessian, jacrev2, vmap, psg, vjacrev;
  Binary jvp, hvp;
};

#define CONSTRUCT(n)                                                                                     \
  Construct {                                                                                            \
    #n, cs::n, cs::n##_grad, cs::n##_jacfwd, cs::n##_hessian, cs::n##_jacrev2, cs::n##_vmap, cs::n##_psg, \
        cs::n##_vjacrev, cs::n##_jvp, cs::n##_hvp                                                         \
  }

std::vector<Construct> constructs() {
  return {CONSTRUCT(loop_break), CONSTRUCT(loop_continue), CONSTRUCT(loop_return), CONSTRUCT(nested_jumps), CONSTRUCT(switch_jumps), CONSTRUCT(choices),
          CONSTRUCT(helper_jumps),
          CONSTRUCT(last_trip), CONSTRUCT(header_helpers), CONSTRUCT(range_for), CONSTRUCT(lambdas),
          CONSTRUCT(shape_ints), CONSTRUCT(bindings), CONSTRUCT(pushed), CONSTRUCT(slices), CONSTRUCT(pieces),
          CONSTRUCT(switch_breaks), CONSTRUCT(braced), CONSTRUCT(local_structs), CONSTRUCT(out_params), CONSTRUCT(passed_on),
          CONSTRUCT(lambdas_passed), CONSTRUCT(listed), CONSTRUCT(assigned), CONSTRUCT(counters),
          CONSTRUCT(captures), CONSTRUCT(built_lists), CONSTRUCT(element_refs), CONSTRUCT(nested_cases), CONSTRUCT(condition_vars), CONSTRUCT(tuples_and_fills),
          CONSTRUCT(pointers), CONSTRUCT(arrays_written),
          CONSTRUCT(whole_state), CONSTRUCT(braced_state), CONSTRUCT(layer_vector), CONSTRUCT(layer_helper), CONSTRUCT(array_loops),
          CONSTRUCT(pointer_params), CONSTRUCT(lazy_assignments), CONSTRUCT(lazy_compound),
          CONSTRUCT(number_objects), CONSTRUCT(object_writes), CONSTRUCT(compound_assign), CONSTRUCT(devirtualized),
          CONSTRUCT(recursion_conditional), CONSTRUCT(recursion_if), CONSTRUCT(recursion_mutual),
          CONSTRUCT(recursion_tree), CONSTRUCT(recursion_template), CONSTRUCT(recursion_structured),
          CONSTRUCT(recursion_switch)};
}

// d f(x) / d x by central differences: shape out.shape + x.shape.
void PrintTo(const Construct& c, std::ostream* os) { *os << c.name; }

void expect_close(const T& actual, const T& expected, const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(fg::allclose(actual, expected, 1e-5, 1e-6)) << what << "\nactual\n" << actual << "\nexpected\n" << expected;
}

class Constructs : public ::testing::TestWithParam<Construct> {
 protected:
  void SetUp() override { fg::manual_seed(11); }
};

TEST_P(Constructs, EveryTransformAgreesWithFiniteDifferencesAndTheLoop) {
  const Construct& c = GetParam();
  const T x = fg::randn({3, 4}, fg::kDouble), t = fg::randn({3, 4}, fg::kDouble);
  const T grad = c.grad(x);
  expect_close(grad, numeric_jacobian(c.f, x), "grad");
  expect_close(c.jacfwd(x), grad, "jacfwd");
  auto [value, tangent] = c.jvp(x, t);
  expect_close(value, c.f(x), "jvp's value");
  expect_close(tangent, (grad * t).sum(), "jvp's tangent");
  const T hessian = c.hessian(x);
  expect_close(hessian, numeric_jacobian(c.grad, x), "hessian");
  expect_close(c.jacrev2(x), hessian, "jacrev(jacrev)");
  auto [g, hvp] = c.hvp(x, t);
  expect_close(g, grad, "jvp(grad)'s value");
  expect_close(hvp, (hessian * t).sum({2, 3}), "jvp(grad)'s tangent");
  const T xs = fg::randn({2, 3, 4}, fg::kDouble);
  expect_close(c.vmap(xs), loop_over_batch(c.f, xs), "vmap");
  expect_close(c.psg(xs), loop_over_batch(c.grad, xs), "vmap(grad)");
  expect_close(c.vjacrev(xs), loop_over_batch(c.grad, xs), "vmap(jacrev)");
}

TEST(DefaultArguments, StayOnTheGeneratedFunctions) {
  const T x = fg::randn({3, 4}, fg::kDouble), xs = fg::randn({2, 3, 4}, fg::kDouble);
  const Unary f = [](const T& a) { return cs::defaults(a, 2.0, 3); };
  expect_close(cs::defaults_grad(x), numeric_jacobian(f, x), "grad with the defaults");
  expect_close(cs::defaults_grad(x, 0.5), numeric_jacobian([](const T& a) { return cs::defaults(a, 0.5, 3); }, x),
               "grad with a scale");
  expect_close(cs::defaults_vmap(xs), loop_over_batch(f, xs), "vmap with the defaults");
}

TEST(HasAux, UnderVmapOfJacrevWithAShapeInt) {
  const T xs = fg::randn({2, 3, 3}, fg::kDouble);
  const auto [jac, aux] = cs::shape_aux_vjacrev(xs);
  for (int64_t b = 0; b < 2; ++b) {
    const Unary f = [](const T& x) { return std::get<0>(cs::shape_aux(x)); };
    expect_close(jac[b], numeric_jacobian(f, xs[b]), "vmap(jacrev) with has_aux");
    expect_close(aux[b], std::get<1>(cs::shape_aux(xs[b])), "its aux");
  }
}

INSTANTIATE_TEST_SUITE_P(Cxx, Constructs, ::testing::ValuesIn(constructs()),
                         [](const ::testing::TestParamInfo<Construct>& info) { return info.param.name; });

}  // namespace

// A vector of tensors built at run time and returned: under vmap, each element batched, equal to the
// loop of unbatched calls (nested, with out_dims, and with an element that is the same in every
// example).
void expect_lists_equal(const std::vector<T>& batched, const std::vector<std::vector<T>>& per_example, int64_t dim) {
  ASSERT_FALSE(per_example.empty());
  ASSERT_EQ(batched.size(), per_example[0].size());
  for (size_t i = 0; i < batched.size(); ++i) {
    std::vector<T> items;
    for (const auto& example : per_example) items.push_back(example[i]);
    expect_close(batched[i], fg::stack(items, dim), "element " + std::to_string(i));
  }
}

TEST(ReturnedLists, UnderVmapAreTheLoopsElementByElement) {
  fg::manual_seed(5);
  const T xs = fg::randn({4, 3}, fg::kDouble), w = fg::randn({3}, fg::kDouble);
  std::vector<std::vector<T>> loop;
  for (int64_t b = 0; b < 4; ++b) loop.push_back(cs::unrolled(xs[b], w, 3));
  expect_lists_equal(cs::unrolled_vmap(xs, w, 3), loop, 0);

  const T x2 = fg::randn({2, 5, 3}, fg::kDouble), w2 = fg::randn({2, 3}, fg::kDouble);
  const std::vector<T> nested = cs::unrolled_vmap2(x2, w2, 2);  // outer level over dim 1 of x2, out at dim 1
  ASSERT_EQ(nested.size(), 2u);
  for (int64_t j = 0; j < 5; ++j) {
    std::vector<std::vector<T>> inner;
    for (int64_t i = 0; i < 2; ++i) inner.push_back(cs::unrolled(x2[i][j], w2[i], 2));
    for (size_t k = 0; k < nested.size(); ++k) {
      std::vector<T> items;
      for (const auto& e : inner) items.push_back(e[k]);
      expect_close(nested[k].select(1, j), fg::stack(items), "nested element " + std::to_string(k));
    }
  }

  const T x3 = fg::randn({3, 2, 2}, fg::kDouble);
  loop.clear();
  for (int64_t b = 0; b < 3; ++b) loop.push_back(cs::filled_rows(x3[b]));
  expect_lists_equal(cs::filled_rows_vmap(x3), loop, 0);

  for (bool from_x : {true, false}) {
    loop.clear();
    for (int64_t b = 0; b < 4; ++b) loop.push_back(cs::either(xs[b], w, from_x));
    expect_lists_equal(cs::either_vmap(xs, w, from_x), loop, 0);
  }
}
