// Structured parameters and results (torch.func's pytrees): the tutorials' ports of
// structures_functions.cpp against the values torch.func computed for the same inputs (the flat
// ports' golden cases: the same numbers in other containers), the rest against central finite
// differences in float64 and the loop-of-unbatched definition of vmap.
#include <gtest/gtest.h>

#include <functional>

#include "golden_cases.h"
#include "structures.h"
#include "structures_functions.funcgen.h"

namespace {

using namespace golden_cases;
using structured::Linear;
using structured::Mlp;

constexpr int64_t IN = 8, HID = 16, OUT = 4, N = 6, D = 16, B = 4;

Mlp golden_mlp() { return Mlp{input({HID, IN}, 1), input({HID}, 2), input({OUT, HID}, 3), input({OUT}, 4)}; }
const fg::Tensor xs = input({N, IN}, 5);
const fg::Tensor targets = fg::tensor(std::vector<int64_t>{0, 1, 2, 3, 0, 1});  // i % OUT

TEST(Structures, PerSampleGradientsWithParametersInAStruct) {
  const Mlp g = structured::per_sample_grads(golden_mlp(), xs, targets);
  expect_golden("per_sample_grads", 0, g.w1);
  expect_golden("per_sample_grads", 1, g.b1);
  expect_golden("per_sample_grads", 2, g.w2);
  expect_golden("per_sample_grads", 3, g.b2);
  const Mlp e = structured::example_grad(golden_mlp(), xs[0], targets[0]);
  expect_golden("example_grad", 0, e.w1);
  expect_golden("example_grad", 3, e.b2);
}

TEST(Structures, PerSampleGradientsWithNamedParametersInAMap) {
  const Mlp m = golden_mlp();
  const structured::ParamDict params{{"fc1.weight", m.w1}, {"fc1.bias", m.b1}, {"fc2.weight", m.w2}, {"fc2.bias", m.b2}};
  const structured::ParamDict g = structured::per_sample_grads_dict(params, xs, targets);
  ASSERT_EQ(g.size(), 4u);
  expect_golden("per_sample_grads", 0, g.at("fc1.weight"));
  expect_golden("per_sample_grads", 1, g.at("fc1.bias"));
  expect_golden("per_sample_grads", 2, g.at("fc2.weight"));
  expect_golden("per_sample_grads", 3, g.at("fc2.bias"));
}

TEST(Structures, AMapWithOtherKeysIsAnErrorNamingThem) {
  const Mlp m = golden_mlp();
  structured::ParamDict params{{"fc1.weight", m.w1}, {"fc1.bias", m.b1}, {"fc2.weight", m.w2}, {"fc2.bias", m.b2}};
  params["fc3.bias"] = m.b2;
  try {
    structured::per_sample_grads_dict(params, xs, targets);
    FAIL() << "no error";
  } catch (const fg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'fc3.bias'"), std::string::npos) << e.what();
  }
}

TEST(Structures, ModelEnsemblingWithStackedStructs) {
  const std::vector<fg::Tensor> stacked = stacked_ensemble();
  expect_golden("ensemble", 0, structured::ensemble(Mlp{stacked[0], stacked[1], stacked[2], stacked[3]}, xs));
}

TEST(Structures, PerSampleGradientsAndEnsemblingOfAModelClass) {
  const Mlp m = golden_mlp();
  const structured::Classifier model{Linear{m.w1, m.b1}, Linear{m.w2, m.b2}};
  const structured::Classifier g = structured::classifier_per_sample_grads(model, xs, targets);
  expect_golden("per_sample_grads", 0, g.fc1.weight);
  expect_golden("per_sample_grads", 1, g.fc1.bias);
  expect_golden("per_sample_grads", 2, g.fc2.weight);
  expect_golden("per_sample_grads", 3, g.fc2.bias);
  const std::vector<fg::Tensor> stacked = stacked_ensemble();
  const structured::Classifier models{Linear{stacked[0], stacked[1]}, Linear{stacked[2], stacked[3]}};
  expect_golden("ensemble", 0, structured::classifier_ensemble(models, xs));
}

// The neural-tangent-kernel tutorial's jacobian contraction: the jacobians of the model's output
// w.r.t. its parameters for each example of two batches (one generated function), contracted over
// the parameters, summed over the parameter tensors.
fg::Tensor ntk(const structured::Classifier& model, const fg::Tensor& x1, const fg::Tensor& x2, const char* equation) {
  const structured::Classifier j1 = structured::classifier_ntk_jacobians(model, x1);
  const structured::Classifier j2 = structured::classifier_ntk_jacobians(model, x2);
  const auto flat = [](const fg::Tensor& j) { return j.reshape({j.size(0), j.size(1), -1}); };
  const std::vector<std::pair<fg::Tensor, fg::Tensor>> pairs = {
      {j1.fc1.weight, j2.fc1.weight}, {j1.fc1.bias, j2.fc1.bias}, {j1.fc2.weight, j2.fc2.weight}, {j1.fc2.bias, j2.fc2.bias}};
  std::vector<fg::Tensor> terms;
  for (const auto& [a, b] : pairs) terms.push_back(fg::einsum(equation, {flat(a), flat(b)}));
  return fg::stack(terms).sum(0);
}

TEST(Structures, NeuralTangentKernelsByJacobianContraction) {
  const Mlp m = golden_mlp();
  const structured::Classifier model{Linear{m.w1, m.b1}, Linear{m.w2, m.b2}};
  const fg::Tensor x1 = input({N, IN}, 40), x2 = input({3, IN}, 41);
  expect_golden("ntk", 0, ntk(model, x1, x2, "Naf,Mbf->NMab"));
  expect_golden("ntk", 1, ntk(model, x1, x2, "Naf,Maf->NM"));
  expect_golden("ntk", 2, ntk(model, x1, x2, "Naf,Maf->NMa"));
}

TEST(Structures, JacobianOfAMemberFunctionWithRespectToItsObject) {
  const Linear layer{input({OUT, IN}, 30), input({OUT}, 31)};
  const fg::Tensor x = input({IN}, 32);
  auto [d_layer, d_x] = structured::linear_jacrev(layer, x);
  // d (Wx + b)_i / d W_jk = [i == j] x_k, d / d b = I, d / d x = W.
  const fg::Tensor eye = fg::eye(OUT, fg::kDouble);
  EXPECT_TRUE(fg::allclose(d_layer.weight, eye.unsqueeze(2) * x.reshape({1, 1, IN}), 1e-12, 1e-12));
  EXPECT_TRUE(fg::allclose(d_layer.bias, eye, 1e-12, 1e-12));
  EXPECT_TRUE(fg::allclose(d_x, layer.weight, 1e-12, 1e-12));
}

struct Predict {
  Linear layer{input({D, D}, 20), input({D}, 21)};
  fg::Tensor x = input({D}, 22), xb = input({B, D}, 23);
};

TEST(Structures, JacobiansWithRespectToALayerStruct) {
  Predict p;
  auto [rl, rx] = structured::jac_rev_wx(p.layer, p.x);
  expect_golden("jac_rev_wx", 0, rl.weight);
  expect_golden("jac_rev_wx", 1, rx);
  auto [fl, fx] = structured::jac_fwd_wx(p.layer, p.x);
  expect_golden("jac_fwd_wx", 0, fl.weight);
  expect_golden("jac_fwd_wx", 1, fx);
  // The bias's block: d tanh(Wx + b) / db = diag(1 - y^2).
  const fg::Tensor y = structured::predict(p.layer, p.x);
  EXPECT_TRUE(fg::allclose(rl.bias, fg::eye(D, fg::kDouble) * (1 - y * y), 1e-12, 1e-12));
  EXPECT_TRUE(fg::allclose(fl.bias, rl.bias, 1e-12, 1e-12));
  const Linear whole = structured::jac_rev_layer(p.layer, p.x);
  EXPECT_TRUE(fg::allclose(whole.weight, rl.weight, 1e-12, 1e-12));
  EXPECT_TRUE(fg::allclose(whole.bias, rl.bias, 1e-12, 1e-12));
}

TEST(Structures, HessiansAndJvpsOfALayerStruct) {
  Predict p;
  expect_golden("hess", 0, structured::hess(p.layer, p.x));
  expect_golden("batch_jac_fwd", 0, structured::batch_jac_fwd(p.layer, p.xb));
  const Linear tangent{input({D, D}, 25), input({D}, 26)};
  const fg::Tensor tx = input({D}, 27);
  auto [o, t] = structured::predict_jvp(p.layer, p.x, tangent, tx);
  expect_golden("predict_jvp", 0, o);
  expect_golden("predict_jvp", 1, t);
  // vmap(jvp) over examples and their tangents: each row is one jvp.
  const fg::Tensor txb = input({B, D}, 28);
  auto [ob, tb] = structured::batched_jvp(p.layer, p.xb, tangent, txb);
  for (int64_t i = 0; i < B; ++i) {
    auto [oi, ti] = structured::predict_jvp(p.layer, p.xb[i], tangent, txb[i]);
    EXPECT_TRUE(fg::allclose(ob[i], oi, 1e-12, 1e-12));
    EXPECT_TRUE(fg::allclose(tb[i], ti, 1e-12, 1e-12));
  }
}

TEST(Structures, AStructuredResultIsBatchedFieldByField) {
  Predict p;
  const structured::Heads h = structured::batched_heads(p.layer, p.xb);
  for (int64_t i = 0; i < B; ++i) {
    const structured::Heads one = structured::heads(p.layer, p.xb[i]);
    EXPECT_TRUE(fg::allclose(h.logits[i], one.logits, 1e-12, 1e-12));
    EXPECT_TRUE(fg::allclose(h.probs[i], one.probs, 1e-12, 1e-12));
  }
}

// Central differences in float64 of a scalar function of one tensor, perturbed in place.
fg::Tensor numeric_grad(const std::function<double()>& f, fg::Tensor x) {
  fg::Tensor g = fg::zeros_like(x);
  fg::Tensor flat = x.reshape({-1}), gflat = g.reshape({-1});
  const double h = 1e-6;
  for (int64_t i = 0; i < flat.numel(); ++i) {
    const double v = flat[i].item<double>();
    flat[i].fill_(v + h);
    const double up = f();
    flat[i].fill_(v - h);
    const double down = f();
    flat[i].fill_(v);
    gflat[i].fill_((up - down) / (2 * h));
  }
  return g;
}

void expect_close(const fg::Tensor& analytic, const fg::Tensor& numeric) {
  ASSERT_EQ(analytic.sizes(), numeric.sizes());
  EXPECT_TRUE(fg::allclose(analytic, numeric, 1e-5, 1e-6)) << "analytic\n" << analytic << "\nnumeric\n" << numeric;
}

TEST(Structures, NestedStructsAndArraysAgainstFiniteDifferences) {
  for (double scale : {0.5, 2.0}) {  // both sides of the branch on the scale
    structured::Scaled s{Linear{input({3, 4}, 1), input({3}, 2)}, scale};
    std::array<fg::Tensor, 2> in{input({4}, 3), input({3}, 4)};
    auto [gs, gin] = structured::scaled_grad(s, in);
    EXPECT_EQ(gs.scale, scale);  // passed through, as it is no tensor
    auto f = [&] { return structured::scaled_loss(s, in).item<double>(); };
    expect_close(gs.layer.weight, numeric_grad(f, s.layer.weight));
    expect_close(gs.layer.bias, numeric_grad(f, s.layer.bias));
    expect_close(gin[0], numeric_grad(f, in[0]));
    expect_close(gin[1], numeric_grad(f, in[1]));
  }
}

TEST(Structures, PairsVectorsAndTuplesAgainstFiniteDifferences) {
  std::pair<fg::Tensor, fg::Tensor> ab{input({5}, 1), input({5}, 2)};
  const fg::Tensor x = input({5}, 3);
  const auto gp = structured::pair_grad(ab, x);
  auto fp = [&] { return structured::pair_loss(ab, x).item<double>(); };
  expect_close(gp.first, numeric_grad(fp, ab.first));
  expect_close(gp.second, numeric_grad(fp, ab.second));

  std::tuple<fg::Tensor, fg::Tensor> abs{input({5}, 7), input({5}, 8)};
  const auto gt = structured::tuple_grad(abs, x);
  auto ft = [&] { return structured::tuple_loss(abs, x).item<double>(); };
  expect_close(std::get<0>(gt), numeric_grad(ft, std::get<0>(abs)));
  expect_close(std::get<1>(gt), numeric_grad(ft, std::get<1>(abs)));
  const std::tuple<fg::Tensor, fg::Tensor> batch{fg::stack({std::get<0>(abs), std::get<1>(abs)}),
                                                 fg::stack({std::get<1>(abs), std::get<0>(abs)})};
  const fg::Tensor tv = structured::tuple_vmap(batch, x);
  expect_close(tv[0], structured::tuple_loss(abs, x));
  expect_close(tv[1], structured::tuple_loss({std::get<1>(abs), std::get<0>(abs)}, x));

  std::vector<fg::Tensor> ws{input({4, 3}, 4), input({2, 4}, 5)};
  const fg::Tensor v = input({3}, 6);
  const std::vector<fg::Tensor> gw = structured::vector_grad(ws, v);
  ASSERT_EQ(gw.size(), 2u);
  auto fv = [&] { return structured::vector_loss(ws, v).item<double>(); };
  expect_close(gw[0], numeric_grad(fv, ws[0]));
  expect_close(gw[1], numeric_grad(fv, ws[1]));
  auto [jw, jv] = structured::vector_jacrev(ws, v);
  expect_close(jw[1], gw[1]);
  expect_close(jv, numeric_grad(fv, v));
  ws.push_back(ws[0]);
  EXPECT_THROW(structured::vector_grad(ws, v), fg::Error);  // a third element would get no gradient

  // A braced list passed to a helper's vector parameter.
  fg::Tensor a = input({4, 3}, 10), b = input({2, 4}, 11);
  auto [ga, gb] = structured::list_grad(a, b, v);
  auto fl = [&] { return structured::list_loss(a, b, v).item<double>(); };
  expect_close(ga, numeric_grad(fl, a));
  expect_close(gb, numeric_grad(fl, b));
  const fg::Tensor vb = input({3, 3}, 12);
  const fg::Tensor lb = structured::batched_list(a, b, vb);
  for (int64_t i = 0; i < 3; ++i) expect_close(lb[i], structured::list_loss(a, b, vb[i]));

  std::tuple<fg::Tensor, Linear> t{input({4}, 7), Linear{input({2, 4}, 8), input({2}, 9)}};
  auto [j0, j1] = structured::tuple_jacfwd(t);
  // Output 1 (the sum of the input) has the jacobian 1 w.r.t. the input and none w.r.t. the layer.
  expect_close(std::get<0>(j1), fg::ones({4}, fg::kDouble));
  expect_close(std::get<1>(j1).weight, fg::zeros({2, 4}, fg::kDouble));
  // Output 0 (the linear layer): d/dx = W, d/db = I.
  expect_close(std::get<0>(j0), std::get<1>(t).weight);
  expect_close(std::get<1>(j0).bias, fg::eye(2, fg::kDouble));
}

TEST(Structures, InDimsOverTheFieldsOfAStructure) {
  // An ensemble of first layers (mapped) sharing one head (None), against the loop of models.
  const Mlp m = golden_mlp();
  const fg::Tensor w1s = input({3, HID, IN}, 20), b1s = input({3, HID}, 21);
  const structured::Classifier models{Linear{w1s, b1s}, Linear{m.w2, m.b2}};
  const fg::Tensor out = structured::shared_head_ensemble(models, xs);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{3, N, OUT}));
  for (int64_t k = 0; k < 3; ++k)
    expect_close(out[k], structured::Classifier{Linear{w1s[k], b1s[k]}, Linear{m.w2, m.b2}}.forward(xs));

  // A weight per example and one shared bias: in_dims=((0, None), 0).
  const fg::Tensor ws = input({B, 3, 4}, 22), bias = input({3}, 23), x = input({B, 4}, 24);
  const fg::Tensor jac = structured::per_weight_jacobians(Linear{ws, bias}, x);
  ASSERT_EQ(jac.sizes(), (std::vector<int64_t>{B, 3, 4}));
  for (int64_t i = 0; i < B; ++i) {
    const Linear layer{ws[i], bias};
    const fg::Tensor xi = x[i];
    for (int64_t r = 0; r < 3; ++r) {
      auto f = [&] { return structured::predict(layer, xi)[r].item<double>(); };
      expect_close(jac[i][r], numeric_grad(f, xi));
    }
  }
}

