// Every transform over functions whose parameters are std::vector<fg::Tensor> read at run-time
// indices (list_parameters.cpp): gradients against central finite differences in float64, tangents
// against directional differences, vmap against the loop over the batch, the jacobians and the
// hessian w.r.t. the input against the generated gradient and its finite differences.
#include <gtest/gtest.h>

#include "../test_inputs.h"

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "list_parameters.funcgen.h"

namespace lp {  // as written (list_parameters.cpp)
fg::Tensor mlp(const std::vector<fg::Tensor>& ws, const std::vector<fg::Tensor>& bs, const fg::Tensor& x);
fg::Tensor ranged(const std::vector<fg::Tensor>& ws, const fg::Tensor& x);
fg::Tensor counted(const std::vector<fg::Tensor>& ws, const fg::Tensor& x);
fg::Tensor last(const std::vector<fg::Tensor>& ws, const fg::Tensor& x);
fg::Tensor net(const std::vector<fg::Tensor>& ws, const std::vector<fg::Tensor>& bs, const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> two(const std::vector<fg::Tensor>& ws, const fg::Tensor& x);
}  // namespace lp

namespace {

using T = fg::Tensor;
using List = std::vector<T>;
constexpr double kStep = 1e-6;

using test_inputs::input;

// The MLP 4 -> 5 -> 3 -> 2 of the tests, its layers in vectors.
struct Mlp {
  List ws{input({5, 4}, 0.1), input({3, 5}, 0.2), input({2, 3}, 0.3)};
  List bs{input({5}, 0.4), input({3}, 0.5), input({2}, 0.6)};
  T x = input({4}, 0.7);
};

// d f / d t by central differences, t changed in place (t is one of f's inputs).
T numeric_grad(const std::function<double()>& f, T& t) {
  T g = fg::zeros_like(t);
  double* p = t.data_ptr<double>();
  double* pg = g.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double saved = p[i];
    p[i] = saved + kStep;
    const double up = f();
    p[i] = saved - kStep;
    const double down = f();
    p[i] = saved;
    pg[i] = (up - down) / (2 * kStep);
  }
  return g;
}

// The derivative of f(ws, x) along (wt, xt) by central differences.
T directional(const std::function<T(const List&, const T&)>& f, const List& ws, const T& x, const List& wt,
              const T& xt) {
  const auto along = [&](double s) {
    List w;
    for (size_t k = 0; k < ws.size(); ++k) w.push_back(ws[k] + wt[k] * s);
    return f(w, x + xt * s);
  };
  return (along(kStep) - along(-kStep)) / (2 * kStep);
}

void expect_close(const T& actual, const T& expected, const std::string& what) {
  ASSERT_TRUE(actual.defined()) << what;
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(fg::allclose(actual, expected, 1e-5, 1e-6)) << what << "\nactual\n" << actual << "\nexpected\n" << expected;
}

void expect_lists_close(const List& actual, const List& expected, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t k = 0; k < actual.size(); ++k) expect_close(actual[k], expected[k], what + "[" + std::to_string(k) + "]");
}

// The gradient of every element of `list` by finite differences.
List numeric_list_grad(const std::function<double()>& f, List& list) {
  List out;
  for (T& t : list) out.push_back(numeric_grad(f, t));
  return out;
}

TEST(ListParameters, GradOfEachListAgreesWithFiniteDifferences) {
  Mlp m;
  const auto f = [&] { return lp::mlp(m.ws, m.bs, m.x).item<double>(); };
  const auto [dws, dbs] = lp::mlp_grad(m.ws, m.bs, m.x);
  expect_lists_close(dws, numeric_list_grad(f, m.ws), "grad ws");
  expect_lists_close(dbs, numeric_list_grad(f, m.bs), "grad bs");
  expect_close(lp::mlp_grad_x(m.ws, m.bs, m.x), numeric_grad(f, m.x), "grad x");
}

