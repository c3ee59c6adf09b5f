// AD through control flow (control_flow_functions.cpp): every derivative is checked against
// central finite differences in float64 of the original function, on inputs that take each branch
// and run loops for trip counts known only at run time; vmap and jacrev/jacfwd against loops and
// each other.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <tuple>
#include <vector>

#include "control_flow_functions.funcgen.h"

namespace cf {
fg::Tensor branchy(const fg::Tensor& x, const fg::Tensor& w, bool scale);
fg::Tensor branchy_scalar(const fg::Tensor& x, bool odd);
fg::Tensor data_branch(const fg::Tensor& x);
fg::Tensor activation(const fg::Tensor& x, int kind);
fg::Tensor activation_sum(const fg::Tensor& x, int kind);
fg::Tensor rnn_state(const fg::Tensor& xs, const fg::Tensor& w, const fg::Tensor& u, const fg::Tensor& h0);
fg::Tensor rnn(const fg::Tensor& xs, const fg::Tensor& w, const fg::Tensor& u, const fg::Tensor& h0);
fg::Tensor halve(const fg::Tensor& x, double limit);
fg::Tensor converge(const fg::Tensor& x, double limit);
fg::Tensor loop_branch(const fg::Tensor& x, const fg::Tensor& w, int n);
fg::Tensor nested(const fg::Tensor& x, int n, int m);
fg::Tensor early(const fg::Tensor& x, const fg::Tensor& w, int mode);
fg::Tensor early_helper(const fg::Tensor& x, double limit);
fg::Tensor early_data(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> early_pair(const fg::Tensor& x, bool swap);
}  // namespace cf

namespace {

using T = fg::Tensor;
using Args = std::vector<T>;
using Fn = std::function<T(const Args&)>;
constexpr double kStep = 1e-6;

T rand64(fg::IntArrayRef sizes) { return fg::randn(sizes, fg::kDouble); }

// d f(args) / d args[which], by central differences: shape out.shape + in.shape.
T numeric_jacobian(const Fn& f, Args args, size_t which) {
  T x = args[which].clone().contiguous();
  const T out0 = f(args);
  std::vector<int64_t> shape(out0.sizes().begin(), out0.sizes().end());
  shape.insert(shape.end(), x.sizes().begin(), x.sizes().end());
  T jac = fg::zeros({out0.numel(), x.numel()}, fg::kDouble);
  double* px = x.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double saved = px[i];
    args[which] = x;
    px[i] = saved + kStep;
    const T up = f(args).contiguous().reshape({-1});
    px[i] = saved - kStep;
    const T down = f(args).contiguous().reshape({-1});
    px[i] = saved;
    jac.select(1, i).copy_((up - down) / (2 * kStep));
  }
  return jac.reshape(shape);
}

// The directional derivative of f along `tangents` (one per argument), by central differences.
T numeric_jvp(const Fn& f, const Args& args, const Args& tangents) {
  Args up = args, down = args;
  for (size_t i = 0; i < args.size(); ++i) {
    up[i] = args[i] + tangents[i] * kStep;
    down[i] = args[i] - tangents[i] * kStep;
  }
  return (f(up) - f(down)) / (2 * kStep);
}

void expect_close(const T& actual, const T& expected, const char* what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(fg::allclose(actual, expected, 1e-5, 1e-6)) << what << "\nactual\n" << actual << "\nexpected\n" << expected;
}

class ControlFlow : public ::testing::Test {
 protected:
  void SetUp() override { fg::manual_seed(5); }
};

}  // namespace

TEST_F(ControlFlow, IfOnAScalarParameterDifferentiatesTheTakenBranch) {
  const T x = rand64({3, 4}), w = rand64({4});
  for (bool scale : {true, false}) {
    const Fn f = [&](const Args& a) { return cf::branchy(a[0], a[1], scale); };
    auto [gx, gw] = cf::branchy_grad(x, w, scale);
    expect_close(gx, numeric_jacobian(f, {x, w}, 0), "grad x");
    expect_close(gw, numeric_jacobian(f, {x, w}, 1), "grad w");
    const T tx = rand64({3, 4}), tw = rand64({4});
    auto [out, tangent] = cf::branchy_jvp(x, w, scale, tx, tw);
    expect_close(out, cf::branchy(x, w, scale), "jvp primal");
    expect_close(tangent, numeric_jvp(f, {x, w}, {tx, tw}), "jvp tangent");
    // hessian (jacfwd of jacrev through the branch) against differences of the gradient
    const Fn g = [&](const Args& a) { return std::get<0>(cf::branchy_grad(a[0], w, scale)); };
    expect_close(cf::branchy_hessian(x, w, scale), numeric_jacobian(g, {x}, 0), "hessian");
    // per-example gradients: the loop of the unbatched gradient
    const T xs = rand64({5, 4});
    const T batched = cf::branchy_per_sample(xs, w, scale);
    for (int64_t b = 0; b < 5; ++b)
      expect_close(batched.select(0, b), std::get<0>(cf::branchy_grad(xs.select(0, b), w, scale)), "vmap(grad)");
  }
}

