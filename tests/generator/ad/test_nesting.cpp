// Transforms nested in each other (nesting_functions.cpp), checked against central finite
// differences in float64 of the first-order transforms, against each other, and against loops of
// the unbatched versions for the vmaps around them.
#include <gtest/gtest.h>

#include <functional>
#include <tuple>
#include <vector>

#include "nesting_functions.funcgen.h"

namespace nest {
fg::Tensor f(const fg::Tensor& x);
fg::Tensor g(const fg::Tensor& x, const fg::Tensor& w);
fg::Tensor h(const fg::Tensor& x, const fg::Tensor& w);
std::tuple<fg::Tensor, fg::Tensor> pair(const fg::Tensor& x);
fg::Tensor layers(const fg::Tensor& x, const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2);
fg::Tensor rotated(const fg::Tensor& w, const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> twice(const fg::Tensor& x);
fg::Tensor product(const fg::Tensor& w, const fg::Tensor& x);
}  // namespace nest

namespace {

using T = fg::Tensor;
using Fn = std::function<T(const T&)>;

// d F(x) / d x by central differences: shape F(x).sizes() + x.sizes().
T numeric_jacobian(const Fn& fn, const T& x) {
  constexpr double step = 1e-6;
  const T base = x.contiguous().clone();
  std::vector<T> columns;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < base.numel(); ++i) {
    T up = base.clone(), down = base.clone();
    up.data_ptr<double>()[i] += step;
    down.data_ptr<double>()[i] -= step;
    const T column = (fn(up) - fn(down)) / (2 * step);
    if (shape.empty()) shape = column.sizes().vec();
    columns.push_back(column.reshape({-1}));
  }
  for (int64_t s : base.sizes()) shape.push_back(s);
  return fg::stack(columns, -1).reshape(shape);
}

// d F(x + t v) / d t at t = 0.
T numeric_directional(const Fn& fn, const T& x, const T& v) {
  constexpr double step = 1e-6;
  return (fn(x + v * step) - fn(x - v * step)) / (2 * step);
}

void expect_close(const T& actual, const T& expected, double tolerance, const char* what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(fg::allclose(actual, expected, tolerance, tolerance)) << what << "\nactual\n"
                                                                     << actual << "\nexpected\n" << expected;
}

constexpr double kNumeric = 1e-5;  // against finite differences
constexpr double kExact = 1e-10;   // two exact computations of the same derivative

class Nesting : public ::testing::Test {
 protected:
  void SetUp() override { fg::manual_seed(5); }
  static T rand64(fg::IntArrayRef sizes) { return fg::randn(sizes, fg::kDouble); }
};

}  // namespace

TEST_F(Nesting, JacrevOfJacrevIsTheJacobianOfTheJacobian) {
  const T x = rand64({4}) * 0.7;
  expect_close(nest::f_jacrev(x), numeric_jacobian(nest::f, x), kNumeric, "jacrev(f)");
  const T second = nest::f_jacrev_jacrev(x);
  ASSERT_EQ(second.sizes(), (std::vector<int64_t>{4, 4, 4}));
  expect_close(second, numeric_jacobian(nest::f_jacrev, x), kNumeric, "jacrev(jacrev(f))");
  // Every order of forward and reverse mode gives the same second derivatives.
  expect_close(nest::f_jacfwd_jacrev(x), second, kExact, "jacfwd(jacrev(f))");
  expect_close(nest::f_jacrev_jacfwd(x), second, kExact, "jacrev(jacfwd(f))");
  expect_close(nest::f_jacfwd_jacfwd(x), second, kExact, "jacfwd(jacfwd(f))");
}

TEST_F(Nesting, JvpOfJacrevIsTheDirectionalDerivativeOfTheJacobian) {
  const T x = rand64({4}) * 0.7, v = rand64({4});
  const auto [jac, tangent] = nest::f_jvp_jacrev(x, v);
  expect_close(jac, nest::f_jacrev(x), kExact, "primal");
  expect_close(tangent, numeric_directional(nest::f_jacrev, x, v), kNumeric, "tangent");
}