TEST(ListParameters, JvpAndLinearizeAgreeWithDirectionalDifferences) {
  Mlp m;
  const List wt{input({5, 4}, 1.1), input({3, 5}, 1.2), input({2, 3}, 1.3)};
  const List bt{input({5}, 1.4), input({3}, 1.5), input({2}, 1.6)};
  const T xt = input({4}, 1.7);
  const auto along = [&](double s) {
    List w, b;
    for (size_t k = 0; k < 3; ++k) {
      w.push_back(m.ws[k] + wt[k] * s);
      b.push_back(m.bs[k] + bt[k] * s);
    }
    return lp::mlp(w, b, m.x + xt * s);
  };
  const T expected = (along(kStep) - along(-kStep)) / (2 * kStep);
  const auto [out, tangent] = lp::mlp_jvp(m.ws, m.bs, m.x, wt, bt, xt);
  expect_close(out, lp::mlp(m.ws, m.bs, m.x), "jvp primal");
  expect_close(tangent, expected, "jvp tangent");
  const auto [primal, jvp_fn] = lp::mlp_linearize(m.ws, m.bs, m.x);
  expect_close(primal, out, "linearize primal");
  expect_close(jvp_fn(wt, bt, xt), expected, "linearize jvp_fn");
}

TEST(ListParameters, VjpPullbackGivesTheGradients) {
  Mlp m;
  const auto [out, pullback] = lp::mlp_vjp(m.ws, m.bs, m.x);
  const auto [dws, dbs, dx] = pullback(fg::ones_like(out) * 2.0);
  const auto [gws, gbs] = lp::mlp_grad(m.ws, m.bs, m.x);
  for (size_t k = 0; k < 3; ++k) {
    expect_close(dws[k], gws[k] * 2.0, "vjp ws");
    expect_close(dbs[k], gbs[k] * 2.0, "vjp bs");
  }
  expect_close(dx, lp::mlp_grad_x(m.ws, m.bs, m.x) * 2.0, "vjp x");
}

TEST(ListParameters, VmapAndPerSampleGradientsAgreeWithTheLoop) {
  Mlp m;
  const T xs = input({6, 4}, 0.9);
  const T batched = lp::mlp_vmap(m.ws, m.bs, xs);
  const auto [pws, pbs] = lp::mlp_psg(m.ws, m.bs, xs);
  const T vjac = lp::mlp_vjacrev(m.ws, m.bs, xs);
  for (int64_t b = 0; b < 6; ++b) {
    const std::string at = " example " + std::to_string(b);
    expect_close(batched[b], lp::mlp(m.ws, m.bs, xs[b]), "vmap" + at);
    const auto [gws, gbs] = lp::mlp_grad(m.ws, m.bs, xs[b]);
    for (size_t k = 0; k < 3; ++k) {
      expect_close(pws[k][b], gws[k], "per-sample grad ws" + at);
      expect_close(pbs[k][b], gbs[k], "per-sample grad bs" + at);
    }
    expect_close(vjac[b], lp::mlp_grad_x(m.ws, m.bs, xs[b]), "vmap(jacrev)" + at);
  }
}

TEST(ListParameters, VmapMapsEveryElementOfAVector) {
  const int64_t models = 3;
  const List ws{input({models, 5, 4}, 0.1), input({models, 3, 5}, 0.2), input({models, 2, 3}, 0.3)};
  const List bs{input({models, 5}, 0.4), input({models, 3}, 0.5), input({models, 2}, 0.6)};
  const T x = input({4}, 0.7), xs = input({models, 4}, 0.8);
  const T out = lp::mlp_ensemble(ws, bs, x);
  const auto [gws, gbs] = lp::mlp_ensemble_grad(ws, bs, x);
  const Mlp shared;  // its biases, for the paired ensemble
  const T paired = lp::mlp_ensemble_paired(ws, shared.bs, xs);
  for (int64_t m = 0; m < models; ++m) {
    const std::string at = " model " + std::to_string(m);
    List w, b;
    for (size_t k = 0; k < 3; ++k) {
      w.push_back(ws[k][m]);
      b.push_back(bs[k][m]);
    }
    expect_close(out[m], lp::mlp(w, b, x), "ensemble" + at);
    expect_close(paired[m], lp::mlp(w, shared.bs, xs[m]), "paired ensemble" + at);
    const auto [ew, eb] = lp::mlp_grad(w, b, x);
    for (size_t k = 0; k < 3; ++k) {
      expect_close(gws[k][m], ew[k], "ensemble grad ws" + at);
      expect_close(gbs[k][m], eb[k], "ensemble grad bs" + at);
    }
  }
  EXPECT_THROW(lp::mlp_ensemble(ws, List{bs[0], bs[1], input({2, 2}, 0.9)}, x), fg::Error);  // 2 models, not 3
}