TEST(Structures, VjpAndLinearizeTakeAndReturnTheStructures) {
  Predict p;
  // vjp's pullback of each output's one-hot cotangent is that output's row of the jacobians.
  auto [out, pullback] = structured::predict_vjp(p.layer, p.x);
  expect_close(out, structured::predict(p.layer, p.x));
  auto [jl, jx] = structured::jac_rev_wx(p.layer, p.x);
  for (int64_t r = 0; r < D; r += 5) {
    auto [gl, gx] = pullback(fg::eye(D, fg::kDouble)[r]);
    expect_close(gl.weight, jl.weight[r]);
    expect_close(gl.bias, jl.bias[r]);
    expect_close(gx, jx[r]);
  }
  // linearize's jvp_fn is jvp at the point it was made.
  auto [lout, jvp_fn] = structured::predict_linearize(p.layer, p.x);
  const Linear tangent{input({D, D}, 25), input({D}, 26)};
  const fg::Tensor tx = input({D}, 27);
  auto [o, t] = structured::predict_jvp(p.layer, p.x, tangent, tx);
  expect_close(lout, o);
  expect_close(jvp_fn(tangent, tx), t);

  // Cotangents structured as the result; the gradient of a struct keeps its number.
  auto [h, heads_pullback] = structured::heads_vjp(p.layer, p.x);
  const structured::Heads ct{input({D}, 30), input({D}, 31)};
  auto [hl, hx] = heads_pullback(ct);
  auto f = [&] {
    const structured::Heads y = structured::heads(p.layer, p.x);
    return ((y.logits * ct.logits).sum() + (y.probs * ct.probs).sum()).item<double>();
  };
  expect_close(hl.weight, numeric_grad(f, p.layer.weight));
  expect_close(hl.bias, numeric_grad(f, p.layer.bias));
  expect_close(hx, numeric_grad(f, p.x));
  structured::Scaled sc{Linear{input({3, 4}, 1), input({3}, 2)}, 0.5};
  std::array<fg::Tensor, 2> in{input({4}, 3), input({3}, 4)};
  auto [value, scaled_pullback] = structured::scaled_vjp(sc, in);
  auto [gs, gin] = scaled_pullback(fg::ones({}, fg::kDouble));
  auto [want_s, want_in] = structured::scaled_grad(sc, in);
  EXPECT_EQ(gs.scale, 0.5);
  expect_close(gs.layer.weight, want_s.layer.weight);
  expect_close(gs.layer.bias, want_s.layer.bias);
  expect_close(gin[0], want_in[0]);
  expect_close(gin[1], want_in[1]);
}