TEST_F(Nesting, VmapOfJacrevOfJacrevIsTheLoopOfIt) {
  const T batch = rand64({3, 4}) * 0.7;
  const T all = nest::f_batched_jacrev_jacrev(batch);
  ASSERT_EQ(all.sizes(), (std::vector<int64_t>{3, 4, 4, 4}));
  for (int64_t b = 0; b < 3; ++b) expect_close(all.select(0, b), nest::f_jacrev_jacrev(batch.select(0, b)), kExact, "row");
  // chunk_size on the inner jacrev too (its vmap over the basis runs 3 or 2 rows of 4 at a time)
  expect_close(nest::f_batched_chunked(batch), all, kExact, "vmap(jacrev(jacrev(f, chunk_size=2)))");
}

TEST_F(Nesting, ChunkSizeAtEveryLevelGivesTheSameJacobians) {
  const T x = rand64({4});
  expect_close(nest::f_chunked_jacrev_jacrev(x), nest::f_jacrev_jacrev(x), kExact, "chunk_size=3 inside chunk_size=1");
}

TEST_F(Nesting, HessianIsJacfwdOfJacrevForEveryPairOfArgnums) {
  const T x = rand64({3}) * 0.8, w = rand64({3, 2});
  const auto grad_x = [&](const T& xv) { return std::get<0>(nest::g_grad(xv, w)); };
  const auto grad_w = [&](const T& wv) { return std::get<1>(nest::g_grad(x, wv)); };
  const auto grad_w_of_x = [&](const T& xv) { return std::get<1>(nest::g_grad(xv, w)); };
  const auto grad_x_of_w = [&](const T& wv) { return std::get<0>(nest::g_grad(x, wv)); };
  const T hessian = nest::g_hessian(x, w);
  expect_close(hessian, numeric_jacobian(grad_x, x), kNumeric, "hessian");
  expect_close(hessian, hessian.t(), kExact, "symmetric");
  expect_close(nest::g_jacrev_jacrev(x, w), hessian, kExact, "jacrev(jacrev(g))");
  const auto [row_x, row_w] = nest::g_hessian_pairs(x, w);
  const auto& [hxx, hxw] = row_x;
  const auto& [hwx, hww] = row_w;
  expect_close(hxx, hessian, kExact, "d2/dx2");
  ASSERT_EQ(hxw.sizes(), (std::vector<int64_t>{3, 3, 2}));
  expect_close(hxw, numeric_jacobian(grad_x_of_w, w), kNumeric, "d2/dx dw");
  expect_close(hwx, numeric_jacobian(grad_w_of_x, x), kNumeric, "d2/dw dx");
  expect_close(hww, numeric_jacobian(grad_w, w), kNumeric, "d2/dw2");
}

TEST_F(Nesting, VmapOfHessianAndHessianVectorProducts) {
  const T xs = rand64({4, 3}) * 0.8, w = rand64({3, 2}), tx = rand64({3}), tw = rand64({3, 2});
  const T all = nest::g_batched_hessian(xs, w);
  for (int64_t b = 0; b < 4; ++b) expect_close(all.select(0, b), nest::g_hessian(xs.select(0, b), w), kExact, "row");
  // jvp(grad(g)) with tangents for x and w: H_xx tx + H_xw tw.
  const T x = xs.select(0, 0);
  const auto [grad, hvp] = nest::g_hvp(x, w, tx, tw);
  const auto [row_x, row_w] = nest::g_hessian_pairs(x, w);
  const T expected = std::get<0>(row_x).matmul(tx) + (std::get<1>(row_x) * tw).sum({1, 2});
  expect_close(grad, std::get<0>(nest::g_grad(x, w)), kExact, "grad");
  expect_close(hvp, expected, kExact, "hvp");
}

TEST_F(Nesting, JacobiansOfAVmapSumTheSharedArgumentOverTheBatch) {
  const T xs = rand64({3, 4}), w = rand64({4, 2});
  const auto of_xs = [&](const T& v) { return nest::h_batched(v, w); };
  const auto of_w = [&](const T& v) { return nest::h_batched(xs, v); };
  const T jx = numeric_jacobian(of_xs, xs), jw = numeric_jacobian(of_w, w);
  const auto [rx, rw] = nest::h_jacrev_vmap(xs, w);
  ASSERT_EQ(rx.sizes(), (std::vector<int64_t>{3, 2, 3, 4}));
  expect_close(rx, jx, kNumeric, "jacrev(vmap) x");
  expect_close(rw, jw, kNumeric, "jacrev(vmap) w");
  const auto [fx, fw] = nest::h_jacfwd_vmap(xs, w);
  expect_close(fx, rx, kExact, "jacfwd(vmap) x");
  expect_close(fw, rw, kExact, "jacfwd(vmap) w");
}

