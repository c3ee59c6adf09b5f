// Reductions (sum, mean, amax, amin, max/min with indices, argmax/argmin, logsumexp, norm) and
// softmax/log_softmax against explicit loops in the scalar reference: every dim list, keepdim,
// 0-d and empty inputs, non-contiguous layouts, float32/float64/int64/bool, NaN propagation, the
// *_out forms and the error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "reference.h"

namespace {

using fg::Tensor;
using ref::Array;
using ref::Domain;
using ref::Layout;
using ref::Shape;
using Dims = std::vector<int64_t>;

using ref::dtype_tag;

std::string dims_str(const Dims& d) { return ref::shape_str(d); }

// ============================================================================ reduction database

struct ReduceOp {
  std::string name;
  std::function<Tensor(const Tensor&, const Dims&, bool)> fn;
  std::function<double(const std::vector<double>&)> ref;
  // Extra absolute tolerance per output, times the dtype's epsilon-ish factor: for sums the error
  // grows with the sum of |x| over the reduced slice, not with the result.
  std::function<double(const std::vector<double>&)> error_scale;
  bool exact;             // a selection (amax/amin/inf-norm): must be bit-exact
  bool empty_dims_ok;     // {} means every dim
};

double zero_scale(const std::vector<double>&) { return 0.0; }
double mean_scale(const std::vector<double>& v) { return v.empty() ? 0 : ref::abs_sum_of(v) / v.size(); }

Tensor norm_p(const Tensor& x, std::optional<double> p, const Dims& d, bool k) {
  std::optional<fg::Scalar> s;
  if (p) s = fg::Scalar(*p);
  return fg::norm(x, s, d, k);
}

const std::vector<ReduceOp>& reduce_ops() {
  static const std::vector<ReduceOp> ops = {
      {"sum", [](const Tensor& x, const Dims& d, bool k) { return fg::sum(x, d, k); }, ref::sum_of,
       ref::abs_sum_of, false, true},
      {"sum_method", [](const Tensor& x, const Dims& d, bool k) { return x.sum(d, k); }, ref::sum_of,
       ref::abs_sum_of, false, true},
      {"mean", [](const Tensor& x, const Dims& d, bool k) { return fg::mean(x, d, k); },
       [](const std::vector<double>& v) { return ref::sum_of(v) / static_cast<double>(v.size()); }, mean_scale,
       false, true},
      {"mean_method", [](const Tensor& x, const Dims& d, bool k) { return x.mean(d, k); },
       [](const std::vector<double>& v) { return ref::sum_of(v) / static_cast<double>(v.size()); }, mean_scale,
       false, true},
      {"amax", [](const Tensor& x, const Dims& d, bool k) { return fg::amax(x, d, k); }, ref::max_of, zero_scale,
       true, true},
      {"amin", [](const Tensor& x, const Dims& d, bool k) { return x.amin(d, k); }, ref::min_of, zero_scale, true,
       true},
      {"logsumexp", [](const Tensor& x, const Dims& d, bool k) { return fg::logsumexp(x, d, k); },
       ref::logsumexp_of, zero_scale, false, false},
      {"norm2", [](const Tensor& x, const Dims& d, bool k) { return norm_p(x, 2.0, d, k); },
       [](const std::vector<double>& v) { return ref::pnorm_of(v, 2); }, zero_scale, false, false},
      {"norm_default", [](const Tensor& x, const Dims& d, bool k) { return norm_p(x, std::nullopt, d, k); },
       [](const std::vector<double>& v) { return ref::pnorm_of(v, 2); }, zero_scale, false, false},
      {"norm1", [](const Tensor& x, const Dims& d, bool k) { return x.norm(1.0, d, k); },
       [](const std::vector<double>& v) { return ref::pnorm_of(v, 1); }, zero_scale, false, false},
      {"norm3", [](const Tensor& x, const Dims& d, bool k) { return norm_p(x, 3.0, d, k); },
       [](const std::vector<double>& v) { return ref::pnorm_of(v, 3); }, zero_scale, false, false},
      {"norm_inf", [](const Tensor& x, const Dims& d, bool k) { return norm_p(x, ref::inf(), d, k); },
       [](const std::vector<double>& v) { return ref::pnorm_of(v, ref::inf()); }, zero_scale, true, false},
      {"norm0", [](const Tensor& x, const Dims& d, bool k) { return norm_p(x, 0.0, d, k); },
       [](const std::vector<double>& v) { return ref::pnorm_of(v, 0); }, zero_scale, true, false},
  };
  return ops;
}

struct ReduceCase {
  Shape shape;
  Dims dims;
};

const std::vector<ReduceCase>& reduce_cases() {
  static const std::vector<ReduceCase> cases = {
      {{}, {}},           {{}, {0}},           {{}, {-1}},          {{5}, {0}},           {{5}, {-1}},
      {{5}, {}},          {{3, 4}, {0}},       {{3, 4}, {1}},       {{3, 4}, {0, 1}},     {{3, 4}, {}},
      {{3, 4}, {-1, 0}},  {{2, 3, 4}, {1}},    {{2, 3, 4}, {0, 2}}, {{2, 3, 4}, {2, 0}},  {{2, 3, 4}, {-1}},
      {{2, 3, 4, 5}, {1, 3}}, {{2, 3, 4, 5}, {0, 1, 2}}, {{3, 1, 4}, {1}}, {{3, 1, 4}, {0, 2}},
      {{37, 129}, {1}},   {{37, 129}, {0}},    {{1000}, {0}},       {{4, 1001}, {1}},     {{0, 3}, {1}},
      {{2, 0, 3}, {0, 2}}, {{7, 33, 5}, {1}}, {{2, 0}, {1}},
      // only size-1 dims reduced (a per-example bias gradient's sum_to)
      {{64, 1, 20}, {1}}, {{5, 1, 1, 3}, {1, 2}}, {{1, 1}, {}}};
  return cases;
}

using ReduceParam = std::tuple<size_t, fg::ScalarType, Layout>;

class ReduceTest : public ::testing::TestWithParam<ReduceParam> {
 protected:
  const ReduceOp& op() const { return reduce_ops()[std::get<0>(GetParam())]; }
  fg::ScalarType dtype() const { return std::get<1>(GetParam()); }
  Layout layout() const { return std::get<2>(GetParam()); }
  ref::Rng rng_{0x5EED};
};

std::string reduce_name(const ::testing::TestParamInfo<ReduceParam>& info) {
  return reduce_ops()[std::get<0>(info.param)].name + "_" + dtype_tag(std::get<1>(info.param)) + "_" +
         ref::layout_name(std::get<2>(info.param));
}

TEST_P(ReduceTest, MatchesReference) {
  const double eps = dtype() == fg::kFloat ? 2e-6 : 1e-13;
  const ref::Tol tol = op().exact ? ref::exact() : (dtype() == fg::kFloat ? ref::Tol{1e-5, 1e-6} : ref::Tol{1e-12, 1e-13});
  for (const auto& c : reduce_cases()) {
    if (c.dims.empty() && !op().empty_dims_ok) continue;
    const bool empty_reduction = ref::numel_of(c.shape) == 0 &&
                                 ref::numel_of(ref::reduced_shape(c.shape, c.dims, false)) != 0;
    if (empty_reduction && (op().name == "amax" || op().name == "amin" || op().name == "norm_inf")) continue;
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE("shape " + ref::shape_str(c.shape) + " dims " + dims_str(c.dims) +
                   (keepdim ? " keepdim" : ""));
      ref::Input in = ref::make_input(c.shape, dtype(), layout(), rng_, Domain{-2, 2});
      const Array x = ref::from_tensor(in.view);
      const Array expected = ref::reduce(x, c.dims, keepdim, op().ref);
      Array extra = ref::reduce(x, c.dims, keepdim, op().error_scale);
      for (double& e : extra.data) e *= op().exact ? 0.0 : eps;
      EXPECT_TRUE(ref::tensor_matches(op().fn(in.view, c.dims, keepdim), expected, dtype(), tol, &extra));
      EXPECT_TRUE(ref::arrays_equal(ref::from_tensor(in.view), x)) << "the input was modified";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, ReduceTest,
                         ::testing::Combine(::testing::Range<size_t>(0, 13),
                                            ::testing::Values(fg::kFloat, fg::kDouble),
                                            ::testing::ValuesIn(ref::all_layouts())),
                         reduce_name);

TEST(ReduceDatabase, CoversEveryReduction) { EXPECT_EQ(reduce_ops().size(), 13u); }

// ============================================================================ full reductions

TEST(Reduce, FullReductionsGiveZeroDim) {
  ref::Rng rng(1);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    ref::Input in = ref::make_input({6, 7}, dt, Layout::Transposed, rng);
    const Array x = ref::from_tensor(in.view);
    const ref::Tol tol = dt == fg::kFloat ? ref::Tol{1e-5, 1e-5} : ref::Tol{1e-12, 1e-12};
    EXPECT_TENSOR_NEAR(fg::sum(in.view), Array({}, {ref::sum_of(x.data)}), dt, tol);
    EXPECT_TENSOR_NEAR(in.view.sum(), Array({}, {ref::sum_of(x.data)}), dt, tol);
    EXPECT_TENSOR_NEAR(fg::mean(in.view), Array({}, {ref::sum_of(x.data) / 42}), dt, tol);
    EXPECT_TENSOR_NEAR(in.view.mean(), Array({}, {ref::sum_of(x.data) / 42}), dt, tol);
    EXPECT_TENSOR_EQ(fg::max(in.view), Array({}, {ref::max_of(x.data)}), dt);
    EXPECT_TENSOR_EQ(in.view.min(), Array({}, {ref::min_of(x.data)}), dt);
    EXPECT_TENSOR_EQ(fg::amax(in.view), Array({}, {ref::max_of(x.data)}), dt);
    EXPECT_TENSOR_NEAR(fg::norm(in.view), Array({}, {ref::pnorm_of(x.data, 2)}), dt, tol);
    EXPECT_TENSOR_NEAR(in.view.norm(1), Array({}, {ref::pnorm_of(x.data, 1)}), dt, tol);
    EXPECT_TENSOR_EQ(fg::argmax(in.view), Array({}, {double(ref::argmax_of(x.data))}), fg::kLong);
    EXPECT_TENSOR_EQ(in.view.argmax(), Array({}, {double(ref::argmax_of(x.data))}), fg::kLong);
    EXPECT_TENSOR_EQ(fg::argmin(in.view), Array({}, {double(ref::argmin_of(x.data))}), fg::kLong);
  }
}

TEST(Reduce, DtypeArgument) {
  ref::Rng rng(2);
  ref::Input in = ref::make_input({5, 9}, fg::kFloat, Layout::Strided, rng);
  const Array x = ref::from_tensor(in.view);
  // Accumulated and returned in float64.
  EXPECT_TENSOR_NEAR(fg::sum(in.view, fg::kDouble), Array({}, {ref::sum_of(x.data)}), fg::kDouble,
                     (ref::Tol{1e-13, 1e-13}));
  EXPECT_TENSOR_NEAR(fg::sum(in.view, {1}, false, fg::kDouble),
                     ref::reduce(x, {1}, false, ref::sum_of), fg::kDouble, (ref::Tol{1e-13, 1e-13}));
  EXPECT_TENSOR_NEAR(in.view.mean({0}, true, fg::kDouble),
                     ref::reduce(x, {0}, true, [](const std::vector<double>& v) { return ref::sum_of(v) / 5; }),
                     fg::kDouble, (ref::Tol{1e-13, 1e-13}));
  // Integers with a floating dtype.
  Tensor i = fg::tensor({{1, 2, 3}, {4, 5, 7}});
  EXPECT_TENSOR_NEAR(fg::mean(i, fg::kDouble), Array({}, {22.0 / 6}), fg::kDouble, ref::tol_for(fg::kDouble));
  EXPECT_TENSOR_NEAR(fg::mean(i, {1}, false, fg::kFloat), Array({2}, {2, 16.0 / 3}), fg::kFloat,
                     ref::tol_for(fg::kFloat));
  EXPECT_TENSOR_NEAR(fg::sum(i, {0}, false, fg::kDouble), Array({3}, {5, 7, 10}), fg::kDouble, ref::exact());
}

TEST(Reduce, IntegerAndBoolInputs) {
  ref::Rng rng(3);
  for (const auto& c : reduce_cases()) {
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE("shape " + ref::shape_str(c.shape) + " dims " + dims_str(c.dims));
      ref::Input in = ref::make_input(c.shape, fg::kLong, Layout::Transposed, rng, Domain{-50, 50});
      const Array x = ref::from_tensor(in.view);
      // Sums of int64 and bool are int64.
      EXPECT_TENSOR_EQ(fg::sum(in.view, c.dims, keepdim), ref::reduce(x, c.dims, keepdim, ref::sum_of), fg::kLong);
      ref::Input b = ref::make_input(c.shape, fg::kBool, Layout::Strided, rng);
      EXPECT_TENSOR_EQ(fg::sum(b.view, c.dims, keepdim),
                       ref::reduce(ref::from_tensor(b.view), c.dims, keepdim, ref::sum_of), fg::kLong);
      const bool empty_reduction = ref::numel_of(c.shape) == 0 &&
                                   ref::numel_of(ref::reduced_shape(c.shape, c.dims, false)) != 0;
      if (empty_reduction) continue;
      EXPECT_TENSOR_EQ(fg::amax(in.view, c.dims, keepdim), ref::reduce(x, c.dims, keepdim, ref::max_of), fg::kLong);
      EXPECT_TENSOR_EQ(fg::amin(in.view, c.dims, keepdim), ref::reduce(x, c.dims, keepdim, ref::min_of), fg::kLong);
      EXPECT_TENSOR_EQ(fg::amax(b.view, c.dims, keepdim),
                       ref::reduce(ref::from_tensor(b.view), c.dims, keepdim, ref::max_of), fg::kBool);
    }
  }
  EXPECT_TENSOR_EQ(fg::sum(fg::tensor({true, true, false, true})), Array({}, {3}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::max(fg::tensor({3, 9, -2})), Array({}, {9}), fg::kLong);
}

TEST(Reduce, EmptyInputs) {
  // Sums over nothing are 0, means are NaN.
  EXPECT_TENSOR_EQ(fg::sum(fg::zeros({0})), Array({}, {0}), fg::kFloat);
  EXPECT_TENSOR_EQ(fg::sum(fg::zeros({2, 0}), {1}), Array({2}, {0, 0}), fg::kFloat);
  EXPECT_TENSOR_NEAR(fg::mean(fg::zeros({0})), Array({}, {ref::nan()}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::mean(fg::zeros({2, 0}), {1}), Array({2}, ref::nan()), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::logsumexp(fg::zeros({2, 0}), {1}), Array({2}, -ref::inf()), fg::kFloat, ref::exact());
  // Reducing a non-empty dim of an empty tensor gives an empty result.
  EXPECT_TENSOR_EQ(fg::amax(fg::zeros({0, 3}), {1}), Array({0}), fg::kFloat);
}

TEST(Reduce, NaNPropagates) {
  for (int64_t n : {5, 100}) {
    Array x({2, n}, 1.0);
    for (int64_t j = 0; j < n; ++j) x.at({0, j}) = j % 7;
    x.at({1, n - 3}) = ref::nan();
    x.at({1, n - 1}) = ref::nan();
    x.at({0, 1}) = 100;
    for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
      SCOPED_TRACE("n " + std::to_string(n) + " " + fg::toString(dt));
      Tensor t = ref::to_tensor(x, dt);
      EXPECT_TENSOR_EQ(fg::amax(t, {1}), Array({2}, {100, ref::nan()}), dt);
      EXPECT_TENSOR_EQ(fg::amin(t, {1}), Array({2}, {0, ref::nan()}), dt);
      EXPECT_TENSOR_EQ(fg::amax(t), Array({}, {ref::nan()}), dt);
      EXPECT_TENSOR_EQ(fg::max(t), Array({}, {ref::nan()}), dt);
      EXPECT_TENSOR_EQ(fg::min(t), Array({}, {ref::nan()}), dt);
      EXPECT_TENSOR_EQ(fg::amax(t.t(), {0}), Array({2}, {100, ref::nan()}), dt);
      EXPECT_TRUE(std::isnan(fg::sum(t, {1}).select(0, 1).item<double>()));
      auto [values, indices] = fg::max(t, 1);
      EXPECT_TENSOR_EQ(values, Array({2}, {100, ref::nan()}), dt);
      // The first NaN is the maximum, as in torch.
      EXPECT_TENSOR_EQ(indices, Array({2}, {1, double(n - 3)}), fg::kLong);
      auto [mvalues, mindices] = fg::min(t, 1);
      EXPECT_TENSOR_EQ(mindices, Array({2}, {0, double(n - 3)}), fg::kLong);
      EXPECT_TENSOR_EQ(fg::argmax(t, 1), Array({2}, {1, double(n - 3)}), fg::kLong);
      EXPECT_TENSOR_EQ(fg::argmax(t), Array({}, {double(n + n - 3)}), fg::kLong);
      // maximum/minimum propagate NaN element-wise too.
      EXPECT_TENSOR_EQ(fg::maximum(t, fg::zeros({1}, dt)).select(0, 1).slice(0, n - 3, n - 2),
                       Array({1}, {ref::nan()}), dt);
    }
  }
}

// ============================================================================ max/min with indices

TEST(Reduce, MaxMinWithIndicesAndArgExtremes) {
  ref::Rng rng(4);
  struct Case {
    Shape shape;
    int64_t dim;
  };
  const std::vector<Case> cases = {{{7}, 0},       {{7}, -1},       {{3, 4}, 0},  {{3, 4}, 1},   {{2, 3, 4}, 1},
                                   {{2, 3, 4}, -1}, {{2, 3, 4}, 0}, {{37, 65}, 1}, {{3, 1, 5}, 1}, {{}, 0},
                                   {{0, 4}, 1}};
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong}) {
    for (Layout layout : ref::all_layouts()) {
      for (const auto& c : cases) {
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " shape " +
                       ref::shape_str(c.shape) + " dim " + std::to_string(c.dim) + (keepdim ? " keepdim" : ""));
          // Small integers: many ties, so "first index of the extreme" is exercised.
          ref::Input in = ref::make_input(c.shape, dt, layout, rng, Domain{-2, 2, true});
          const Array x = ref::from_tensor(in.view);
          const Dims dims{c.dim};
          auto argmax = [](const std::vector<double>& v) { return double(ref::argmax_of(v)); };
          auto argmin = [](const std::vector<double>& v) { return double(ref::argmin_of(v)); };
          auto [vmax, imax] = fg::max(in.view, c.dim, keepdim);
          EXPECT_TENSOR_EQ(vmax, ref::reduce(x, dims, keepdim, ref::max_of), dt);
          EXPECT_TENSOR_EQ(imax, ref::reduce(x, dims, keepdim, argmax), fg::kLong);
          auto [vmin, imin] = in.view.min(c.dim, keepdim);
          EXPECT_TENSOR_EQ(vmin, ref::reduce(x, dims, keepdim, ref::min_of), dt);
          EXPECT_TENSOR_EQ(imin, ref::reduce(x, dims, keepdim, argmin), fg::kLong);
          EXPECT_TENSOR_EQ(fg::argmax(in.view, c.dim, keepdim), ref::reduce(x, dims, keepdim, argmax), fg::kLong);
          EXPECT_TENSOR_EQ(in.view.argmax(c.dim, keepdim), ref::reduce(x, dims, keepdim, argmax), fg::kLong);
          EXPECT_TENSOR_EQ(fg::argmin(in.view, c.dim, keepdim), ref::reduce(x, dims, keepdim, argmin), fg::kLong);
        }
      }
    }
  }
  // Ties: the first occurrence.
  EXPECT_TENSOR_EQ(fg::argmax(fg::tensor({1, 3, 3, 0})), Array({}, {1}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::argmin(fg::tensor({2.0, 0.0, 5.0, 0.0})), Array({}, {1}), fg::kLong);
  // max(self, other) is maximum.
  EXPECT_TENSOR_NEAR(fg::max(fg::tensor({1.0, 5.0}), fg::tensor({3.0, 2.0})), Array({2}, {3, 5}), fg::kFloat,
                     ref::exact());
  EXPECT_TENSOR_NEAR(fg::min(fg::tensor({1.0, 5.0}), fg::tensor({3.0, 2.0})), Array({2}, {1, 2}), fg::kFloat,
                     ref::exact());
}