TEST(Structures, MapAndVectorResultsBuiltWhereReturned) {
  const fg::Tensor xb = input({5, 3}, 1);
  const structured::ParamDict batched = structured::named_heads_vmap(xb);
  ASSERT_EQ(batched.size(), 2u);
  for (int64_t i = 0; i < 5; ++i)
    for (const auto& [key, value] : structured::named_heads(xb[i])) expect_close(batched.at(key)[i], value);
  fg::Tensor x = input({3}, 2);
  const structured::ParamDict jr = structured::named_heads_jacrev(x), jf = structured::named_heads_jacfwd(x);
  const fg::Tensor t = input({3}, 3);
  const auto [primal, tangent] = structured::named_heads_jvp(x, t);
  for (const std::string key : {"mean", "norm"}) {
    const fg::Tensor numeric = numeric_grad([&] { return structured::named_heads(x).at(key).item<double>(); }, x);
    expect_close(jr.at(key), numeric);
    expect_close(jf.at(key), numeric);
    expect_close(primal.at(key), structured::named_heads(x).at(key));
    expect_close(tangent.at(key), (numeric * t).sum());
  }
  const auto [g, aux] = structured::dict_aux_grad(x);
  expect_close(g, numeric_grad([&] { return std::get<0>(structured::dict_aux(x)).item<double>(); }, x));
  expect_close(aux.at("max"), x.max());
  const auto [gs, auxs] = structured::dict_aux_psg(xb);
  for (int64_t i = 0; i < 5; ++i) {
    const auto [gi, auxi] = structured::dict_aux_grad(xb[i]);
    expect_close(gs[i], gi);
    expect_close(auxs.at("loss")[i], auxi.at("loss"));
  }
  const std::vector<fg::Tensor> lb = structured::listed_vmap(xb), lj = structured::listed_jacrev(x);
  ASSERT_EQ(lb.size(), 3u);
  ASSERT_EQ(lj.size(), 3u);
  for (int64_t i = 0; i < 5; ++i)
    for (size_t k = 0; k < 3; ++k) expect_close(lb[k][i], structured::listed(xb[i])[k]);
  for (int64_t r = 0; r < 3; ++r)
    expect_close(lj[1][r], numeric_grad([&] { return structured::listed(x)[1][r].item<double>(); }, x));
  expect_close(lj[2], numeric_grad([&] { return structured::listed(x)[2].item<double>(); }, x));
}

}  // namespace

