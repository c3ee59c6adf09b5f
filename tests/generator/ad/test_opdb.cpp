// The transform matrix over the op database (opdb_functions.cpp), as functorch's test_ops.py: for
// every op, jvp and vjp against central finite differences in float64, jacrev against jacfwd,
// vmap(jvp) and the batched vjp against loops of the unbatched versions, the hessian symmetric,
// equal to finite differences of the gradient and to jacrev(jacrev); and every transform of every
// op equal to the same transform generated with --no-optimize (opdb_unoptimized).
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "opdb_functions.funcgen.h"
// The database generated with --no-optimize, compiled in namespace opdb_unoptimized. Its header
// differs from the other in its first line, else GCC's #pragma once may skip it as the same file
// (same size, time and contents).
#define opdb opdb_unoptimized
#include FUNCGEN_UNOPTIMIZED_HEADER
#undef opdb

using T = fg::Tensor;
using Shape = std::vector<int64_t>;
const Shape M{3, 4};

// name, x's shape, y's shape
#define FG_OPS(X) \
  X(add, (Shape{3, 1}), (Shape{4})) \
  X(add_alpha, M, (Shape{4})) \
  X(sub, M, (Shape{3, 1})) \
  X(mul, M, (Shape{4})) \
  X(div, (Shape{3, 1}), M) \
  X(pow_tensor, M, (Shape{4})) \
  X(maximum, M, (Shape{4})) \
  X(mean_all, M, (Shape{4})) \
  X(matmul, M, (Shape{4, 2})) \
  X(matmul_vec, M, (Shape{4, 2})) \
  X(vec_matmul, M, (Shape{4, 2})) \
  X(mm, M, (Shape{2, 4})) \
  X(mv, M, (Shape{2, 4})) \
  X(outer, M, (Shape{2, 5})) \
  X(linear, M, (Shape{4, 4})) \
  X(linear_no_bias, M, (Shape{2, 4})) \
  X(t, M, M) \
  X(transpose, M, M) \
  X(unsqueeze, (Shape{3}), (Shape{4})) \
  X(reshape, M, (Shape{2, 6})) \
  X(view, M, (Shape{12})) \
  X(helper_call, M, (Shape{4})) \
  X(rsub, M, M) \
  X(rdiv, M, M) \
  X(pow_scalar, M, M) \
  X(neg, M, M) \
  X(abs, M, M) \
  X(exp, M, M) \
  X(log, M, M) \
  X(log1p, M, M) \
  X(expm1, M, M) \
  X(sqrt, M, M) \
  X(rsqrt, M, M) \
  X(sin, M, M) \
  X(cos, M, M) \
  X(tan, M, M) \
  X(tanh, M, M) \
  X(sigmoid, M, M) \
  X(relu, M, M) \
  X(erf, M, M) \
  X(silu, M, M) \
  X(log_sigmoid, M, M) \
  X(leaky_relu, M, M) \
  X(elu, M, M) \
  X(softplus, M, M) \
  X(hardtanh, M, M) \
  X(gelu, M, M) \
  X(minimum, M, M) \
  X(clamp, M, M) \
  X(clamp_min, M, M) \
  X(clamp_max, M, M) \
  X(where, M, M) \
  X(sum_all, M, M) \
  X(sum_dim, M, M) \
  X(sum_keepdim, M, M) \
  X(mean_dim, M, M) \
  X(logsumexp, M, M) \
  X(softmax, M, M) \
  X(log_softmax, M, M) \
  X(dot, M, M) \
  X(squeeze, M, M) \
  X(expand, M, M) \
  X(clone, M, M) \
  X(gather, M, M) \
  X(scatter_add, M, M) \
  X(mse_loss, M, M) \
  X(mse_loss_sum, M, M) \
  X(mse_loss_none, M, M) \
  X(inplace, M, M) \
  X(cat, M, (Shape{2, 4})) \
  X(cat_last_dim, M, (Shape{3, 2})) \
  X(stack, M, M) \
  X(stack_last_dim, M, (Shape{4})) \
  X(amax_dim, M, M) \
  X(amax_keepdim, M, (Shape{4})) \
  X(amax_all, M, M) \
  X(amin_dims, M, (Shape{3, 1})) \
  X(amin_dim, M, M) \
  X(max_all, M, M) \
  X(max_dim, M, M) \
  X(min_dim_keepdim, M, M) \
  X(min_all, M, (Shape{4})) \
  X(max_binary, M, (Shape{4})) \
  X(min_binary, (Shape{4}), M) \
  X(norm_all, M, M) \
  X(norm_dim, M, (Shape{4})) \
  X(norm_p3_keepdim, M, M) \
  X(norm_p1, M, M) \
  X(norm_p15, M, M) \
  X(bmm, (Shape{2, 3, 4}), (Shape{2, 4, 5})) \
  X(bmm_free, (Shape{2, 3, 4}), (Shape{2, 4, 2})) \
  X(einsum_matmul, M, (Shape{4, 2})) \
  X(einsum_batched, (Shape{2, 3, 4}), (Shape{2, 4, 2})) \
  X(einsum_summed_index, M, (Shape{2, 5})) \
  X(einsum_implicit_three, M, (Shape{4, 2})) \
  X(einsum_diagonal, (Shape{3, 3}), (Shape{3})) \
  X(einsum_trace_of_blocks, (Shape{3, 3, 2}), (Shape{2, 4})) \
  X(einsum_ellipsis, (Shape{2, 3, 4}), (Shape{4, 2})) \
  X(einsum_ellipsis_broadcast, (Shape{2, 3, 4}), (Shape{4, 2})) \
  X(einsum_implicit_ellipsis, (Shape{2, 3, 4}), (Shape{2, 5})) \
  X(einsum_ellipsis_summed, (Shape{2, 3, 4}), (Shape{4, 2})) \
  X(einsum_ellipsis_dot, (Shape{2, 3, 4}), (Shape{3, 4})) \
  X(einsum_ellipsis_own_index, (Shape{2, 3, 4}), (Shape{2, 3})) \
  X(permute, (Shape{2, 3, 4}), (Shape{4, 2, 3})) \
  X(permute_negative, (Shape{2, 3, 4}), (Shape{4, 2, 3})) \
  X(movedim, (Shape{2, 3, 4}), (Shape{3, 4, 2})) \
  X(movedim_negative, (Shape{2, 3, 4}), (Shape{4, 2, 3})) \
  X(broadcast_to, (Shape{3, 1}), (Shape{2, 3, 4})) \
  X(slice, M, M) \
  X(slice_step, M, M) \
  X(slice_default_end, M, M) \
  X(narrow, M, M) \
  X(diagonal, M, M) \
  X(diagonal_dims, (Shape{2, 3, 3}), (Shape{2, 2})) \
  X(diag_embed, M, M) \
  X(diag_embed_offset, M, M) \
  X(index_select, M, M) \
  X(index_select_dim0, M, (Shape{4, 4})) \
  X(nll_loss, M, M) \
  X(nll_loss_weight_sum, M, M) \
  X(nll_loss_weight_mean_ignore, M, (Shape{4})) \
  X(nll_loss_none_ignore, M, M) \
  X(nll_loss_1d, M, M) \
  X(nll_loss_kdim, (Shape{2, 3, 4}), (Shape{2, 3, 4})) \
  X(cross_entropy, M, M) \
  X(cross_entropy_weight_sum, M, (Shape{3, 1})) \
  X(cross_entropy_no_weight, M, M) \
  X(cross_entropy_none_ignore, M, M) \
  X(cross_entropy_1d, M, M) \
  X(cross_entropy_kdim, (Shape{2, 3, 4}), (Shape{3, 4})) \
  X(conv2d, (Shape{1, 2, 4, 3}), (Shape{3, 2, 2, 2})) \
  X(conv2d_strided_groups, (Shape{2, 4, 5, 3}), (Shape{2, 2, 2, 3})) \
  X(conv2d_same_dilated, (Shape{1, 2, 4, 4}), (Shape{2, 2, 2, 2})) \
  X(conv1d, (Shape{2, 2, 7}), (Shape{3, 2, 3})) \
  X(conv1d_unbatched, (Shape{2, 2, 6}), (Shape{3, 2, 3})) \
  X(conv_transpose2d, (Shape{1, 3, 3, 2}), (Shape{3, 2, 3, 3})) \
  X(conv_transpose1d_groups, (Shape{2, 4, 5}), (Shape{4, 1, 3})) \
  X(max_pool2d, (Shape{2, 5, 4}), (Shape{2, 5, 4})) \
  X(max_pool1d, (Shape{2, 3, 7}), (Shape{7})) \
  X(avg_pool2d, (Shape{1, 2, 5, 4}), (Shape{1, 2, 5, 4})) \
  X(adaptive_avg_pool2d, (Shape{2, 5, 4}), (Shape{5, 4})) \
  X(var, M, M) \
  X(std, M, M) \
  X(layer_norm, (Shape{2, 3, 4}), (Shape{3, 4})) \
  X(group_norm, (Shape{2, 4, 3}), (Shape{4})) \
  X(batch_norm, (Shape{3, 2, 4}), (Shape{2})) \
  X(attention, (Shape{2, 3, 4}), (Shape{2, 5, 4})) \
  X(embedding, (Shape{5, 3}), (Shape{2, 3})) \
  X(masked_fill, M, (Shape{4})) \
  X(triangles, M, M) \
  X(flip_roll, (Shape{2, 3, 4}), M) \
  X(repeat, (Shape{3, 1}), (Shape{2, 3, 2})) \
  X(split_chunk, M, M) \
  X(one_hot, M, (Shape{4})) \
  X(bce_with_logits, M, M) \
  X(smooth_l1_huber, M, M) \
  X(elementwise_chain, M, M) \
  X(elementwise_cut, M, M)

