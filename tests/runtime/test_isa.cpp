// The SIMD kernels under every ISA this machine runs (fg::cpu::available_isas(), forced with
// fg::cpu::force_isa): every element-wise op, clamp, sum/amax/amin reductions and softmax are
// checked against the scalar reference on lengths that exercise full vectors and every tail, with
// special values inside the vector body; then the ISA variants are compared with each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "op_db.h"
#include "reference.h"

namespace {

using fg::Tensor;
using ref::Array;
using ref::Domain;
using ref::Shape;
using namespace opdb;

// Lengths around every vector width (4, 8, 16 floats; 2, 4, 8 doubles) and long runs.
const std::vector<int64_t> kLengths = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 1000, 4099};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Restores the default dispatch even when a test fails or throws.
class IsaTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { fg::cpu::force_isa(GetParam()); }
  void TearDown() override { fg::cpu::force_isa(""); }
};

// A random array of `n` values in `dom`; arrays of 20 or more also get the op's special values
// scattered through the middle, so that full vectors (not only the tail) contain them.
Array input(int64_t n, const Domain& dom, const std::vector<double>& specials, fg::ScalarType dt, uint64_t seed) {
  ref::Rng rng(seed);
  Array a = ref::random_array({n}, rng, dom, dt);
  if (n >= 20)
    for (size_t i = 0; i < specials.size(); ++i) a.data[(3 + 7 * i) % n] = ref::round_to(specials[i], dt);
  return a;
}

TEST_P(IsaTest, IsSelected) {
  EXPECT_EQ(fg::cpu::current_isa(), GetParam());
  const auto isas = fg::cpu::available_isas();
  EXPECT_NE(std::find(isas.begin(), isas.end(), GetParam()), isas.end());
}

TEST_P(IsaTest, UnaryOpsMatchReference) {
  for (const UnaryOp& op : unary_ops()) {
    for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
      for (int64_t n : kLengths) {
        SCOPED_TRACE(op.name + " " + fg::toString(dt) + " n " + std::to_string(n));
        const Array x = input(n, op.domain, op.specials, dt, 100 + n);
        const Array expected = ref::round_all(ref::map(x, op.ref), dt);
        Tensor t = ref::to_tensor(x, dt);
        EXPECT_TENSOR_NEAR(op.fn(t), expected, dt, ref::tol_for(dt));
        // The staged (strided) path and the in-place path run the same kernel.
        Tensor base = fg::empty({n, 2}, dt);
        Tensor col = base.select(1, 1);
        ref::write_into(col, x);
        EXPECT_TENSOR_NEAR(op.fn(col), expected, dt, ref::tol_for(dt));
        op.method_inplace(t);
        EXPECT_TENSOR_NEAR(t, expected, dt, ref::tol_for(dt));
      }
    }
  }
}

TEST_P(IsaTest, BinaryOpsMatchReference) {
  for (const BinaryOp& op : binary_ops()) {
    if (op.compare) continue;  // comparisons are scalar loops, not SIMD kernels
    for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
      for (int64_t n : kLengths) {
        SCOPED_TRACE(op.name + " " + fg::toString(dt) + " n " + std::to_string(n));
        const Array a = input(n, op.a_dom, {}, dt, 200 + n), b = input(n, op.b_dom, {}, dt, 300 + n);
        const Array s = input(1, op.b_dom, {}, dt, 400 + n);
        Tensor ta = ref::to_tensor(a, dt), tb = ref::to_tensor(b, dt), ts = ref::to_tensor(s, dt);
        const ref::Tol tol = ref::tol_for(dt);
        EXPECT_TENSOR_NEAR(op.fn(ta, tb), ref::round_all(ref::map(a, b, op.ref), dt), dt, tol);
        // One operand broadcast (stride 0) on either side.
        EXPECT_TENSOR_NEAR(op.fn(ta, ts), ref::round_all(ref::map(a, s, op.ref), dt), dt, tol);
        EXPECT_TENSOR_NEAR(op.fn(ts, tb), ref::round_all(ref::map(s, b, op.ref), dt), dt, tol);
        // Strided operands go through the staging buffers.
        EXPECT_TENSOR_NEAR(op.fn(ta.unsqueeze(1).expand({n, 2}).select(1, 0), tb),
                           ref::round_all(ref::map(a, b, op.ref), dt), dt, tol);
      }
    }
  }
}