// std::optional<fg::Tensor>: each call runs the specialization for the optionals that hold a
// tensor; gradients w.r.t. an optional that holds none are none, as torch.func returns None.
TEST(Structures, OptionalBiasWithAndWithoutATensor) {
  const fg::Tensor x = input({3}, 1), w = input({2, 3}, 2);
  for (const std::optional<fg::Tensor>& bias : {std::optional<fg::Tensor>(), std::optional<fg::Tensor>(input({2}, 3))}) {
    SCOPED_TRACE(bias ? "with bias" : "without bias");
    auto f = [&] { return structured::dense_loss(x, w, bias).item<double>(); };
    const auto [gw, gb] = structured::dense_grad(x, w, bias);
    expect_close(gw, numeric_grad(f, w));
    ASSERT_EQ(gb.has_value(), bias.has_value());
    if (bias) expect_close(*gb, numeric_grad(f, *bias));
    expect_close(structured::dense_jacfwd(x, w, bias), gw);
    // hessian w.r.t. x: each row the finite differences of the gradient's entry
    const fg::Tensor h = structured::dense_hessian(x, w, bias);
    for (int64_t i = 0; i < 3; ++i)
      expect_close(h[i], numeric_grad([&] { return structured::dense_input_grad(x, w, bias)[i].item<double>(); }, x));
    // jvp: the directional derivative along (tx, tw, tb)
    const fg::Tensor tx = input({3}, 4), tw = input({2, 3}, 5);
    const std::optional<fg::Tensor> tb = bias ? std::optional<fg::Tensor>(input({2}, 6)) : std::nullopt;
    const auto [out, tangent] = structured::dense_jvp(x, w, bias, tx, tw, tb);
    expect_close(out, structured::dense_loss(x, w, bias));
    const double e = 1e-6;
    const auto moved = [&](double s) {
      return structured::dense_loss(x + tx * s, w + tw * s, bias ? std::optional<fg::Tensor>(*bias + *tb * s) : std::nullopt);
    };
    expect_close(tangent, (moved(e) - moved(-e)) / (2 * e));
    EXPECT_THROW(structured::dense_jvp(x, w, bias, tx, tw, bias ? std::nullopt : std::optional<fg::Tensor>(tx)), fg::Error);
    // vjp's pullback and linearize's jvp_fn hold the case's function
    const auto [vout, pullback] = structured::dense_vjp(x, w, bias);
    expect_close(vout, out);
    const auto [vgx, vgw, vgb] = pullback(fg::ones({}, fg::kDouble));
    expect_close(vgw, gw);
    expect_close(vgx, structured::dense_input_grad(x, w, bias));
    ASSERT_EQ(vgb.has_value(), bias.has_value());
    if (bias) expect_close(*vgb, *gb);
    const auto [lout, jvp_fn] = structured::dense_linearize(x, w, bias);
    expect_close(lout, out);
    expect_close(jvp_fn(tx, tw, tb), tangent);
    EXPECT_THROW(jvp_fn(tx, tw, bias ? std::nullopt : std::optional<fg::Tensor>(tx)), fg::Error);
    // vmap over examples, against the loop
    const fg::Tensor xs = input({4, 3}, 7);
    const fg::Tensor batched = structured::dense_per_example(xs, w, bias);
    const auto [bgw, bgb] = structured::dense_per_example_grads(xs, w, bias);
    ASSERT_EQ(bgb.has_value(), bias.has_value());
    for (int64_t i = 0; i < 4; ++i) {
      expect_close(batched[i], structured::dense_loss(xs[i], w, bias));
      const auto [gwi, gbi] = structured::dense_grad(xs[i], w, bias);
      expect_close(bgw[i], gwi);
      if (bias) expect_close((*bgb)[i], *gbi);
    }
  }
}