TEST_F(Nesting, JvpAndVjpOfAVmap) {
  const T xs = rand64({3, 4}), w = rand64({4, 2}), txs = rand64({3, 4}), tw = rand64({4, 2});
  const auto [out, tangent] = nest::h_jvp_vmap(xs, w, txs, tw);
  expect_close(out, nest::h_batched(xs, w), kExact, "primal");
  const auto along = [&](const T& s) { return nest::h_batched(xs + txs * s.item<double>(), w + tw * s.item<double>()); };
  const auto zero = fg::zeros({}, fg::kDouble);
  expect_close(tangent, numeric_directional(along, zero, fg::ones({}, fg::kDouble)), kNumeric, "tangent");
  const auto [value, pullback] = nest::h_vjp_vmap(xs, w);
  expect_close(value, out, kExact, "vjp primal");
  const T ct = rand64({3, 2});
  const auto [gx, gw] = pullback(ct);
  const auto [jx, jw] = nest::h_jacrev_vmap(xs, w);
  expect_close(gx, (jx * ct.reshape({3, 2, 1, 1})).sum({0, 1}), kExact, "pullback x");
  expect_close(gw, (jw * ct.reshape({3, 2, 1, 1})).sum({0, 1}), kExact, "pullback w");
}

TEST_F(Nesting, SeveralOutputsGetOneJacobianEach) {
  const T x = rand64({3});
  const auto first = [](const T& v) { return std::get<0>(nest::pair(v)); };
  const auto second = [](const T& v) { return std::get<1>(nest::pair(v)); };
  const auto [r0, r1] = nest::pair_jacrev(x);
  expect_close(r0, numeric_jacobian(first, x), kNumeric, "jacrev output 0");
  expect_close(r1, numeric_jacobian(second, x), kNumeric, "jacrev output 1");
  const auto [f0, f1] = nest::pair_jacfwd(x);
  expect_close(f0, r0, kExact, "jacfwd output 0");
  expect_close(f1, r1, kExact, "jacfwd output 1");
}

TEST_F(Nesting, HasAuxPassesTheAuxValuesThrough) {
  const T x = rand64({3});
  const auto value = [](const T& v) { return v.sin() * v.sum(); };
  const auto [jf, aux_f] = nest::aux_jacfwd(x);
  const auto [jr, aux_r] = nest::aux_jacrev(x);
  expect_close(jf, numeric_jacobian(value, x), kNumeric, "jacfwd");
  expect_close(jr, jf, kExact, "jacrev");
  expect_close(aux_f, x.cos() * 2, kExact, "jacfwd aux");
  expect_close(aux_r, x.cos() * 2, kExact, "jacrev aux");
}

// d/dx diag(cos(x) r) = diag(-sin(x) r): with the draw r the jacobian used, -tan(x) times it.
TEST_F(Nesting, RerunsOfARandomFunctionReplayItsDraws) {
  const T x = rand64({4}) * 0.5, t = rand64({4});
  auto [jac, jac_tangent] = nest::noisy_jacrev_jvp(x, t);
  const T diag = jac.diagonal();
  expect_close(jac, fg::diag_embed(diag), kExact, "jacrev(noisy) is diagonal");
  expect_close(jac_tangent, fg::diag_embed(-x.tan() * diag * t), kExact, "jvp(jacrev(noisy)) on the same draw");
  auto [jac2, pullback] = nest::noisy_jacrev_vjp(x);
  const T ct = rand64({4, 4});
  const T d2 = jac2.diagonal();
  expect_close(std::get<0>(pullback(ct)), -x.tan() * d2 * ct.diagonal(), kExact, "vjp(jacrev(noisy)) on the same draw");
}