// ============================================================================ logsumexp, norm extremes

TEST(Reduce, LogsumexpIsStable) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    SCOPED_TRACE(fg::toString(dt));
    const ref::Tol tol = ref::tol_for(dt);
    Tensor big = fg::tensor({{1000.0, 1000.0, -1000.0}, {-1000.0, -1000.0, -1000.0}}, dt);
    EXPECT_TENSOR_NEAR(fg::logsumexp(big, {1}), Array({2}, {1000 + std::log(2.0), -1000 + std::log(3.0)}), dt, tol);
    EXPECT_TENSOR_NEAR(big.logsumexp({1}, true), Array({2, 1}, {1000 + std::log(2.0), -1000 + std::log(3.0)}), dt,
                       tol);
    const double inf = ref::inf();
    Tensor infs = fg::tensor({{-inf, -inf}, {-inf, 0.0}, {inf, 1.0}, {ref::nan(), 1.0}}, dt);
    EXPECT_TENSOR_NEAR(fg::logsumexp(infs, {1}), Array({4}, {-inf, 0.0, inf, ref::nan()}), dt, tol);
    // Integer input gives float32.
    EXPECT_TENSOR_NEAR(fg::logsumexp(fg::tensor({0, 0}), {0}), Array({}, {std::log(2.0)}), fg::kFloat,
                       ref::tol_for(fg::kFloat));
  }
}

