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

// The model layers: the runtime's forward and funcgen's gradient (of their decompositions) against
// torch's F.layer_norm, F.batch_norm, ... (seeds as make_golden.py gives them, in sorted order).
}  // namespace
namespace golden {
#define DECLARE_LAYER(name) fg::Tensor layer_##name(const fg::Tensor& x, const fg::Tensor& y);
DECLARE_LAYER(attention)
DECLARE_LAYER(batch_norm)
DECLARE_LAYER(embedding)
DECLARE_LAYER(group_norm)
DECLARE_LAYER(layer_norm)
DECLARE_LAYER(losses)
DECLARE_LAYER(masks)
DECLARE_LAYER(rearrangements)
DECLARE_LAYER(var_std)
#undef DECLARE_LAYER
}  // namespace golden
namespace {

using Layer = fg::Tensor (*)(const fg::Tensor&, const fg::Tensor&);
using LayerGrad = std::tuple<fg::Tensor, fg::Tensor> (*)(const fg::Tensor&, const fg::Tensor&);
void expect_layer(const std::string& name, int index, std::vector<int64_t> xs, std::vector<int64_t> ys, Layer f,
                  LayerGrad g) {
  SCOPED_TRACE(name);
  const fg::Tensor x = input(xs, 40 + 2 * index), y = input(ys, 41 + 2 * index);
  expect_golden("layer_" + name, 0, f(x, y));
  fg::Tensor gx, gy;
  ASSERT_NO_THROW(std::tie(gx, gy) = g(x, y));
  expect_golden("layer_" + name, 1, gx);
  expect_golden("layer_" + name, 2, gy);
}
#define EXPECT_LAYER(name, index, xs, ys) \
  expect_layer(#name, index, xs, ys, golden::layer_##name, golden::layer_##name##_grad)

TEST(TorchFuncGolden, ModelLayers) {
  EXPECT_LAYER(attention, 0, (std::vector<int64_t>{2, 3, 4}), (std::vector<int64_t>{2, 5, 4}));
  EXPECT_LAYER(batch_norm, 1, (std::vector<int64_t>{3, 2, 4}), (std::vector<int64_t>{2}));
  EXPECT_LAYER(embedding, 2, (std::vector<int64_t>{5, 3}), (std::vector<int64_t>{2, 3}));
  EXPECT_LAYER(group_norm, 3, (std::vector<int64_t>{2, 4, 3}), (std::vector<int64_t>{4}));
  EXPECT_LAYER(layer_norm, 4, (std::vector<int64_t>{2, 3, 4}), (std::vector<int64_t>{3, 4}));
  EXPECT_LAYER(losses, 5, (std::vector<int64_t>{3, 4}), (std::vector<int64_t>{3, 4}));
  EXPECT_LAYER(masks, 6, (std::vector<int64_t>{3, 4}), (std::vector<int64_t>{4}));
  EXPECT_LAYER(rearrangements, 7, (std::vector<int64_t>{2, 3, 4}), (std::vector<int64_t>{3, 4}));
  EXPECT_LAYER(var_std, 8, (std::vector<int64_t>{3, 4}), (std::vector<int64_t>{3, 4}));
}

}  // namespace