TEST(ListParameters, JacobiansAndHessianOfTheInput) {
  Mlp m;
  const T g = lp::mlp_grad_x(m.ws, m.bs, m.x);
  expect_close(lp::mlp_jacrev(m.ws, m.bs, m.x), g, "jacrev");
  expect_close(lp::mlp_jacfwd(m.ws, m.bs, m.x), g, "jacfwd");
  T hessian = fg::zeros({4, 4}, fg::kDouble);
  for (int64_t i = 0; i < 4; ++i)
    hessian.select(0, i).copy_(numeric_grad([&] { return lp::mlp_grad_x(m.ws, m.bs, m.x)[i].item<double>(); }, m.x));
  expect_close(lp::mlp_hessian(m.ws, m.bs, m.x), hessian, "hessian");
  const T v = input({4}, 2.1);
  List zero_ws, zero_bs;  // jvp takes a tangent for every primal: the lists stay where they are
  for (size_t k = 0; k < 3; ++k) {
    zero_ws.push_back(fg::zeros_like(m.ws[k]));
    zero_bs.push_back(fg::zeros_like(m.bs[k]));
  }
  expect_close(std::get<1>(lp::mlp_hvp(m.ws, m.bs, m.x, zero_ws, zero_bs, v)), fg::matmul(hessian, v), "jvp(grad)");
}

// The jacobian of f's output w.r.t. `t` by central differences: [out..., t...].
T numeric_jacobian(const std::function<T()>& f, T& t) {
  const T out = f();
  T jac = fg::zeros({out.numel(), t.numel()}, fg::kDouble);
  double* p = t.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double saved = p[i];
    p[i] = saved + kStep;
    const T up = f().reshape({-1});
    p[i] = saved - kStep;
    const T down = f().reshape({-1});
    p[i] = saved;
    jac.select(1, i).copy_((up - down) / (2 * kStep));
  }
  std::vector<int64_t> shape(out.sizes().begin(), out.sizes().end());
  shape.insert(shape.end(), t.sizes().begin(), t.sizes().end());
  return jac.reshape(shape);
}

List numeric_list_jacobian(const std::function<T()>& f, List& list) {
  List out;
  for (T& t : list) out.push_back(numeric_jacobian(f, t));
  return out;
}

TEST(ListParameters, JacobiansOfEachListAgreeWithFiniteDifferences) {
  Mlp m;
  const auto f = [&] { return lp::net(m.ws, m.bs, m.x); };
  const List jws = numeric_list_jacobian(f, m.ws), jbs = numeric_list_jacobian(f, m.bs);
  const auto [rws, rbs] = lp::net_jacrev(m.ws, m.bs, m.x);
  expect_lists_close(rws, jws, "jacrev ws");
  expect_lists_close(rbs, jbs, "jacrev bs");
  const auto [fws, fbs] = lp::net_jacfwd(m.ws, m.bs, m.x);
  expect_lists_close(fws, jws, "jacfwd ws");
  expect_lists_close(fbs, jbs, "jacfwd bs");
}