// out = sin(x) z for a draw z: its tangent is cos(x) z t = out / tan(x) t on the same draw, and
// under randomness='same' every example's z is the same.
TEST_F(Nesting, RandomnessOfAVmapInsideDerivatives) {
  const T x = rand64({4, 3}) * 0.5 + 1, t = rand64({4, 3});
  for (bool same : {false, true}) {
    const auto [out, tangent] = same ? nest::scaled_jvp_same(x, t) : nest::scaled_jvp_different(x, t);
    expect_close(tangent, out / x.tan() * t, kExact, "jvp(vmap(f, randomness)) on the same draw");
    const T z = out / x.sin();
    const double spread = (z - z.select(0, 0)).abs().max().item<double>();
    if (same) EXPECT_LT(spread, kExact) << "randomness='same' shares one draw";
    else EXPECT_GT(spread, 1e-3) << "randomness='different' draws per example";
  }
  const auto [out, pullback] = nest::scaled_vjp_different(x);
  const T ct = rand64({4, 3});
  expect_close(std::get<0>(pullback(ct)), ct * out / x.tan(), kExact, "vjp(vmap(f, randomness='different'))");
  const T jac = nest::scaled_jacrev_different(x).reshape({12, 12});
  expect_close(jac, fg::diag_embed(jac.diagonal()), kExact, "jacrev(vmap(f)) is diagonal");
  const T zr = jac.diagonal().reshape({4, 3}) / x.cos();
  EXPECT_GT((zr - zr.select(0, 0)).abs().max().item<double>(), 1e-3) << "jacrev(vmap(f, randomness='different'))";
  const T jf = nest::scaled_jacfwd_same(x).reshape({12, 12});
  expect_close(jf, fg::diag_embed(jf.diagonal()), kExact, "jacfwd(vmap(f)) is diagonal");
  const T zf = jf.diagonal().reshape({4, 3}) / x.cos();
  expect_close(zf, zf.select(0, 0).expand({4, 3}), kExact, "jacfwd(vmap(f, randomness='same')) shares one draw");
  // jacfwd with randomness='different' inside vjp: d/dx of its diagonal cos(x) z is -tan(x) times it
  const T x3 = rand64({3}) * 0.5 + 1, ct3 = rand64({3, 3});
  const auto [j3, pullback3] = nest::scaled_vjp_jacfwd_different(x3);
  expect_close(j3, fg::diag_embed(j3.diagonal()), kExact, "jacfwd(f, randomness='different') is diagonal");
  expect_close(std::get<0>(pullback3(ct3)), -x3.tan() * j3.diagonal() * ct3.diagonal(), kExact,
               "vjp(jacfwd(f, randomness='different')) on the same draws");
}

// split(x, w) = (x w, sin(w)) with x mapped and out_dims=(0, None): sin(w) once, unbatched.
TEST_F(Nesting, OutDimsNoneInsideDerivatives) {
  const T x = rand64({4, 3}), w = rand64({3}), tx = rand64({4, 3}), tw = rand64({3});
  const auto [outs, pullback] = nest::split_vjp(x, w);
  expect_close(std::get<0>(outs), x * w, kExact, "batched output");
  expect_close(std::get<1>(outs), w.sin(), kExact, "output with out_dims=None");
  const T c0 = rand64({4, 3}), c1 = rand64({3});
  const auto [gx, gw] = pullback(c0, c1);
  expect_close(gx, c0 * w, kExact, "vjp x");
  expect_close(gw, (c0 * x).sum({0}) + c1 * w.cos(), kExact, "vjp w: the unbatched cotangent counts once");
  const auto [primals, tangents] = nest::split_jvp(x, w, tx, tw);
  expect_close(std::get<0>(tangents), tx * w + x * tw, kExact, "jvp batched output");
  expect_close(std::get<1>(tangents), w.cos() * tw, kExact, "jvp unbatched output");
  const auto [j0, j1] = nest::split_jacrev(x, w);
  expect_close(j0, fg::diag_embed(x), kExact, "jacrev batched output");
  expect_close(j1, fg::diag_embed(w.cos()), kExact, "jacrev unbatched output");
}