TEST(Reduce, NormOfSpecialValues) {
  Tensor x = fg::tensor({3.0, -4.0, 0.0}, fg::kDouble);
  EXPECT_TENSOR_NEAR(fg::norm(x), Array({}, {5}), fg::kDouble, ref::tol_for(fg::kDouble));
  EXPECT_TENSOR_NEAR(fg::norm(x, 1), Array({}, {7}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(fg::norm(x, ref::inf()), Array({}, {4}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(fg::norm(x, -ref::inf()), Array({}, {0}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(fg::norm(x, 0), Array({}, {2}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(fg::norm(x, 3), Array({}, {std::cbrt(91.0)}), fg::kDouble, ref::tol_for(fg::kDouble));
}

// ============================================================================ softmax

struct SoftmaxCase {
  Shape shape;
  int64_t dim;
};

TEST(Softmax, MatchesReference) {
  ref::Rng rng(6);
  const std::vector<SoftmaxCase> cases = {{{7}, 0},         {{3, 4}, 1},   {{3, 4}, 0},     {{3, 4}, -1},
                                          {{2, 3, 4}, 1},   {{2, 3, 4}, 0}, {{2, 3, 4}, -1}, {{5, 1000}, 1},
                                          {{1000, 3}, 0},   {{4, 33}, 1},  {{3, 1}, 1},     {{}, 0},
                                          {{2, 0, 3}, 2}, {{2, 0, 3}, 1}};
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    for (Layout layout : ref::all_layouts()) {
      for (const auto& c : cases) {
        SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " shape " +
                     ref::shape_str(c.shape) + " dim " + std::to_string(c.dim));
        ref::Input in = ref::make_input(c.shape, dt, layout, rng, Domain{-8, 8});
        const Array x = ref::from_tensor(in.view);
        const ref::Tol tol = dt == fg::kFloat ? ref::Tol{1e-5, 1e-7} : ref::Tol{1e-12, 1e-15};
        const ref::Tol log_tol = dt == fg::kFloat ? ref::Tol{1e-5, 1e-5} : ref::Tol{1e-12, 1e-12};
        EXPECT_TENSOR_NEAR(fg::softmax(in.view, c.dim), ref::along_dim(x, c.dim, ref::softmax_of), dt, tol);
        EXPECT_TENSOR_NEAR(in.view.softmax(c.dim), ref::along_dim(x, c.dim, ref::softmax_of), dt, tol);
        EXPECT_TENSOR_NEAR(fg::log_softmax(in.view, c.dim), ref::along_dim(x, c.dim, ref::log_softmax_of), dt,
                           log_tol);
        EXPECT_TENSOR_NEAR(in.view.log_softmax(c.dim), ref::along_dim(x, c.dim, ref::log_softmax_of), dt, log_tol);
        EXPECT_TRUE(ref::arrays_equal(ref::from_tensor(in.view), x));
      }
    }
  }
}

TEST(Softmax, ExtremeInputs) {
  const double inf = ref::inf();
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    SCOPED_TRACE(fg::toString(dt));
    const ref::Tol tol = ref::tol_for(dt);
    // Large logits do not overflow.
    Tensor big = fg::tensor({{1000.0, 1000.0, -1000.0}, {-1000.0, -999.0, -1000.0}}, dt);
    const double e = std::exp(1.0);
    EXPECT_TENSOR_NEAR(fg::softmax(big, 1), Array({2, 3}, {0.5, 0.5, 0, 1 / (2 + e), e / (2 + e), 1 / (2 + e)}),
                       dt, tol);
    const Array bigx({2, 3}, {1000.0, 1000.0, -1000.0, -1000.0, -999.0, -1000.0});
    const Array big_log = ref::along_dim(bigx, 1, ref::log_softmax_of);
    EXPECT_NEAR(big_log.data[0], -std::log(2.0), 1e-12);  // the reference itself is stable
    EXPECT_TENSOR_NEAR(fg::log_softmax(big, 1), big_log, dt, (ref::Tol{1e-6, 1e-5}));
    // Masked (-inf) entries get probability 0; a fully masked row is NaN, as in torch.
    Tensor masked = fg::tensor({{-inf, 0.0, 0.0}, {-inf, -inf, -inf}}, dt);
    EXPECT_TENSOR_NEAR(fg::softmax(masked, 1), Array({2, 3}, {0, 0.5, 0.5, ref::nan(), ref::nan(), ref::nan()}), dt,
                       tol);
    EXPECT_TENSOR_NEAR(fg::log_softmax(masked, 1),
                       Array({2, 3}, {-inf, -std::log(2.0), -std::log(2.0), ref::nan(), ref::nan(), ref::nan()}), dt,
                       tol);
    // NaN poisons its row only.
    Tensor n = fg::tensor({{ref::nan(), 0.0}, {0.0, 0.0}}, dt);
    EXPECT_TENSOR_NEAR(fg::softmax(n, 1), Array({2, 2}, {ref::nan(), ref::nan(), 0.5, 0.5}), dt, tol);
  }
}

TEST(Softmax, DtypeArgumentComputesInThatDtype) {
  ref::Rng rng(7);
  ref::Input in = ref::make_input({4, 9}, fg::kFloat, Layout::Transposed, rng, Domain{-5, 5});
  const Array x = ref::from_tensor(in.view);
  EXPECT_TENSOR_NEAR(fg::softmax(in.view, 1, fg::kDouble), ref::along_dim(x, 1, ref::softmax_of), fg::kDouble,
                     (ref::Tol{1e-13, 1e-15}));
  EXPECT_TENSOR_NEAR(fg::log_softmax(in.view, 0, fg::kDouble), ref::along_dim(x, 0, ref::log_softmax_of),
                     fg::kDouble, (ref::Tol{1e-13, 1e-13}));
  // An integer input with a floating dtype.
  EXPECT_TENSOR_NEAR(fg::softmax(fg::tensor({0, 0}), 0, fg::kFloat), Array({2}, {0.5, 0.5}), fg::kFloat,
                     ref::tol_for(fg::kFloat));
}

// ============================================================================ *_out

TEST(Reduce, OutVariants) {
  ref::Rng rng(8);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    ref::Input in = ref::make_input({3, 5, 4}, dt, Layout::Transposed, rng);
    const Array x = ref::from_tensor(in.view);
    const ref::Tol tol = dt == fg::kFloat ? ref::Tol{1e-5, 1e-5} : ref::Tol{1e-12, 1e-12};
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE(std::string(fg::toString(dt)) + (keepdim ? " keepdim" : ""));
      ref::check_out_variants([&](Tensor& out) { return &fg::sum_out(out, in.view, {0, 2}, keepdim); },
                              ref::reduce(x, {0, 2}, keepdim, ref::sum_of), dt, tol);
      ref::check_out_variants(
          [&](Tensor& out) { return &fg::mean_out(out, in.view, {1}, keepdim); },
          ref::reduce(x, {1}, keepdim, [](const std::vector<double>& v) { return ref::sum_of(v) / v.size(); }), dt,
          tol);
    }
  }
}

// ============================================================================ errors

TEST(ReduceErrors, DimOutOfRangeAndRepeated) {
  Tensor x = fg::zeros({3, 4});
  EXPECT_FG_ERROR(fg::sum(x, {2}),
                  "fg::sum: dimension 2 is out of range for a tensor of 2 dimensions (expected to be in range [-2, 1])");
  EXPECT_FG_ERROR(x.mean({-3}),
                  "fg::mean: dimension -3 is out of range for a tensor of 2 dimensions (expected to be in range [-2, 1])");
  EXPECT_FG_ERROR(fg::amax(x, {5}),
                  "fg::amax: dimension 5 is out of range for a tensor of 2 dimensions (expected to be in range [-2, 1])");
  EXPECT_FG_ERROR(fg::max(x, 2),
                  "fg::max: dimension 2 is out of range for a tensor of 2 dimensions (expected to be in range [-2, 1])");
  EXPECT_FG_ERROR(fg::softmax(x, 2),
                  "fg::softmax: dimension 2 is out of range for a tensor of 2 dimensions (expected to be in range [-2, 1])");
  EXPECT_FG_ERROR(fg::sum(fg::zeros({}), {1}),
                  "fg::sum: dimension 1 is out of range for a tensor of 0 dimensions (expected to be in range [-1, 0])");
  EXPECT_FG_ERROR(fg::sum(x, {0, -2}), "fg::sum: dim 0 appears multiple times in the list of dims [0, -2]");
  EXPECT_FG_ERROR(fg::logsumexp(x, {1, 1}), "fg::logsumexp: dim 1 appears multiple times in the list of dims [1, 1]");
}

TEST(ReduceErrors, Dtypes) {
  Tensor i = fg::tensor({1, 2, 3});
  EXPECT_FG_ERROR(fg::mean(i),
                  "fg::mean: could not infer the output dtype: the input must be floating point, got int64 "
                  "(pass a floating dtype)");
  EXPECT_FG_ERROR(i.mean({0}),
                  "fg::mean: could not infer the output dtype: the input must be floating point, got int64 "
                  "(pass a floating dtype)");
  EXPECT_FG_ERROR(fg::mean(fg::tensor({true})),
                  "fg::mean: could not infer the output dtype: the input must be floating point, got bool "
                  "(pass a floating dtype)");
  EXPECT_FG_ERROR(fg::softmax(i, 0),
                  "fg::softmax: expected a floating-point tensor, got int64 (pass a floating dtype to convert)");
  EXPECT_FG_ERROR(fg::log_softmax(i, 0),
                  "fg::log_softmax: expected a floating-point tensor, got int64 (pass a floating dtype to convert)");
  EXPECT_FG_ERROR(fg::norm(i), "fg::norm: expected a floating-point tensor, got int64");
}

TEST(ReduceErrors, EmptyExtremes) {
  EXPECT_FG_ERROR(fg::max(fg::zeros({0})), "fg::max: cannot compute the max of an empty tensor (shape [0])");
  EXPECT_FG_ERROR(fg::min(fg::zeros({2, 0})), "fg::min: cannot compute the min of an empty tensor (shape [2, 0])");
  EXPECT_FG_ERROR(fg::amax(fg::zeros({0, 3}), {0}),
                  "fg::amax: cannot reduce over a zero-size dimension (input shape [0, 3])");
  EXPECT_FG_ERROR(fg::amin(fg::zeros({0})), "fg::amin: cannot reduce over a zero-size dimension (input shape [0])");
  EXPECT_FG_ERROR(fg::max(fg::zeros({3, 0}), 1),
                  "fg::max: cannot reduce over a zero-size dimension (input shape [3, 0])");
  EXPECT_FG_ERROR(fg::argmax(fg::zeros({0})), "fg::argmax: cannot compute the argmax of an empty tensor");
  EXPECT_FG_ERROR(fg::argmin(fg::zeros({0})), "fg::argmin: cannot compute the argmin of an empty tensor");
}

}  // namespace

namespace {

// Large enough for the runtime's threaded reduction and softmax loops.
TEST(LargeTensors, ThreadedReductionsMatchReference) {
  ref::Rng rng(78);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    SCOPED_TRACE(fg::toString(dt));
    const double eps = dt == fg::kFloat ? 2e-6 : 1e-13;
    for (Layout layout : {Layout::Contiguous, Layout::Transposed}) {
      ref::Input in = ref::make_input({400, 257}, dt, layout, rng);
      const Array x = ref::from_tensor(in.view);
      for (const Dims& dims : {Dims{1}, Dims{0}, Dims{}}) {
        SCOPED_TRACE(std::string(ref::layout_name(layout)) + " dims " + dims_str(dims));
        Array extra = ref::reduce(x, dims, false, ref::abs_sum_of);
        for (double& e : extra.data) e *= eps;
        EXPECT_TRUE(ref::tensor_matches(fg::sum(in.view, dims), ref::reduce(x, dims, false, ref::sum_of), dt,
                                        ref::tol_for(dt), &extra));
        EXPECT_TENSOR_EQ(fg::amax(in.view, dims), ref::reduce(x, dims, false, ref::max_of), dt);
      }
      auto argmax = [](const std::vector<double>& v) { return double(ref::argmax_of(v)); };
      EXPECT_TENSOR_EQ(std::get<1>(fg::max(in.view, 1)), ref::reduce(x, {1}, false, argmax), fg::kLong);
      const ref::Tol tol = dt == fg::kFloat ? ref::Tol{1e-5, 1e-7} : ref::Tol{1e-12, 1e-15};
      EXPECT_TENSOR_NEAR(fg::softmax(in.view, 1), ref::along_dim(x, 1, ref::softmax_of), dt, tol);
      EXPECT_TENSOR_NEAR(fg::softmax(in.view, 0), ref::along_dim(x, 0, ref::softmax_of), dt, tol);
    }
  }
}

}  // namespace
