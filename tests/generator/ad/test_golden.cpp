// funcgen's transforms against torch.func: the generated code of golden_functions.cpp, run on the
// inputs tests/golden/make_golden.py gave torch.func, must reproduce its stored results.
#include <gtest/gtest.h>

#include "golden_cases.h"
#include "golden_functions.funcgen.h"

namespace {

using namespace golden_cases;

constexpr int64_t IN = 8, HID = 16, OUT = 4, N = 6, D = 16, B = 4;

struct Mlp {
  fg::Tensor w1 = input({HID, IN}, 1), b1 = input({HID}, 2), w2 = input({OUT, HID}, 3), b2 = input({OUT}, 4);
  fg::Tensor xs = input({N, IN}, 5);
  fg::Tensor targets = fg::tensor(std::vector<int64_t>{0, 1, 2, 3, 0, 1});  // i % OUT
};

TEST(TorchFuncGolden, PerSampleGradientsOfAnMlp) {
  Mlp m;
  auto [g1, gb1, g2, gb2] = golden::per_sample_grads(m.w1, m.b1, m.w2, m.b2, m.xs, m.targets);
  expect_golden("per_sample_grads", 0, g1);
  expect_golden("per_sample_grads", 1, gb1);
  expect_golden("per_sample_grads", 2, g2);
  expect_golden("per_sample_grads", 3, gb2);
  auto [e1, eb1, e2, eb2] = golden::example_grad(m.w1, m.b1, m.w2, m.b2, m.xs[0], m.targets[0]);
  expect_golden("example_grad", 0, e1);
  expect_golden("example_grad", 3, eb2);
}

TEST(TorchFuncGolden, ModelEnsembling) {
  Mlp m;
  const std::vector<fg::Tensor> stacked = stacked_ensemble();
  expect_golden("ensemble", 0, golden::ensemble(stacked[0], stacked[1], stacked[2], stacked[3], m.xs));
}

struct Predict {
  fg::Tensor weight = input({D, D}, 20), bias = input({D}, 21), x = input({D}, 22), xb = input({B, D}, 23);
};

TEST(TorchFuncGolden, JacobiansOfLinearTanh) {
  Predict p;
  expect_golden("jac_rev", 0, golden::jac_rev(p.weight, p.bias, p.x));
  expect_golden("jac_fwd", 0, golden::jac_fwd(p.weight, p.bias, p.x));
  auto [rw, rx] = golden::jac_rev_wx(p.weight, p.bias, p.x);
  expect_golden("jac_rev_wx", 0, rw);
  expect_golden("jac_rev_wx", 1, rx);
  auto [fw, fx] = golden::jac_fwd_wx(p.weight, p.bias, p.x);
  expect_golden("jac_fwd_wx", 0, fw);
  expect_golden("jac_fwd_wx", 1, fx);
}

TEST(TorchFuncGolden, BatchedJacobiansAndHessians) {
  Predict p;
  expect_golden("batch_jac_rev", 0, golden::batch_jac_rev(p.weight, p.bias, p.xb));
  expect_golden("batch_jac_fwd", 0, golden::batch_jac_fwd(p.weight, p.bias, p.xb));
  expect_golden("hess", 0, golden::hess(p.weight, p.bias, p.x));
  expect_golden("batch_hess", 0, golden::batch_hess(p.weight, p.bias, p.xb));
}

TEST(TorchFuncGolden, VjpJvpLinearize) {
  Predict p;
  auto [out, pullback] = golden::predict_vjp(p.weight, p.bias, p.x);
  expect_golden("predict_vjp", 0, out);
  auto [gw, gb, gx] = pullback(input({D}, 24));
  expect_golden("predict_vjp", 1, gw);
  expect_golden("predict_vjp", 2, gb);
  expect_golden("predict_vjp", 3, gx);
  const fg::Tensor tw = input({D, D}, 25), tb = input({D}, 26), tx = input({D}, 27);
  auto [o, t] = golden::predict_jvp(p.weight, p.bias, p.x, tw, tb, tx);
  expect_golden("predict_jvp", 0, o);
  expect_golden("predict_jvp", 1, t);
  auto [lo, jvp_fn] = golden::predict_linearize(p.weight, p.bias, p.x);
  expect_golden("predict_linearize", 0, lo);
  expect_golden("predict_linearize", 1, jvp_fn(tw, tb, tx));
  // The jvp_fn is linear and reusable: a second call with doubled tangents doubles the result.
  expect_golden("predict_linearize", 1, jvp_fn(tw * 2, tb * 2, tx * 2) / 2);
}

TEST(TorchFuncGolden, HessianVectorProductAndGradAndValue) {
  const fg::Tensor x = input({D}, 30), v = input({D}, 31);
  auto [g, hv] = golden::hvp(x, v);
  expect_golden("hvp", 0, g);
  expect_golden("hvp", 1, hv);
  auto [g2, value] = golden::energy_grad_and_value(x);
  expect_golden("energy_grad_and_value", 0, g2);
  expect_golden("energy_grad_and_value", 1, value);
}

TEST(TorchFuncGolden, HigherOrderGrad) {
  const fg::Tensor x = fg::full({}, 0.7, fg::kDouble);
  expect_golden("second_derivative", 0, golden::second_derivative(x));
  expect_golden("third_derivative", 0, golden::third_derivative(x));
}

TEST(TorchFuncGolden, HasAux) {
  const fg::Tensor w = input({D, 3}, 40), x = input({5, D}, 41);
  auto [g, aux] = golden::loss_grad_aux(w, x);
  expect_golden("loss_grad_aux", 0, g);
  expect_golden("loss_grad_aux", 1, aux);
  auto [g2, value_aux] = golden::loss_grad_and_value_aux(w, x);
  expect_golden("loss_grad_and_value_aux", 0, g2);
  expect_golden("loss_grad_and_value_aux", 1, std::get<0>(value_aux));
  expect_golden("loss_grad_and_value_aux", 2, std::get<1>(value_aux));
}

}  // namespace