TEST(ListParameters, VmapOfJacobiansOfAListAgreesWithTheLoop) {
  Mlp m;
  const T xs = input({3, 4}, 0.9);
  const List rows = lp::net_vjacrev(m.ws, m.bs, xs), columns = lp::net_vjacfwd(m.ws, m.bs, xs);
  for (int64_t b = 0; b < 3; ++b) {
    const List expected = std::get<0>(lp::net_jacrev(m.ws, m.bs, xs[b]));
    for (size_t k = 0; k < 3; ++k) {
      expect_close(rows[k][b], expected[k], "vmap(jacrev) example " + std::to_string(b));
      expect_close(columns[k][b], expected[k], "vmap(jacfwd) example " + std::to_string(b));
    }
  }
  // Model ensembling: each element holds two models' layers; the jacobians come per model.
  List ws, bs;
  for (size_t k = 0; k < 3; ++k) {
    ws.push_back(fg::stack({m.ws[k], m.ws[k] * 0.5}));
    bs.push_back(fg::stack({m.bs[k], m.bs[k] * -1.0}));
  }
  const List er = lp::net_ensemble_jacrev(ws, bs, m.x), ef = lp::net_ensemble_jacfwd(ws, bs, m.x);
  List ws1;  // the models along dim 1 of each weight
  for (const T& w : ws) ws1.push_back(w.movedim(0, 1).contiguous());
  const auto [ew1, eb1] = lp::net_ensemble_jacfwd_dim1(ws1, bs, m.x);
  for (int64_t e = 0; e < 2; ++e) {
    List w, b;
    for (size_t k = 0; k < 3; ++k) {
      w.push_back(ws[k][e]);
      b.push_back(bs[k][e]);
    }
    const List expected = std::get<0>(lp::net_jacrev(w, b, m.x));
    for (size_t k = 0; k < 3; ++k) {
      expect_close(er[k][e], expected[k], "ensemble jacrev model " + std::to_string(e));
      expect_close(ef[k][e], expected[k], "ensemble jacfwd model " + std::to_string(e));
      expect_close(ew1[k][e], expected[k], "ensemble jacfwd, in_dims=1, model " + std::to_string(e));
      expect_close(eb1[k][e], std::get<1>(lp::net_jacrev(w, b, m.x))[k], "ensemble jacfwd w.r.t. bs");
    }
  }
}

TEST(ListParameters, JacobiansOfAListForEachOutputAndWithAux) {
  List ws{input({3, 2}, 0.1), input({2, 3}, 0.2)};
  T x = input({2}, 0.3);
  const List j0 = numeric_list_jacobian([&] { return std::get<0>(lp::two(ws, x)); }, ws);
  const List j1 = numeric_list_jacobian([&] { return std::get<1>(lp::two(ws, x)); }, ws);
  const auto [r0, r1] = lp::two_jacrev(ws, x);
  expect_lists_close(r0, j0, "jacrev output 0");
  expect_lists_close(r1, j1, "jacrev output 1");
  const auto [f0, f1] = lp::two_jacfwd(ws, x);
  expect_lists_close(f0, j0, "jacfwd output 0");
  expect_lists_close(f1, j1, "jacfwd output 1");
  const auto [ja, aux] = lp::two_jacrev_aux(ws, x);
  expect_lists_close(ja, j0, "jacrev has_aux");
  expect_close(aux, std::get<1>(lp::two(ws, x)), "aux");
  const T xs = input({4, 2}, 0.4);
  const auto [va, vaux] = lp::two_vjacrev_aux(ws, xs);  // the composed form: the vector is read in it
  for (int64_t b = 0; b < 4; ++b) {
    expect_close(vaux[b], std::get<1>(lp::two(ws, xs[b])), "vmap(jacrev) aux");
    for (size_t k = 0; k < 2; ++k) expect_close(va[k][b], std::get<0>(lp::two_jacrev(ws, xs[b]))[k], "vmap(jacrev) has_aux");
  }
  try {  // no elements, no basis: an error naming the spec and the vector
    lp::two_jacfwd(List{}, x);
    ADD_FAILURE() << "jacfwd w.r.t. an empty vector returned";
  } catch (const fg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("two_jacfwd: jacfwd w.r.t. 'ws', a vector that holds no tensors"), std::string::npos)
        << e.what();
  }
  const auto [v0, v1] = lp::two_vjacrev(ws, xs);
  for (int64_t b = 0; b < 4; ++b) {
    const auto [e0, e1] = lp::two_jacrev(ws, xs[b]);
    for (size_t k = 0; k < 2; ++k) {
      expect_close(v0[k][b], e0[k], "vmap(jacrev) output 0");
      expect_close(v1[k][b], e1[k], "vmap(jacrev) output 1");
    }
  }
}