TEST(Structures, OptionalFieldsAndEarlyReturnsOnAbsence) {
  const fg::Tensor x = input({3}, 1);
  for (int mask = 0; mask < 4; ++mask) {  // bias and scale, each held or not
    SCOPED_TRACE(mask);
    structured::Dense layer{input({2, 3}, 2), (mask & 1) ? std::optional<fg::Tensor>(input({2}, 3)) : std::nullopt};
    const std::optional<fg::Tensor> scale = (mask & 2) ? std::optional<fg::Tensor>(input({2}, 4)) : std::nullopt;
    auto f = [&] { return structured::layer_loss(layer, x, scale).item<double>(); };
    const structured::Dense g = structured::layer_grad(layer, x, scale);
    expect_close(g.weight, numeric_grad(f, layer.weight));
    const auto [out, pullback] = structured::layer_vjp(layer, x, scale);
    expect_close(out, structured::layer_loss(layer, x, scale));
    const auto [vl, vx, vs] = pullback(fg::ones({}, fg::kDouble));
    expect_close(vl.weight, g.weight);
    expect_close(vx, numeric_grad(f, x));
    ASSERT_EQ(vs.has_value(), scale.has_value());
    if (scale) expect_close(*vs, numeric_grad(f, *scale));
    ASSERT_EQ(g.bias.has_value(), layer.bias.has_value());
    if (layer.bias) expect_close(*g.bias, numeric_grad(f, *layer.bias));
    {  // jacrev w.r.t. the layer and the scale: the gradients of a scalar loss
      const auto [jl, js] = structured::layer_jacrev(layer, x, scale);
      expect_close(jl.weight, g.weight);
      ASSERT_EQ(js.has_value(), scale.has_value());
      if (scale) expect_close(*js, numeric_grad(f, *scale));
    }
    const fg::Tensor xs = input({3, 3}, 5), scales = input({3, 2}, 6);
    if (scale) {
      const fg::Tensor out = structured::batched_layer(layer, xs, scales);
      for (int64_t i = 0; i < 3; ++i) expect_close(out[i], structured::layer_loss(layer, xs[i], scales[i]));
    }
    // jacrev of a member function w.r.t. its object, whose bias is optional
    const structured::Dense j = structured::dense_forward_jacrev(layer, x);
    for (int64_t r = 0; r < 2; ++r) {
      auto fr = [&] { return layer.forward(x)[r].item<double>(); };
      expect_close(j.weight[r], numeric_grad(fr, layer.weight));
      if (layer.bias) expect_close((*j.bias)[r], numeric_grad(fr, *layer.bias));
    }
  }
}