TEST_F(ControlFlow, SecondOrderThroughABranch) {
  // grad(grad(f)) through the branch's reverse pass, against the closed forms of f''
  for (double v : {-0.7, 0.3, 1.2}) {
    const T x = fg::full({}, v, fg::kDouble);
    EXPECT_NEAR(cf::branchy_second(x, true).item<double>(), 6 * v, 1e-12);
    EXPECT_NEAR(cf::branchy_second(x, false).item<double>(), 2 * std::cos(v * v) - 4 * v * v * std::sin(v * v), 1e-12);
  }
}

TEST_F(ControlFlow, IfOnATensorsValue) {
  for (double shift : {2.0, -2.0}) {  // one input takes each branch
    const T x = rand64({6}) + shift;
    const Fn f = [](const Args& a) { return cf::data_branch(a[0]); };
    expect_close(cf::data_branch_grad(x), numeric_jacobian(f, {x}, 0), "grad");
    const T t = rand64({6});
    expect_close(std::get<1>(cf::data_branch_jvp(x, t)), numeric_jvp(f, {x}, {t}), "jvp");
  }
}

TEST_F(ControlFlow, SwitchWithSharedAndDefaultCases) {
  const T x = rand64({2, 3});
  for (int kind : {0, 1, 2, 5}) {
    const Fn f = [kind](const Args& a) { return cf::activation(a[0], kind); };
    const T numeric = numeric_jacobian(f, {x}, 0);
    expect_close(cf::activation_jacrev(x, kind), numeric, "jacrev");
    expect_close(cf::activation_jacfwd(x, kind), numeric, "jacfwd");
    const Fn s = [kind](const Args& a) { return cf::activation_sum(a[0], kind); };
    expect_close(cf::activation_grad(x, kind), numeric_jacobian(s, {x}, 0), "grad");
  }
}