// The functions of the op database (defined in opdb_functions.cpp, compiled with its generated code).
namespace opdb {
#define FG_DECLARE(op, xs, ys) fg::Tensor f_##op(const T& x, const T& y);
FG_OPS(FG_DECLARE)
#undef FG_DECLARE
}  // namespace opdb

namespace {

struct Entry {
  const char* name;
  Shape x, y;
  std::function<T(const T&, const T&)> f;
  std::function<std::tuple<T, T>(const T&, const T&, const T&, const T&)> jvp;
  std::function<std::tuple<T, T, T>(const T&, const T&, const T&)> vjp;  // out, then the pullback's grads
  std::function<std::tuple<T, T>(const T&, const T&)> jacrev, jacfwd;
  std::function<std::tuple<T, T>(const T&, const T&, const T&, const T&)> batched_jvp;
  std::function<std::tuple<T, T>(const T&, const T&, const T&)> batched_vjp;
  std::function<T(const T&, const T&)> hessian, scalar_grad, jacrev_jacrev;
};

#define ENTRY(ns, op, xs, ys)                                                      \
  Entry {                                                                          \
    #op, xs, ys, opdb::f_##op, ns::op##_jvp,                                       \
        [](const T& x, const T& y, const T& ct) {                                  \
          auto [out, pullback] = ns::op##_vjp(x, y);                               \
          auto [gx, gy] = pullback(ct);                                            \
          return std::make_tuple(out, gx, gy);                                     \
        },                                                                         \
        ns::op##_jacrev, ns::op##_jacfwd, ns::op##_batched_jvp,                    \
        ns::op##_batched_vjp, ns::op##_hessian, ns::op##_scalar_grad,              \
        ns::op##_jacrev_jacrev                                                     \
  }

std::vector<Entry> entries() {
#define FG_ENTRY(op, xs, ys) ENTRY(opdb, op, xs, ys),
  return {FG_OPS(FG_ENTRY)};
#undef FG_ENTRY
}

// The same entries from the code generated with --no-optimize.
const Entry& unoptimized(const std::string& name) {
#define FG_ENTRY(op, xs, ys) ENTRY(opdb_unoptimized, op, xs, ys),
  static const std::vector<Entry> all{FG_OPS(FG_ENTRY)};
#undef FG_ENTRY
  for (const Entry& e : all)
    if (name == e.name) return e;
  throw std::runtime_error("no unoptimized entry " + name);
}

void PrintTo(const Entry& e, std::ostream* os) { *os << e.name; }

class OpDb : public ::testing::TestWithParam<Entry> {
 protected:
  void SetUp() override {
    fg::manual_seed(7);
    x = fg::randn(GetParam().x, fg::kDouble);
    y = fg::randn(GetParam().y, fg::kDouble);
  }
  T x, y;
};

constexpr double kEps = 1e-6, kTol = 1e-6;

// The directional derivative of f at (x, y) along (tx, ty), by central differences.
T finite_difference(const Entry& e, const T& x, const T& y, const T& tx, const T& ty) {
  return (e.f(x + tx * kEps, y + ty * kEps) - e.f(x - tx * kEps, y - ty * kEps)) / (2 * kEps);
}

double inner(const T& a, const T& b) { return (a * b).sum().item<double>(); }

TEST_P(OpDb, JvpMatchesFiniteDifferences) {
  const Entry& e = GetParam();
  const T tx = fg::randn(x.sizes(), fg::kDouble), ty = fg::randn(y.sizes(), fg::kDouble);
  auto [out, tangent] = e.jvp(x, y, tx, ty);
  EXPECT_TRUE(fg::allclose(out, e.f(x, y), 1e-12, 1e-12));
  const T fd = finite_difference(e, x, y, tx, ty);
  ASSERT_EQ(tangent.sizes(), fd.sizes());
  EXPECT_TRUE(fg::allclose(tangent, fd, kTol, kTol)) << "jvp\n" << tangent << "\nfinite differences\n" << fd;
}

TEST_P(OpDb, VjpMatchesFiniteDifferences) {
  const Entry& e = GetParam();
  const T out = e.f(x, y);
  const T ct = fg::randn(out.sizes(), fg::kDouble);
  auto [o, gx, gy] = e.vjp(x, y, ct);
  EXPECT_TRUE(fg::allclose(o, out, 1e-12, 1e-12));
  ASSERT_EQ(gx.sizes(), x.sizes());
  ASSERT_EQ(gy.sizes(), y.sizes());
  // <ct, J t> = <J^T ct, t> for random directions t.
  for (int k = 0; k < 3; ++k) {
    const T tx = fg::randn(x.sizes(), fg::kDouble), ty = fg::randn(y.sizes(), fg::kDouble);
    const double want = inner(ct, finite_difference(e, x, y, tx, ty));
    EXPECT_NEAR(inner(gx, tx) + inner(gy, ty), want, kTol * (1 + std::abs(want)));
  }
}

TEST_P(OpDb, JacrevMatchesJacfwd) {
  const Entry& e = GetParam();
  auto [rx, ry] = e.jacrev(x, y);
  auto [fx, fy] = e.jacfwd(x, y);
  const T out = e.f(x, y);
  std::vector<int64_t> want(out.sizes().begin(), out.sizes().end());
  want.insert(want.end(), x.sizes().begin(), x.sizes().end());
  EXPECT_EQ(rx.sizes(), fg::IntArrayRef(want));
  EXPECT_EQ(fx.sizes(), rx.sizes());
  EXPECT_EQ(fy.sizes(), ry.sizes());
  EXPECT_TRUE(fg::allclose(rx, fx, 1e-10, 1e-10)) << rx << fx;
  EXPECT_TRUE(fg::allclose(ry, fy, 1e-10, 1e-10)) << ry << fy;
}

TEST_P(OpDb, BatchedJvpIsTheLoopOfJvp) {
  const Entry& e = GetParam();
  const int64_t batch = 3;
  std::vector<T> xs, ys, txs, tys;
  for (int64_t b = 0; b < batch; ++b) {
    xs.push_back(fg::randn(x.sizes(), fg::kDouble));
    ys.push_back(fg::randn(y.sizes(), fg::kDouble));
    txs.push_back(fg::randn(x.sizes(), fg::kDouble));
    tys.push_back(fg::randn(y.sizes(), fg::kDouble));
  }
  auto [outs, tangents] = e.batched_jvp(fg::stack(xs), fg::stack(ys), fg::stack(txs), fg::stack(tys));
  for (int64_t b = 0; b < batch; ++b) {
    auto [o, t] = e.jvp(xs[b], ys[b], txs[b], tys[b]);
    EXPECT_TRUE(fg::allclose(outs[b], o, 1e-12, 1e-12)) << "example " << b;
    EXPECT_TRUE(fg::allclose(tangents[b], t, 1e-12, 1e-12)) << "example " << b;
  }
}

TEST_P(OpDb, BatchedVjpIsTheLoopOfThePullback) {
  const Entry& e = GetParam();
  const T out = e.f(x, y);
  std::vector<T> cts;
  for (int b = 0; b < 3; ++b) cts.push_back(fg::randn(out.sizes(), fg::kDouble));
  auto [gxs, gys] = e.batched_vjp(x, y, fg::stack(cts));
  for (size_t b = 0; b < cts.size(); ++b) {
    auto [o, gx, gy] = e.vjp(x, y, cts[b]);
    EXPECT_TRUE(fg::allclose(gxs[static_cast<int64_t>(b)], gx, 1e-12, 1e-12)) << "example " << b;
    EXPECT_TRUE(fg::allclose(gys[static_cast<int64_t>(b)], gy, 1e-12, 1e-12)) << "example " << b;
  }
}

TEST_P(OpDb, HessianIsSymmetricAndTheDerivativeOfTheGradient) {
  const Entry& e = GetParam();
  const T h = e.hessian(x, y);
  const int64_t n = x.numel();
  const T square = h.reshape({n, n});
  EXPECT_TRUE(fg::allclose(square, square.t(), 1e-9, 1e-9)) << square;
  for (int64_t j = 0; j < n; ++j) {
    const T basis = fg::eye(n, fg::kDouble).select(0, j).reshape(x.sizes());
    const T fd = ((e.scalar_grad(x + basis * kEps, y) - e.scalar_grad(x - basis * kEps, y)) / (2 * kEps)).reshape({n});
    EXPECT_TRUE(fg::allclose(square.select(1, j), fd, 1e-5, 1e-5)) << "column " << j << "\n" << square.select(1, j) << fd;
  }
}

TEST_P(OpDb, HessianEqualsJacrevOfJacrev) {
  const Entry& e = GetParam();
  const T h = e.hessian(x, y), rr = e.jacrev_jacrev(x, y);
  ASSERT_EQ(h.sizes(), rr.sizes());
  EXPECT_TRUE(fg::allclose(h, rr, 1e-10, 1e-10)) << "hessian\n" << h << "\njacrev(jacrev)\n" << rr;
}

// The optimizations (structured bases, common subexpressions, dead code) change no value: every
// transform's outputs equal those of the code as the transforms derive it.
TEST_P(OpDb, OptimizedEqualsUnoptimized) {
  const Entry& e = GetParam();
  const Entry& u = unoptimized(e.name);
  auto same = [](const char* what, const T& a, const T& b) {
    ASSERT_EQ(a.sizes(), b.sizes()) << what;
    EXPECT_TRUE(fg::allclose(a, b, 1e-12, 1e-12)) << what << "\noptimized\n" << a << "\nunoptimized\n" << b;
  };
  const T out = e.f(x, y);
  const T tx = fg::randn(x.sizes(), fg::kDouble), ty = fg::randn(y.sizes(), fg::kDouble);
  const T ct = fg::randn(out.sizes(), fg::kDouble);
  {
    auto [o, t] = e.jvp(x, y, tx, ty);
    auto [uo, ut] = u.jvp(x, y, tx, ty);
    same("jvp out", o, uo);
    same("jvp tangent", t, ut);
  }
  {
    auto [o, gx, gy] = e.vjp(x, y, ct);
    auto [uo, ugx, ugy] = u.vjp(x, y, ct);
    same("vjp out", o, uo);
    same("vjp x", gx, ugx);
    same("vjp y", gy, ugy);
  }
  using Jacobian = std::function<std::tuple<T, T>(const T&, const T&)>;
  for (auto [what, jac, ujac] : {std::tuple<const char*, Jacobian, Jacobian>{"jacrev", e.jacrev, u.jacrev},
                                 std::tuple<const char*, Jacobian, Jacobian>{"jacfwd", e.jacfwd, u.jacfwd}}) {
    auto [jx, jy] = jac(x, y);
    auto [ujx, ujy] = ujac(x, y);
    same(what, jx, ujx);
    same(what, jy, ujy);
  }
  const T xs = fg::stack({x, x * 2, -x}), ys = fg::stack({y, y * 0.5, y + 1});
  const T txs = fg::stack({tx, -tx, tx * 3}), tys = fg::stack({ty, ty, -ty});
  {
    auto [o, t] = e.batched_jvp(xs, ys, txs, tys);
    auto [uo, ut] = u.batched_jvp(xs, ys, txs, tys);
    same("vmap(jvp) out", o, uo);
    same("vmap(jvp) tangent", t, ut);
  }
  {
    const T cts = fg::stack({ct, ct * -2, ct + 1});
    auto [gx, gy] = e.batched_vjp(x, y, cts);
    auto [ugx, ugy] = u.batched_vjp(x, y, cts);
    same("vmap(grad) x", gx, ugx);
    same("vmap(grad) y", gy, ugy);
  }
  same("hessian", e.hessian(x, y), u.hessian(x, y));
  same("grad", e.scalar_grad(x, y), u.scalar_grad(x, y));
  same("jacrev(jacrev)", e.jacrev_jacrev(x, y), u.jacrev_jacrev(x, y));
}

INSTANTIATE_TEST_SUITE_P(Ops, OpDb, ::testing::ValuesIn(entries()),
                         [](const ::testing::TestParamInfo<Entry>& info) { return std::string(info.param.name); });

}  // namespace