TEST(Structures, OptionalTestsDefaultsAndSwitchesInEveryCase) {
  const fg::Tensor x = input({3}, 1);
  for (const bool has : {false, true})
    for (const bool use : {false, true})
      for (int mode = -1; mode <= 2; ++mode) {
        SCOPED_TRACE(std::to_string(has) + std::to_string(use) + std::to_string(mode));
        const std::optional<fg::Tensor> b = has ? std::optional<fg::Tensor>(input({3}, 2)) : std::nullopt;
        auto f = [&] { return structured::tested_loss(x, b, use, mode).item<double>(); };
        const auto [gx, gb] = structured::tested_grad(x, b, use, mode);
        expect_close(gx, numeric_grad(f, x));
        ASSERT_EQ(gb.has_value(), has);
        if (has) {
          expect_close(*gb, numeric_grad(f, *b));
          expect_close(*structured::tested_bias_grad(x, b, use, mode), *gb);
        } else {  // argnums selects no tensor, as torch.func raises
          EXPECT_THROW(structured::tested_bias_grad(x, b, use, mode), fg::Error);
        }
        const fg::Tensor bs = input({2, 3}, 3);
        if (has) {
          const fg::Tensor out = structured::tested_mapped_bias(x, std::optional<fg::Tensor>(bs), use, mode);
          for (int64_t i = 0; i < 2; ++i) expect_close(out[i], structured::tested_loss(x, bs[i], use, mode));
        } else {  // in_dims maps only the optional, which holds none
          EXPECT_THROW(structured::tested_mapped_bias(x, b, use, mode), fg::Error);
        }
      }
}

// grad of a loss of a TwoLayers model against finite differences, and its vmap(grad) against the
// loop of grads.
using TwoLayerLoss = fg::Tensor (*)(const structured::TwoLayers&, const fg::Tensor&);
using TwoLayerGrad = structured::TwoLayers (*)(const structured::TwoLayers&, const fg::Tensor&);
void expect_two_layer_grads(TwoLayerLoss loss, TwoLayerGrad grad, TwoLayerGrad per_example) {
  structured::TwoLayers net{{input({4, 3}, 1), input({4}, 2)}, {input({2, 4}, 3), input({2}, 4)}};
  const fg::Tensor x = input({3}, 5);
  auto f = [&] { return loss(net, x).item<double>(); };
  const structured::TwoLayers g = grad(net, x);
  expect_close(g.fc1.weight, numeric_grad(f, net.fc1.weight));
  expect_close(g.fc1.bias, numeric_grad(f, net.fc1.bias));
  expect_close(g.fc2.weight, numeric_grad(f, net.fc2.weight));
  expect_close(g.fc2.bias, numeric_grad(f, net.fc2.bias));
  const fg::Tensor xs = input({3, 3}, 6);
  const structured::TwoLayers per = per_example(net, xs);
  for (int64_t i = 0; i < 3; ++i) {
    const structured::TwoLayers gi = grad(net, xs[i]);
    expect_close(per.fc1.weight[i], gi.fc1.weight);
    expect_close(per.fc2.weight[i], gi.fc2.weight);
    expect_close(per.fc2.bias[i], gi.fc2.bias);
  }
}

TEST(Structures, LayersCalledAsFunctors) {
  expect_two_layer_grads(structured::two_layer_loss, structured::two_layer_grad, structured::two_layer_per_example_grads);
}

TEST(Structures, LambdasThatCaptureTheParameters) {
  structured::Scaled s{Linear{input({4, 4}, 1), input({4}, 2)}, 0.7};
  const fg::Tensor x = input({4}, 3);
  auto f = [&] { return structured::captured_loss(s, x).item<double>(); };
  const auto [g, gx] = structured::captured_grad(s, x);
  EXPECT_EQ(g.scale, 0.7);
  expect_close(g.layer.weight, numeric_grad(f, s.layer.weight));
  expect_close(g.layer.bias, numeric_grad(f, s.layer.bias));
  expect_close(gx, numeric_grad(f, x));
  const fg::Tensor h = structured::captured_hessian(s, x);
  for (int64_t i = 0; i < 4; ++i) {  // each row the finite differences of the gradient's entry
    auto gi = [&] { return std::get<1>(structured::captured_grad(s, x))[i].item<double>(); };
    expect_close(h[i], numeric_grad(gi, x));
  }
  const fg::Tensor xs = input({3, 4}, 4);
  const structured::Scaled per = structured::captured_psg(s, xs);
  for (int64_t i = 0; i < 3; ++i) {
    const structured::Scaled gi = std::get<0>(structured::captured_grad(s, xs[i]));
    expect_close(per.layer.weight[i], gi.layer.weight);
    expect_close(per.layer.bias[i], gi.layer.bias);
  }

  structured::ParamDict p{{"fc1.weight", input({4, 4}, 5)}, {"fc1.bias", input({4}, 6)}};
  auto fd = [&] { return structured::captured_dict_loss(p, x).item<double>(); };
  const structured::ParamDict gd = structured::captured_dict_grad(p, x);
  expect_close(gd.at("fc1.weight"), numeric_grad(fd, p.at("fc1.weight")));
  expect_close(gd.at("fc1.bias"), numeric_grad(fd, p.at("fc1.bias")));
  const structured::ParamDict pd = structured::captured_dict_psg(p, xs);
  for (int64_t i = 0; i < 3; ++i)
    expect_close(pd.at("fc1.bias")[i], structured::captured_dict_grad(p, xs[i]).at("fc1.bias"));
}