TEST_F(ControlFlow, RecurrentNetTimeLoop) {
  const int64_t n = 4;
  const T w = rand64({n, n}) * 0.5, u = rand64({n, 3}) * 0.5, h0 = rand64({n});
  for (int64_t steps : {0, 1, 5}) {  // the trip count is the number of rows of xs
    const T xs = rand64({steps, 3});
    const Args args{xs, w, u, h0};
    const Fn f = [](const Args& a) { return cf::rnn(a[0], a[1], a[2], a[3]); };
    auto [gxs, gw, gu, gh0] = cf::rnn_grad(xs, w, u, h0);
    if (steps > 0) expect_close(gxs, numeric_jacobian(f, args, 0), "grad xs");
    expect_close(gw, numeric_jacobian(f, args, 1), "grad w");
    expect_close(gu, numeric_jacobian(f, args, 2), "grad u");
    expect_close(gh0, numeric_jacobian(f, args, 3), "grad h0");

    const Args tangents{rand64({steps, 3}), rand64({n, n}), rand64({n, 3}), rand64({n})};
    auto [out, tangent] = cf::rnn_jvp(xs, w, u, h0, tangents[0], tangents[1], tangents[2], tangents[3]);
    expect_close(out, f(args), "jvp primal");
    expect_close(tangent, numeric_jvp(f, args, tangents), "jvp tangent");

    // linearize: the jvp_fn replays the loop with the primals it kept, for any tangents
    auto [lin_out, jvp_fn] = cf::rnn_linearize(xs, w, u, h0);
    expect_close(lin_out, f(args), "linearize primal");
    expect_close(jvp_fn(tangents[0], tangents[1], tangents[2], tangents[3]), tangent, "linearize tangent");
    expect_close(jvp_fn(tangents[0] * 2, tangents[1] * 2, tangents[2] * 2, tangents[3] * 2), tangent * 2,
                 "linearize is linear");

    // vjp: the pullback keeps the taped trips and can be called more than once
    auto [state, pullback] = cf::rnn_vjp(xs, w, u, h0);
    expect_close(state, cf::rnn_state(xs, w, u, h0), "vjp primal");
    const T ct = rand64({n});
    const Fn dot = [&](const Args& a) { return (cf::rnn_state(a[0], a[1], a[2], a[3]) * ct).sum(); };
    for (int call = 0; call < 2; ++call) {
      auto [vxs, vw, vu, vh0] = pullback(ct);
      expect_close(vw, numeric_jacobian(dot, args, 1), "vjp w");
      expect_close(vh0, numeric_jacobian(dot, args, 3), "vjp h0");
    }

    // jacrev (pullback vmapped over the basis, replaying the tapes) against jacfwd
    const Fn state_fn = [](const Args& a) { return cf::rnn_state(a[0], a[1], a[2], a[3]); };
    auto [jr_xs, jr_w] = cf::rnn_jacrev(xs, w, u, h0);
    auto [jf_xs, jf_w] = cf::rnn_jacfwd(xs, w, u, h0);
    expect_close(jr_w, numeric_jacobian(state_fn, args, 1), "jacrev w");
    expect_close(jf_w, jr_w, "jacfwd w");
    if (steps > 0) expect_close(jf_xs, jr_xs, "jacfwd xs");

    // hessian = jacfwd(jacrev): forward mode over the reverse pass, which replays the trips from
    // its tapes with a tape of tangents beside each
    const Fn g = [&](const Args& a) { return std::get<3>(cf::rnn_grad(xs, w, u, a[0])); };
    expect_close(cf::rnn_hessian(xs, w, u, h0), numeric_jacobian(g, {h0}, 0), "hessian");
    const Fn grad_w = [](const Args& a) { return std::get<1>(cf::rnn_grad(a[0], a[1], a[2], a[3])); };
    const Fn grad_h0 = [](const Args& a) { return std::get<3>(cf::rnn_grad(a[0], a[1], a[2], a[3])); };
    auto [hw, hh0] = cf::rnn_hessian_w_h0(xs, w, u, h0);
    auto [hww, hwh] = hw;
    auto [hhw, hhh] = hh0;
    expect_close(hww, numeric_jacobian(grad_w, args, 1), "hessian w w");
    expect_close(hwh, numeric_jacobian(grad_w, args, 3), "hessian w h0");
    expect_close(hhw, numeric_jacobian(grad_h0, args, 1), "hessian h0 w");
    expect_close(hhh, numeric_jacobian(grad_h0, args, 3), "hessian h0 h0");

    // Hessian-vector product: jvp of grad, against central differences of grad along the tangents
    auto [gw_again, hvp] = cf::rnn_hvp(xs, w, u, h0, tangents[0], tangents[1], tangents[2], tangents[3]);
    expect_close(gw_again, gw, "hvp primal");
    expect_close(hvp, numeric_jvp(grad_w, args, tangents), "hvp");

    // reverse mode over the reverse pass: the gradients of its stored trips go on tapes of
    // gradients, added where the trips are read back and taken off where they were stored
    const Fn jac_h0 = [](const Args& a) { return cf::rnn_state_jacrev_h0(a[0], a[1], a[2], a[3]); };
    auto [j2w, j2h0] = cf::rnn_state_jacrev2(xs, w, u, h0);
    expect_close(j2w, numeric_jacobian(jac_h0, args, 1), "jacrev(jacrev) w");
    expect_close(j2h0, numeric_jacobian(jac_h0, args, 3), "jacrev(jacrev) h0");

    // third order: reverse mode over the reverse pass's reverse gives its tapes of gradients tapes
    // of gradients of their own (pushed where it popped, read where it added); forward mode keeps
    // tapes of tangents beside them
    const Fn hess_h0 = [](const Args& a) { return cf::rnn_hessian_rev(a[0], a[1], a[2], a[3]); };
    const T third = numeric_jacobian(hess_h0, args, 3);
    expect_close(cf::rnn_third_rev(xs, w, u, h0), third, "jacrev(jacrev(jacrev)) h0");
    expect_close(cf::rnn_third_fwd(xs, w, u, h0), third, "jacfwd(jacrev(jacrev)) h0");
    expect_close(cf::rnn_hessian_rev(xs, w, u, h0), cf::rnn_hessian(xs, w, u, h0), "jacrev(jacrev) == hessian");
    auto [gw_vjp, grad_pullback] = cf::rnn_grad_vjp(xs, w, u, h0);
    expect_close(gw_vjp, gw, "vjp(grad) primal");
    const T ct_w = rand64({n, n});
    const Fn dot_w = [&](const Args& a) { return (std::get<1>(cf::rnn_grad(a[0], a[1], a[2], a[3])) * ct_w).sum(); };
    auto [pxs, pw, pu, ph0] = grad_pullback(ct_w);
    if (steps > 0) expect_close(pxs, numeric_jacobian(dot_w, args, 0), "vjp(grad) xs");
    expect_close(pw, numeric_jacobian(dot_w, args, 1), "vjp(grad) w");
    expect_close(pu, numeric_jacobian(dot_w, args, 2), "vjp(grad) u");
    expect_close(ph0, numeric_jacobian(dot_w, args, 3), "vjp(grad) h0");
  }
}