TEST_P(IsaTest, MaximumMinimumPropagateNaN) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    for (int64_t n : kLengths) {
      SCOPED_TRACE(std::string(fg::toString(dt)) + " n " + std::to_string(n));
      Array a = input(n, Domain{-5, 5}, {}, dt, 500 + n), b = input(n, Domain{-5, 5}, {}, dt, 600 + n);
      // NaN in a at even positions of the first half, in b at odd positions.
      for (int64_t i = 0; i < n / 2; ++i) (i % 2 ? b : a).data[i] = ref::nan();
      Tensor ta = ref::to_tensor(a, dt), tb = ref::to_tensor(b, dt);
      EXPECT_TENSOR_EQ(fg::maximum(ta, tb), ref::map(a, b, nan_max), dt);
      EXPECT_TENSOR_EQ(fg::minimum(ta, tb), ref::map(a, b, nan_min), dt);
    }
  }
}

TEST_P(IsaTest, ClampMatchesReference) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    for (int64_t n : kLengths) {
      SCOPED_TRACE(std::string(fg::toString(dt)) + " n " + std::to_string(n));
      const Array x = input(n, Domain{-3, 3}, {ref::nan(), ref::inf(), -ref::inf(), 0.0}, dt, 700 + n);
      auto f = [](double v) { return std::isnan(v) ? v : std::min(std::max(v, -1.0), 2.0); };
      EXPECT_TENSOR_EQ(fg::clamp(ref::to_tensor(x, dt), -1.0, 2.0), ref::map(x, f), dt);
    }
  }
}

TEST_P(IsaTest, ReductionsMatchReference) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    const double eps = dt == fg::kFloat ? 2e-6 : 1e-13;
    for (int64_t n : kLengths) {
      for (int64_t rows : {1, 3}) {
        SCOPED_TRACE(std::string(fg::toString(dt)) + " [" + std::to_string(rows) + ", " + std::to_string(n) + "]");
        ref::Rng rng(800 + n);
        const Array x = ref::random_array({rows, n}, rng, Domain{-2, 2}, dt);
        Tensor t = ref::to_tensor(x, dt);
        for (const std::vector<int64_t>& dims : {std::vector<int64_t>{1}, std::vector<int64_t>{0}, std::vector<int64_t>{}}) {
          SCOPED_TRACE("dims " + ref::shape_str(dims));
          Array extra = ref::reduce(x, dims, false, ref::abs_sum_of);
          for (double& e : extra.data) e *= eps;
          EXPECT_TRUE(ref::tensor_matches(fg::sum(t, dims), ref::reduce(x, dims, false, ref::sum_of), dt,
                                          ref::tol_for(dt), &extra));
          EXPECT_TENSOR_EQ(fg::amax(t, dims), ref::reduce(x, dims, false, ref::max_of), dt);
          EXPECT_TENSOR_EQ(fg::amin(t, dims), ref::reduce(x, dims, false, ref::min_of), dt);
        }
        // NaN anywhere in a row makes its max NaN.
        if (n >= 2) {
          Array y = x;
          y.at({rows - 1, n - 2}) = ref::nan();
          Tensor ty = ref::to_tensor(y, dt);
          EXPECT_TENSOR_EQ(fg::amax(ty, {1}), ref::reduce(y, {1}, false, ref::max_of), dt);
          EXPECT_TENSOR_EQ(fg::amax(ty), ref::reduce(y, {}, false, ref::max_of), dt);
          EXPECT_TENSOR_EQ(fg::amin(ty), ref::reduce(y, {}, false, ref::min_of), dt);
        }
      }
    }
  }
}