TEST(Structures, StructuresBuiltByHelpersUnderVmap) {
  structured::Scaled s{Linear{input({4, 4}, 1), input({4}, 2)}, 0.7};
  const fg::Tensor xs = input({3, 4}, 4);
  const fg::Tensor v = structured::merged_vmap(s, xs);
  const structured::Scaled per = structured::merged_psg(s, xs);
  for (int64_t i = 0; i < 3; ++i) {
    expect_close(v[i], structured::merged_loss(s, xs[i]));
    const structured::Scaled g = structured::merged_grad(s, xs[i]);
    expect_close(per.layer.weight[i], g.layer.weight);
    expect_close(per.layer.bias[i], g.layer.bias);
  }
  auto f = [&] { return structured::merged_loss(s, xs[0]).item<double>(); };
  expect_close(structured::merged_grad(s, xs[0]).layer.weight, numeric_grad(f, s.layer.weight));
}

TEST(Structures, HasAuxWithParametersInAStruct) {
  Mlp p{input({HID, IN}, 1), input({HID}, 2), input({OUT, HID}, 3), input({OUT}, 4)};
  const fg::Tensor x = input({IN}, 5);
  const auto [loss, logits] = structured::aux_loss(p, x);
  auto f = [&] { return std::get<0>(structured::aux_loss(p, x)).item<double>(); };
  const auto [g, aux] = structured::aux_grad(p, x);
  expect_close(aux, logits);
  expect_close(g.w1, numeric_grad(f, p.w1));
  expect_close(g.b2, numeric_grad(f, p.b2));
  const auto [gs, value] = structured::aux_grad_and_value(p, x);
  expect_close(std::get<0>(value), loss);
  expect_close(std::get<1>(value), logits);
  expect_close(std::get<0>(gs).w2, numeric_grad(f, p.w2));
  expect_close(std::get<1>(gs), numeric_grad(f, x));
  const auto [j, jaux] = structured::aux_jacfwd(p, x);
  expect_close(jaux, logits);
  expect_close(std::get<0>(j).b1, g.b1);
  expect_close(std::get<1>(j), std::get<1>(gs));
}

TEST(Structures, HasAuxWithAStructuredAux) {
  Linear l{input({3, 4}, 1), input({3}, 2)};
  fg::Tensor x = input({4}, 3);
  const auto [loss, heads] = structured::heads_aux_loss(l, x);
  auto f = [&] { return std::get<0>(structured::heads_aux_loss(l, x)).item<double>(); };
  const auto expect_heads = [&](const structured::Heads& aux) {
    expect_close(aux.logits, heads.logits);
    expect_close(aux.probs, heads.probs);
  };
  const auto [g, aux] = structured::heads_aux_grad(l, x);
  expect_close(g.weight, numeric_grad(f, l.weight));
  expect_close(g.bias, numeric_grad(f, l.bias));
  expect_heads(aux);
  const auto [g2, value] = structured::heads_aux_grad_and_value(l, x);
  expect_close(g2.weight, g.weight);
  expect_close(std::get<0>(value), loss);
  expect_heads(std::get<1>(value));
  const auto [jx, jaux] = structured::heads_aux_jacrev(l, x);
  expect_close(jx, numeric_grad(f, x));
  expect_heads(jaux);
  const auto [jl, jlaux] = structured::heads_aux_jacfwd(l, x);
  expect_close(jl.weight, g.weight);
  expect_close(jl.bias, g.bias);
  expect_heads(jlaux);
  const Linear tl{input({3, 4}, 4), input({3}, 5)};
  const fg::Tensor tx = input({4}, 6);
  const auto [out, tangent, taux] = structured::heads_aux_jvp(l, x, tl, tx);
  expect_close(out, loss);
  expect_close(tangent, (g.weight * tl.weight).sum() + (g.bias * tl.bias).sum() + (jx * tx).sum());
  expect_heads(taux);
  const auto [vout, pullback, vaux] = structured::heads_aux_vjp(l, x);
  expect_close(vout, loss);
  expect_heads(vaux);
  const auto [pl, px] = pullback(fg::ones_like(vout) * 2.0);
  expect_close(pl.weight, g.weight * 2.0);
  expect_close(pl.bias, g.bias * 2.0);
  expect_close(px, jx * 2.0);
  // a tuple as the aux
  auto h = [&] { return std::get<0>(structured::tuple_aux_loss(x)).item<double>(); };
  const auto [tg, tuple_aux] = structured::tuple_aux_grad(x);
  expect_close(tg, numeric_grad(h, x));
  expect_close(std::get<0>(tuple_aux), x.sin());
  expect_close(std::get<1>(tuple_aux), x.cos());
  const auto [tg2, tvalue] = structured::tuple_aux_grad_and_value(x);
  expect_close(tg2, tg);
  expect_close(std::get<0>(tvalue), x.sin().sum());
  expect_close(std::get<1>(std::get<1>(tvalue)), x.cos());
  const auto [tj, tjaux] = structured::tuple_aux_jacrev(x);
  expect_close(tj, tg);
  expect_close(std::get<0>(tjaux), x.sin());
}