TEST_F(ControlFlow, PerSequenceHessianVectorProductsOfTheRecurrentNet) {
  const int64_t n = 3;
  const T w = rand64({n, n}) * 0.5, u = rand64({n, 2}) * 0.5, h0 = rand64({n});
  const T batch = rand64({4, 5, 2});  // four sequences of five steps
  const Args tangents{rand64({5, 2}), rand64({n, n}), rand64({n, 2}), rand64({n})};
  auto [gw, hvp] = cf::rnn_hvp_per_sample(batch, w, u, h0, tangents[0], tangents[1], tangents[2], tangents[3]);
  ASSERT_EQ(hvp.sizes(), (std::vector<int64_t>{4, n, n}));
  for (int64_t b = 0; b < 4; ++b) {  // the loop of the unbatched jvp(grad)
    auto [ew, ehvp] = cf::rnn_hvp(batch.select(0, b), w, u, h0, tangents[0], tangents[1], tangents[2], tangents[3]);
    expect_close(gw.select(0, b), ew, "vmap(jvp(grad)) primal");
    expect_close(hvp.select(0, b), ehvp, "vmap(jvp(grad)) tangent");
  }
}

TEST_F(ControlFlow, PerSequenceGradientsOfTheRecurrentNet) {
  const int64_t n = 3;
  const T w = rand64({n, n}) * 0.5, u = rand64({n, 2}) * 0.5, h0 = rand64({n});
  const T batch = rand64({4, 5, 2});  // four sequences of five steps
  auto [gw, gu] = cf::rnn_per_sample(batch, w, u, h0);
  ASSERT_EQ(gw.sizes(), (std::vector<int64_t>{4, n, n}));
  for (int64_t b = 0; b < 4; ++b) {
    auto [xs, ew, eu, eh] = cf::rnn_grad(batch.select(0, b), w, u, h0);
    expect_close(gw.select(0, b), ew, "vmap(grad) w");
    expect_close(gu.select(0, b), eu, "vmap(grad) u");
  }
}

TEST_F(ControlFlow, WhileLoopThatStopsOnAValue) {
  const T x = rand64({5}) * 3;
  const Fn f = [](const Args& a) { return cf::halve(a[0], 0.5); };
  expect_close(cf::halve_grad(x, 0.5), numeric_jacobian(f, {x}, 0), "grad");
  const T t = rand64({5});
  expect_close(std::get<1>(cf::halve_jvp(x, 0.5, t)), numeric_jvp(f, {x}, {t}), "jvp");
  const Fn g = [](const Args& a) { return cf::halve_grad(a[0], 0.5); };
  expect_close(cf::halve_hessian(x, 0.5), numeric_jacobian(g, {x}, 0), "hessian");
}

TEST_F(ControlFlow, LoopConditionsThatComputeTensors) {
  // Inputs below -1.5 stop the for loop early, some after its first trip; every loop runs a trip
  // count that only the values decide.
  for (const T& x : {rand64({5}) * 3, fg::tensor({0.3, -2.0, 1.2, 0.7}, fg::kDouble),
                     fg::tensor({0.4, 0.9, 1.1}, fg::kDouble)}) {
    const Fn f = [](const Args& a) { return cf::converge(a[0], 0.5); };
    expect_close(cf::converge_grad(x, 0.5), numeric_jacobian(f, {x}, 0), "grad");
    const T t = rand64(x.sizes());
    expect_close(std::get<1>(cf::converge_jvp(x, 0.5, t)), numeric_jvp(f, {x}, {t}), "jvp");
    const Fn g = [](const Args& a) { return cf::converge_grad(a[0], 0.5); };
    expect_close(cf::converge_hessian(x, 0.5), numeric_jacobian(g, {x}, 0), "hessian");
    expect_close(cf::converge_jacrev2(x, 0.5), cf::converge_hessian(x, 0.5), "jacrev(jacrev)");
  }
}