// A tall layer (20 outputs of 3 inputs) then a wide one: the basis of the outputs and of the inputs
// is never formed, and each jacobian is the finite differences' (for every example under vmap).
TEST_F(Nesting, JacobiansThroughAStructuredBasisAreTheFiniteDifferences) {
  const T w1 = rand64({20, 3}), b1 = rand64({20}), w2 = rand64({4, 20}) * 0.3;
  const T x = rand64({3});
  const Fn fn = [&](const T& v) { return nest::layers(v, w1, b1, w2); };
  const T j = numeric_jacobian(fn, x);
  expect_close(nest::layers_jacrev(x, w1, b1, w2), j, kNumeric, "jacrev");
  expect_close(nest::layers_jacfwd(x, w1, b1, w2), j, kNumeric, "jacfwd");
  const T xs = rand64({5, 3});
  const T rows = nest::layers_batched_jacrev(xs, w1, b1, w2), columns = nest::layers_batched_jacfwd(xs, w1, b1, w2);
  for (int64_t i = 0; i < 5; ++i) {
    const T ji = numeric_jacobian(fn, xs[i]);
    expect_close(rows[i], ji, kNumeric, "vmap(jacrev)");
    expect_close(columns[i], ji, kNumeric, "vmap(jacfwd)");
  }
  const T w1s = rand64({2, 20, 3}), b1s = rand64({2, 20});
  const T grid = nest::layers_models_jacrev(xs, w1s, b1s, w2);
  ASSERT_EQ(grid.sizes().vec(), (std::vector<int64_t>{2, 5, 4, 3}));
  for (int64_t m = 0; m < 2; ++m)
    for (int64_t i = 0; i < 5; ++i) {
      const Fn model = [&](const T& v) { return nest::layers(v, w1s[m], b1s[m], w2); };
      expect_close(grid[m][i], numeric_jacobian(model, xs[i]), kNumeric, "vmap(vmap(jacrev)) per model and example");
    }
  const T wl = rand64({4, 3});
  const T linear_rows = nest::linear_batched_jacrev(xs, wl);
  for (int64_t i = 0; i < 5; ++i) expect_close(linear_rows[i], wl, kExact, "vmap(jacrev) of a linear map");
  const Fn by_weight = [&](const T& w) { return nest::layers(x, w, b1, w2); };
  expect_close(nest::layers_weight_jacrev(x, w1, b1, w2), numeric_jacobian(by_weight, w1), kNumeric,
               "jacrev w.r.t. w1");

  const T w = rand64({6, 4}), v = rand64({4});
  const Fn turn = [&](const T& y) { return nest::rotated(w, y); };
  expect_close(nest::rotated_jacrev(w, v), numeric_jacobian(turn, v), kNumeric, "jacrev of matmul(w, x)");
  expect_close(nest::rotated_jacfwd(w, v), numeric_jacobian(turn, v), kNumeric, "jacfwd of matmul(w, x)");
  const T vs = rand64({3, 4});
  const T batched = nest::rotated_batched_jacfwd(w, vs);
  for (int64_t i = 0; i < 3; ++i)
    expect_close(batched[i], numeric_jacobian(turn, vs[i]), kNumeric, "vmap(jacfwd) of matmul(w, x)");
  const Fn by_matrix = [&](const T& m) { return nest::rotated(m, v); };
  expect_close(nest::rotated_weight_jacfwd(w, v), numeric_jacobian(by_matrix, w), kNumeric, "jacfwd w.r.t. w");
}

// Equal outputs stay distinct tensors: writing one in place leaves the other as it was.
TEST_F(Nesting, EqualOutputsAreDistinctTensors) {
  const T xs = rand64({3, 4});
  auto [a, b] = nest::twice_batched(xs);
  expect_close(a, xs.sin(), kExact, "first");
  expect_close(b, xs.sin(), kExact, "second");
  a.add_(1.0);
  expect_close(b, xs.sin(), kExact, "second after writing the first");
  auto [ja, jb] = nest::twice_jacrev(xs[0]);
  const T j = numeric_jacobian([](const T& v) { return v.sin(); }, xs[0]);
  expect_close(ja, j, kNumeric, "jacobian of the first");
  ja.mul_(0.0);
  expect_close(jb, j, kNumeric, "jacobian of the second after writing the first");
}

TEST_F(Nesting, OutputsThroughViewsAndJacobiansOfAWeightHaveTheirOwnMemory) {
  const T xs = rand64({3, 4});
  auto [a, b, c] = nest::thrice_batched(xs);
  a.mul_(0.0);
  expect_close(b, xs.sin().unsqueeze(1), kExact, "second after writing the first");
  expect_close(c, xs.sin(), kExact, "third after writing the first");
  const T w = rand64({5, 4}), x = rand64({4});
  const T before = w.clone();
  T j = nest::product_jacfwd(w, x);
  expect_close(j, w, kExact, "the jacobian of w @ x is w");
  j.mul_(0.0);
  expect_close(w, before, kExact, "w after writing its jacobian");
}