TEST(ListParameters, ASkippedLayerGetsAZeroGradient) {
  List ws{input({4, 4}, 0.1), input({7, 7}, 0.2), input({3, 4}, 0.3)};
  T x = input({4}, 0.4);
  const auto f = [&] { return lp::ranged(ws, x).item<double>(); };
  const List g = lp::ranged_grad(ws, x);
  expect_lists_close(g, numeric_list_grad(f, ws), "grad");
  EXPECT_TRUE(fg::equal(g[1], fg::zeros({7, 7}, fg::kDouble)));
  EXPECT_THROW(lp::ranged_grad(List{ws[0], ws[1]}, x), fg::Error);  // ws.at(2), as std::vector::at throws
  const T xs = input({5, 4}, 0.5);
  const List per_sample = lp::ranged_psg(ws, xs);
  for (size_t k = 0; k < 3; ++k) {
    ASSERT_EQ(per_sample[k].size(0), 5);
    for (int64_t b = 0; b < 5; ++b) expect_close(per_sample[k][b], lp::ranged_grad(ws, xs[b])[k], "per-sample grad");
  }
  const List wt{input({4, 4}, 1.1), input({7, 7}, 1.2), input({3, 4}, 1.3)};
  const T xt = input({4}, 1.4);
  expect_close(std::get<1>(lp::ranged_jvp(ws, x, wt, xt)), directional(lp::ranged, ws, x, wt, xt), "jvp");
}

TEST(ListParameters, ACounterSteppedAfterTheReadIndexesEachTrip) {
  List ws{input({4, 4}, 0.1), input({4, 4}, 0.2), input({2, 4}, 0.3)};
  T x = input({4}, 0.4);
  const auto f = [&] { return lp::counted(ws, x).item<double>(); };
  expect_lists_close(lp::counted_grad(ws, x), numeric_list_grad(f, ws), "grad");
  const List wt{input({4, 4}, 1.1), input({4, 4}, 1.2), input({2, 4}, 1.3)};
  const T xt = input({4}, 1.4);
  expect_close(std::get<1>(lp::counted_jvp(ws, x, wt, xt)), directional(lp::counted, ws, x, wt, xt), "jvp");
}

TEST(ListParameters, StraightLineCodeThroughLinearizeAndVjp) {
  List ws{input({3}, 0.1), input({3}, 0.2)};
  T x = input({3}, 0.3);
  const auto f = [&] { return lp::last(ws, x).item<double>(); };
  const auto [out, pullback] = lp::last_vjp(ws, x);
  const auto [dws, dx] = pullback(fg::ones_like(out));
  expect_lists_close(dws, numeric_list_grad(f, ws), "vjp ws");
  EXPECT_TRUE(fg::equal(dws[0], fg::zeros({3}, fg::kDouble)));
  expect_close(dx, numeric_grad(f, x), "vjp x");
  const List wt{input({3}, 1.1), input({3}, 1.2)};
  const T xt = input({3}, 1.3);
  const auto [primal, jvp_fn] = lp::last_linearize(ws, x);
  const T expected = (fg::matmul(dws[0], wt[0]) + fg::matmul(dws[1], wt[1]) + fg::matmul(dx, xt));
  expect_close(jvp_fn(wt, xt), expected, "linearize");
  try {  // tangents structured as the primals, as torch.func requires
    jvp_fn(List{wt[0]}, xt);
    ADD_FAILURE() << "a tangent list shorter than its primal was accepted";
  } catch (const fg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the tangent of 'ws' holds 1 tensors, but 'ws' holds 2"), std::string::npos)
        << e.what();
  }
}

}  // namespace