TEST_F(ControlFlow, BranchInsideALoopOnItsCounter) {
  const T x = rand64({4}), w = rand64({4});
  for (int n : {0, 1, 4, 5}) {
    const Fn f = [n](const Args& a) { return cf::loop_branch(a[0], a[1], n); };
    auto [gx, gw] = cf::loop_branch_grad(x, w, n);
    expect_close(gx, numeric_jacobian(f, {x, w}, 0), "grad x");
    expect_close(gw, numeric_jacobian(f, {x, w}, 1), "grad w");
    const T tx = rand64({4}), tw = rand64({4});
    expect_close(std::get<1>(cf::loop_branch_jvp(x, w, n, tx, tw)), numeric_jvp(f, {x, w}, {tx, tw}), "jvp");
    // second order: the branch taken on each trip is replayed by both reverse passes
    const Fn gx_fn = [n](const Args& a) { return std::get<0>(cf::loop_branch_grad(a[0], a[1], n)); };
    const Fn gw_fn = [n](const Args& a) { return std::get<1>(cf::loop_branch_grad(a[0], a[1], n)); };
    auto [hx, hw] = cf::loop_branch_hessian(x, w, n);
    auto [hxx, hxw] = hx;
    auto [hwx, hww] = hw;
    expect_close(hxx, numeric_jacobian(gx_fn, {x, w}, 0), "hessian x x");
    expect_close(hxw, numeric_jacobian(gx_fn, {x, w}, 1), "hessian x w");
    expect_close(hwx, numeric_jacobian(gw_fn, {x, w}, 0), "hessian w x");
    expect_close(hww, numeric_jacobian(gw_fn, {x, w}, 1), "hessian w w");
    auto [rxw, rww] = cf::loop_branch_jacrev2(x, w, n);
    expect_close(rxw, hxw, "jacrev(jacrev) x w");
    expect_close(rww, hww, "jacrev(jacrev) w w");
  }
}

TEST_F(ControlFlow, ThirdAndFourthOrderThroughALoopWithABranch) {
  const T x = rand64({4}), w = rand64({1}) * 0.5;
  for (int n : {0, 1, 4, 5}) {
    const Fn g1 = [n](const Args& a) { return std::get<1>(cf::loop_branch_grad(a[0], a[1], n)); };
    const Fn g2 = [n](const Args& a) { return cf::loop_branch_grad2(a[0], a[1], n); };
    const Fn g3 = [n](const Args& a) { return cf::loop_branch_grad3(a[0], a[1], n); };
    expect_close(cf::loop_branch_grad2(x, w, n), numeric_jacobian(g1, {x, w}, 1).reshape({1}), "grad(grad)");
    expect_close(cf::loop_branch_grad3(x, w, n), numeric_jacobian(g2, {x, w}, 1).reshape({1}), "grad^3");
    expect_close(cf::loop_branch_grad4(x, w, n), numeric_jacobian(g3, {x, w}, 1).reshape({1}), "grad^4");
    // the same batched over a basis (the trips a branch left without a value stay without one)
    const T w4 = rand64({4}) * 0.5;
    const Fn hess = [n](const Args& a) { return cf::loop_branch_hessian_w(a[0], a[1], n); };
    const T third = numeric_jacobian(hess, {x, w4}, 1);
    expect_close(cf::loop_branch_third_rev(x, w4, n), third, "jacrev^3");
    expect_close(cf::loop_branch_third_fwd(x, w4, n), third, "jacfwd(jacrev(jacrev))");
  }
}