TEST(Structures, ALocalLayerAssignedAPartOfTheModel) {
  expect_two_layer_grads(structured::chosen_layer_loss, structured::chosen_layer_grad,
                         structured::chosen_layer_per_example_grads);
}

TEST(Structures, VmapOfNestedResultsAgreesWithTheLoop) {
  const Linear l{input({3, 4}, 1), input({3}, 2)};
  const fg::Tensor xb = input({5, 4}, 3);
  const auto [g, value] = structured::heads_aux_psg(l, xb);
  for (int64_t b = 0; b < 5; ++b) {
    const auto [gb, vb] = structured::heads_aux_grad_and_value(l, xb[b]);
    expect_close(g.weight[b], gb.weight);
    expect_close(g.bias[b], gb.bias);
    expect_close(std::get<0>(value)[b], std::get<0>(vb));
    expect_close(std::get<1>(value).logits[b], std::get<1>(vb).logits);
    expect_close(std::get<1>(value).probs[b], std::get<1>(vb).probs);
  }
  const fg::Tensor xt = input({3, 5}, 4);  // in_dims=1, out_dims=1
  const auto [tg, aux] = structured::tuple_aux_psg(xt);
  for (int64_t b = 0; b < 5; ++b) {
    const auto [gb, auxb] = structured::tuple_aux_grad(xt.select(1, b));
    expect_close(tg.select(1, b), gb);
    expect_close(std::get<0>(aux).select(1, b), std::get<0>(auxb));
    expect_close(std::get<1>(aux).select(1, b), std::get<1>(auxb));
  }
}

TEST(Structures, OnlyTheResultStructured) {
  const fg::Tensor xb = input({5, 3}, 1);
  const structured::Heads batched = structured::two_heads_vmap(xb);
  for (int64_t i = 0; i < 5; ++i) {
    const structured::Heads one = structured::two_heads(xb[i]);
    expect_close(batched.logits[i], one.logits);
    expect_close(batched.probs[i], one.probs);
  }
  fg::Tensor x = input({3}, 2);
  const structured::Heads j = structured::two_heads_jacrev(x);  // a jacobian per field
  for (int64_t k = 0; k < 3; ++k) {
    expect_close(j.logits[k], numeric_grad([&] { return structured::two_heads(x).logits[k].item<double>(); }, x));
    expect_close(j.probs[k], numeric_grad([&] { return structured::two_heads(x).probs[k].item<double>(); }, x));
  }
  const fg::Tensor t = input({3}, 3);
  const auto [primal, tangent] = structured::two_heads_jvp(x, t);
  expect_close(primal.probs, x.cos());
  expect_close(tangent.logits, fg::matmul(j.logits, t));
  expect_close(tangent.probs, fg::matmul(j.probs, t));
  try {  // run-time errors name the spec, not the flat function funcgen made of it
    structured::two_heads_vmap(fg::zeros({}, fg::kDouble));
    ADD_FAILURE() << "vmap over a tensor without dims returned";
  } catch (const fg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("two_heads_vmap"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("__flat"), std::string::npos) << e.what();
  }
}

TEST(Structures, CasesThatReturnWhereAnOptionalHoldsNone) {
  const fg::Tensor x = input({3}, 1);
  for (const bool has : {false, true})
    for (const auto mode : {structured::Mode::Scale, structured::Mode::Keep})
      for (const bool twice : {false, true}) {
        const std::optional<fg::Tensor> b = has ? std::optional<fg::Tensor>(input({3}, 2)) : std::nullopt;
        auto f = [&] { return structured::case_loss(x, b, mode, twice).item<double>(); };
        expect_close(structured::case_grad(x, b, mode, twice), numeric_grad(f, x));
      }
}

TEST(Structures, AStructureTakenByNonConstReference) {
  const Linear acc{input({3}, 1), input({3}, 2)};
  fg::Tensor x = input({3}, 3);
  auto f = [&] {  // (each call on a copy: the function assigns the structure's weight)
    Linear copy{acc.weight.clone(), acc.bias.clone()};
    return structured::accumulated_loss(copy, x).item<double>();
  };
  Linear given{acc.weight.clone(), acc.bias.clone()};
  expect_close(structured::accumulated_grad(given, x), numeric_grad(f, x));
  Linear weights{acc.weight.clone(), acc.bias.clone()};
  auto [g_acc, g_x] = structured::accumulated_grads(weights, x);
  expect_close(g_x, numeric_grad(f, x));
  Linear at{acc.weight.clone(), acc.bias.clone()};
  auto f_acc = [&] {
    Linear copy{at.weight.clone(), at.bias.clone()};
    return structured::accumulated_loss(copy, x).item<double>();
  };
  expect_close(g_acc.weight, numeric_grad(f_acc, at.weight));
  expect_close(g_acc.bias, numeric_grad(f_acc, at.bias));
}