TEST_P(IsaTest, SoftmaxMatchesReference) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    for (int64_t n : kLengths) {
      SCOPED_TRACE(std::string(fg::toString(dt)) + " n " + std::to_string(n));
      ref::Rng rng(900 + n);
      const Array x = ref::random_array({3, n}, rng, Domain{-10, 10}, dt);
      Tensor t = ref::to_tensor(x, dt);
      const ref::Tol tol = dt == fg::kFloat ? ref::Tol{1e-5, 1e-7} : ref::Tol{1e-12, 1e-15};
      const ref::Tol log_tol = dt == fg::kFloat ? ref::Tol{1e-5, 1e-5} : ref::Tol{1e-12, 1e-12};
      EXPECT_TENSOR_NEAR(fg::softmax(t, 1), ref::along_dim(x, 1, ref::softmax_of), dt, tol);
      EXPECT_TENSOR_NEAR(fg::log_softmax(t, 1), ref::along_dim(x, 1, ref::log_softmax_of), dt, log_tol);
      // Softmax over dim 0 of the transpose: the runtime moves the dim last first.
      EXPECT_TENSOR_NEAR(fg::softmax(t.t(), 0), ref::along_dim(ref::from_tensor(t.t()), 0, ref::softmax_of), dt, tol);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, IsaTest, ::testing::ValuesIn(fg::cpu::available_isas()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

// ============================================================================ across ISAs

struct Result {
  Array values;
  double extra_atol = 0;  // for sums: the summation order differs between vector widths
};

// The same computations under one ISA: name -> result (values read back with the reference).
std::map<std::string, Result> workload(fg::ScalarType dt) {
  std::map<std::string, Result> out;
  const double eps = dt == fg::kFloat ? 2e-6 : 1e-13;
  for (int64_t n : {17, 33, 1000}) {
    const std::string tag = "/" + std::to_string(n);
    for (const UnaryOp& op : unary_ops()) {
      const Array x = input(n, op.domain, op.specials, dt, 1000 + n);
      out[op.name + tag] = {ref::from_tensor(op.fn(ref::to_tensor(x, dt)))};
    }
    for (const BinaryOp& op : binary_ops()) {
      if (op.compare) continue;
      const Array a = input(n, op.a_dom, {}, dt, 2000 + n), b = input(n, op.b_dom, {}, dt, 3000 + n);
      out[op.name + tag] = {ref::from_tensor(op.fn(ref::to_tensor(a, dt), ref::to_tensor(b, dt)))};
    }
    ref::Rng rng(4000 + n);
    const Array m = ref::random_array({4, n}, rng, Domain{-3, 3}, dt);
    Tensor tm = ref::to_tensor(m, dt);
    out["clamp" + tag] = {ref::from_tensor(fg::clamp(tm, -1.0, 1.0))};
    out["sum_rows" + tag] = {ref::from_tensor(fg::sum(tm, {1})), eps * 3 * static_cast<double>(n)};
    out["sum_cols" + tag] = {ref::from_tensor(fg::sum(tm, {0})), eps * 3 * 4};
    out["sum_all" + tag] = {ref::from_tensor(fg::sum(tm)), eps * 3 * 4 * static_cast<double>(n)};
    out["amax" + tag] = {ref::from_tensor(fg::amax(tm, {1}))};
    out["amin_all" + tag] = {ref::from_tensor(fg::amin(tm))};
    out["softmax" + tag] = {ref::from_tensor(fg::softmax(tm, 1))};
    out["log_softmax" + tag] = {ref::from_tensor(fg::log_softmax(tm, 1))};
  }
  return out;
}

TEST(AllIsas, VariantsAgreeWithEachOther) {
  const auto isas = fg::cpu::available_isas();
  ASSERT_FALSE(isas.empty());
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    std::map<std::string, std::map<std::string, Result>> results;
    for (const std::string& isa : isas) {
      fg::cpu::force_isa(isa);
      results[isa] = workload(dt);
    }
    fg::cpu::force_isa("");
    const auto& first = results[isas.front()];
    // A few ULP: the variants share polynomials but differ in FMA use and summation order.
    const ref::Tol tol = dt == fg::kFloat ? ref::Tol{1e-6, 1e-7} : ref::Tol{1e-14, 1e-15};
    for (const std::string& isa : isas) {
      for (const auto& [name, result] : results[isa]) {
        SCOPED_TRACE(std::string(fg::toString(dt)) + " " + name + ": " + isa + " vs " + isas.front());
        const Array& values = result.values;
        const Array& base = first.at(name).values;
        ASSERT_EQ(values.shape, base.shape);
        const bool exact = name.rfind("amax", 0) == 0 || name.rfind("amin", 0) == 0 || name.rfind("clamp", 0) == 0 ||
                           name.rfind("maximum", 0) == 0 || name.rfind("minimum", 0) == 0 ||
                           name.rfind("neg", 0) == 0 || name.rfind("abs", 0) == 0 || name.rfind("relu", 0) == 0;
        const ref::Tol t = exact ? ref::exact() : tol;
        for (size_t i = 0; i < values.data.size(); ++i)
          EXPECT_TRUE(ref::close(values.data[i], base.data[i], t, result.extra_atol))
              << "element " << i << ": " << values.data[i] << " vs " << base.data[i];
      }
    }
  }
}

TEST(AllIsas, ForceIsaErrorsAndRestores) {
  const auto isas = fg::cpu::available_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(fg::cpu::current_isa(), isas.front()) << "the default is the best ISA";
  EXPECT_FG_ERROR(fg::cpu::force_isa("bogus"),
                  "fg::cpu::force_isa: ISA 'bogus' is not available on this machine (available: " + join(isas) + ")");
  EXPECT_EQ(fg::cpu::current_isa(), isas.front());
  fg::cpu::force_isa(isas.back());
  EXPECT_EQ(fg::cpu::current_isa(), isas.back());
  fg::cpu::force_isa("");
  EXPECT_EQ(fg::cpu::current_isa(), isas.front());
}

}  // namespace