TEST_F(ControlFlow, NestedLoops) {
  const T x = rand64({3}) * 0.5;
  for (auto [n, m] : {std::pair{1, 0}, std::pair{2, 3}, std::pair{3, 1}}) {
    const Fn f = [n = n, m = m](const Args& a) { return cf::nested(a[0], n, m); };
    expect_close(cf::nested_grad(x, n, m), numeric_jacobian(f, {x}, 0), "grad");
    const T t = rand64({3});
    expect_close(std::get<1>(cf::nested_jvp(x, n, m, t)), numeric_jvp(f, {x}, {t}), "jvp");
    // second order: the outer loop stores the inner loop's tapes per trip (tapes of tapes)
    const Fn g = [n = n, m = m](const Args& a) { return cf::nested_grad(a[0], n, m); };
    const T h = numeric_jacobian(g, {x}, 0);
    expect_close(cf::nested_hessian(x, n, m), h, "hessian");
    expect_close(cf::nested_jacrev2(x, n, m), h, "jacrev(jacrev)");
    const T x1 = rand64({1}) * 0.5;
    expect_close(cf::nested_grad_grad(x1, n, m), numeric_jacobian(g, {x1}, 0).reshape({1}), "grad(grad)");
    // third order: tapes of tapes of gradients get tapes of their own
    const Fn g2 = [n = n, m = m](const Args& a) { return cf::nested_grad_grad(a[0], n, m); };
    expect_close(cf::nested_grad3(x1, n, m), numeric_jacobian(g2, {x1}, 0).reshape({1}), "grad(grad(grad))");
    const Fn hess = [n = n, m = m](const Args& a) { return cf::nested_jacrev2(a[0], n, m); };
    const T third = numeric_jacobian(hess, {x}, 0);
    expect_close(cf::nested_third_rev(x, n, m), third, "jacrev(jacrev(jacrev))");
    expect_close(cf::nested_third_fwd(x, n, m), third, "jacfwd(jacrev(jacrev))");
  }
}

TEST_F(ControlFlow, EarlyReturnsTakeThePathOfEachCall) {
  const T x = rand64({3, 4}), w = rand64({4});
  for (int mode : {0, 1, 2}) {  // the guard's return, the nested return, the end
    const Fn f = [&](const Args& a) { return cf::early(a[0], a[1], mode); };
    auto [gx, gw] = cf::early_grad(x, w, mode);
    expect_close(gx, numeric_jacobian(f, {x, w}, 0), "grad x");
    expect_close(gw, numeric_jacobian(f, {x, w}, 1), "grad w");
    const T tx = rand64({3, 4}), tw = rand64({4});
    auto [out, tangent] = cf::early_jvp(x, w, mode, tx, tw);
    expect_close(out, cf::early(x, w, mode), "jvp primal");
    expect_close(tangent, numeric_jvp(f, {x, w}, {tx, tw}), "jvp tangent");
    const Fn g = [&](const Args& a) { return std::get<0>(cf::early_grad(a[0], w, mode)); };
    expect_close(cf::early_hessian(x, w, mode), numeric_jacobian(g, {x}, 0), "hessian");
    const T xs = rand64({5, 4});
    const T batched = cf::early_per_sample(xs, w, mode);
    for (int64_t b = 0; b < 5; ++b)
      expect_close(batched.select(0, b), std::get<0>(cf::early_grad(xs.select(0, b), w, mode)), "vmap(grad)");
  }
}

TEST_F(ControlFlow, EarlyReturnInAHelper) {
  const T x = rand64({6}) * 2;
  for (double limit : {0.0, 0.5}) {
    const Fn f = [limit](const Args& a) { return cf::early_helper(a[0], limit); };
    expect_close(cf::early_helper_grad(x, limit), numeric_jacobian(f, {x}, 0), "grad");
  }
}

TEST_F(ControlFlow, EarlyReturnOnATensorsValue) {
  for (double shift : {2.0, -2.0}) {
    const T x = rand64({5}) + shift;
    const Fn f = [](const Args& a) { return cf::early_data(a[0]); };
    const T numeric = numeric_jacobian(f, {x}, 0);
    expect_close(cf::early_data_grad(x), numeric, "grad");
    expect_close(cf::early_data_jacrev(x), numeric, "jacrev");
  }
}

TEST_F(ControlFlow, EarlyReturnOfATuple) {
  const T x = rand64({4});
  for (bool swap : {true, false}) {
    const Fn first = [swap](const Args& a) { return std::get<0>(cf::early_pair(a[0], swap)); };
    const Fn second = [swap](const Args& a) { return std::get<1>(cf::early_pair(a[0], swap)); };
    auto [fwd0, fwd1] = cf::early_pair_jacfwd(x, swap);
    auto [rev0, rev1] = cf::early_pair_jacrev(x, swap);
    expect_close(fwd0, numeric_jacobian(first, {x}, 0), "jacfwd 0");
    expect_close(fwd1, numeric_jacobian(second, {x}, 0), "jacfwd 1");
    expect_close(rev0, numeric_jacobian(first, {x}, 0), "jacrev 0");
    expect_close(rev1, numeric_jacobian(second, {x}, 0), "jacrev 1");
  }
}
