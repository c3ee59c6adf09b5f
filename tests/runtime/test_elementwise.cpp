// Element-wise ops (unary, binary, comparisons, where, clamp, operators) against the scalar
// reference in reference.h: an op database with one entry per op, run across broadcasting shapes,
// memory layouts (contiguous, transposed, step-2 slice, offset, expanded, diagonal), float32 and
// float64, the int64/bool paths, in-place variants writing through views and *_out variants.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <functional>
#include <tuple>
#include <string>
#include <vector>

#include "op_db.h"
#include "reference.h"

namespace {

using fg::Tensor;
using ref::Array;
using ref::Domain;
using ref::Layout;
using ref::Shape;
using namespace opdb;

using ref::dtype_tag;

// Shapes every unary op runs on: 0-d, tiny, SIMD-tail sizes, multi-d, large, empty.
const std::vector<Shape>& unary_shapes() {
  static const std::vector<Shape> shapes = {{},     {1},       {7},      {16},         {3, 4},
                                            {2, 3, 5}, {37, 65}, {1, 130}, {2, 1, 3, 17}, {0},
                                            {2, 0, 3}};
  return shapes;
}

using UnaryParam = std::tuple<size_t, fg::ScalarType, Layout>;

class UnaryTest : public ::testing::TestWithParam<UnaryParam> {
 protected:
  const UnaryOp& op() const { return unary_ops()[std::get<0>(GetParam())]; }
  fg::ScalarType dtype() const { return std::get<1>(GetParam()); }
  Layout layout() const { return std::get<2>(GetParam()); }
  ref::Rng rng_{0xE1E7};
};

std::string unary_name(const ::testing::TestParamInfo<UnaryParam>& info) {
  return unary_ops()[std::get<0>(info.param)].name + "_" + dtype_tag(std::get<1>(info.param)) + "_" +
         ref::layout_name(std::get<2>(info.param));
}

TEST_P(UnaryTest, FunctionalMatchesReference) {
  for (const Shape& shape : unary_shapes()) {
    SCOPED_TRACE("shape " + ref::shape_str(shape));
    ref::Input in = ref::make_input(shape, dtype(), layout(), rng_, op().domain);
    const Array x = ref::from_tensor(in.view);
    const Array expected = ref::map(x, op().ref);
    EXPECT_TENSOR_NEAR(op().fn(in.view), expected, dtype(), ref::tol_for(dtype()));
    EXPECT_TENSOR_NEAR(op().method(in.view), expected, dtype(), ref::tol_for(dtype()));
    // The input is left alone.
    EXPECT_TRUE(ref::arrays_equal(ref::from_tensor(in.view), x));
  }
}

// Runs once per op and dtype (layout Contiguous).
class UnaryOnceTest : public UnaryTest {};
// Runs on the layouts that can be written in place (not expanded).
class UnaryInPlaceTest : public UnaryTest {};

// An element's result does not depend on its neighbours: each special value (outside the SIMD
// approximation's range) in a run of ordinary ones leaves the others as they are alone, bit for bit.
// vmap over examples and the loop of calls on each then agree (found by tests/fuzz/fuzz_fused).
TEST_P(UnaryOnceTest, ResultsDoNotDependOnNeighbours) {
  ref::Rng rng(11);
  Array x = ref::random_array({67}, rng, op().domain, dtype());
  for (size_t i = 0; i < op().specials.size(); ++i) x.data[3 + 7 * i % 60] = ref::round_to(op().specials[i], dtype());
  const Tensor all = op().fn(ref::to_tensor(x, dtype()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const Tensor alone = op().fn(ref::to_tensor(Array({1}, {x.data[i]}), dtype()));
    const double a = all.select(0, i).item<double>(), b = alone.select(0, 0).item<double>();
    EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << op().name << " of " << x.data[i] << " at " << i
                                                            << ": " << a << " in the run, " << b << " alone";
  }
}

TEST_P(UnaryOnceTest, SpecialValues) {
  Array x({static_cast<int64_t>(op().specials.size())}, op().specials);
  x = ref::round_all(x, dtype());
  const Array expected = ref::round_all(ref::map(x, op().ref), dtype());
  EXPECT_TENSOR_NEAR(op().fn(ref::to_tensor(x, dtype())), expected, dtype(), ref::tol_for(dtype()));
  // The same values in the middle of a long run, so that the SIMD body (not just the tail) sees them.
  Array big({67}, 0.5);
  for (size_t i = 0; i < x.data.size(); ++i) big.data[20 + i] = x.data[i];
  EXPECT_TENSOR_NEAR(op().fn(ref::to_tensor(big, dtype())), ref::round_all(ref::map(big, op().ref), dtype()),
                     dtype(), ref::tol_for(dtype()));
}

TEST_P(UnaryInPlaceTest, InPlaceWritesThroughView) {
  for (const Shape& shape : unary_shapes()) {
    SCOPED_TRACE("shape " + ref::shape_str(shape));
    for (int variant = 0; variant < 2; ++variant) {
      SCOPED_TRACE(variant == 0 ? "x.op_()" : "fg::op_(x)");
      ref::Input in = ref::make_input(shape, dtype(), layout(), rng_, op().domain);
      const Array base_before = ref::from_tensor(in.base);
      const Array expected = ref::map(ref::from_tensor(in.view), op().ref);
      const void* ptr = in.view.data_ptr();
      const Tensor* ret = variant == 0 ? op().method_inplace(in.view) : op().free_inplace(in.view);
      EXPECT_EQ(ret, &in.view) << "the in-place op must return self";
      EXPECT_EQ(in.view.data_ptr(), ptr);
      EXPECT_TENSOR_NEAR(in.view, expected, dtype(), ref::tol_for(dtype()));
      // Every element of the base outside the view is untouched, every one inside is updated.
      const Array base_expected = ref::base_after_view_write(in, base_before, ref::from_tensor(in.view));
      EXPECT_TRUE(ref::arrays_equal(ref::from_tensor(in.base), base_expected));
      EXPECT_TENSOR_NEAR(in.base, ref::base_after_view_write(in, base_before, expected), dtype(),
                         ref::tol_for(dtype()));
    }
  }
}

TEST_P(UnaryOnceTest, OutVariant) {
  for (Layout input_layout : {Layout::Contiguous, Layout::Transposed}) {
    for (const Shape& shape : {Shape{}, Shape{3, 4}, Shape{2, 3, 5}, Shape{37, 65}}) {
      SCOPED_TRACE("shape " + ref::shape_str(shape) + " input " + ref::layout_name(input_layout));
      ref::Input in = ref::make_input(shape, dtype(), input_layout, rng_, op().domain);
      const Array expected = ref::map(ref::from_tensor(in.view), op().ref);
      ref::check_out_variants([&](Tensor& out) { return op().out(out, in.view); }, expected, dtype(),
                              ref::tol_for(dtype()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, UnaryTest,
                         ::testing::Combine(::testing::Range<size_t>(0, unary_ops().size()),
                                            ::testing::Values(fg::kFloat, fg::kDouble),
                                            ::testing::ValuesIn(ref::all_layouts())),
                         unary_name);
INSTANTIATE_TEST_SUITE_P(Ops, UnaryInPlaceTest,
                         ::testing::Combine(::testing::Range<size_t>(0, unary_ops().size()),
                                            ::testing::Values(fg::kFloat, fg::kDouble),
                                            ::testing::ValuesIn(ref::writable_layouts())),
                         unary_name);
INSTANTIATE_TEST_SUITE_P(Ops, UnaryOnceTest,
                         ::testing::Combine(::testing::Range<size_t>(0, unary_ops().size()),
                                            ::testing::Values(fg::kFloat, fg::kDouble),
                                            ::testing::Values(Layout::Contiguous)),
                         unary_name);

TEST(UnaryDatabase, CoversEveryUnaryOp) { EXPECT_EQ(unary_ops().size(), 17u); }

// int64 inputs: neg, abs and relu stay int64; the transcendental ops give float32, as torch.
class UnaryIntTest : public ::testing::TestWithParam<size_t> {};

TEST_P(UnaryIntTest, Int64Input) {
  const UnaryOp& op = unary_ops()[GetParam()];
  ref::Rng rng(99);
  for (Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Strided}) {
    SCOPED_TRACE(ref::layout_name(layout));
    ref::Input in = ref::make_input({4, 5}, fg::kLong, layout, rng, op.domain);
    const Array x = ref::from_tensor(in.view);
    const fg::ScalarType want = op.int_policy == IntPolicy::KeepInt ? fg::kLong : fg::kFloat;
    EXPECT_TENSOR_NEAR(op.fn(in.view), ref::map(x, op.ref), want, ref::tol_for(want));
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, UnaryIntTest, ::testing::Range<size_t>(0, unary_ops().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return unary_ops()[info.param].name;
                         });

TEST(Unary, Log1pIsAccurateNearZero) {
  // log(1 + x) loses x entirely in float32 and most of its digits in float64.
  for (double x : {1e-10, -3e-9, 2e-7}) {
    EXPECT_TENSOR_NEAR(fg::log1p(fg::full({3}, x, fg::kDouble)), Array({3}, std::log1p(x)), fg::kDouble,
                       (ref::Tol{1e-13, 0}));
    const double xf = ref::round_to(x, fg::kFloat);
    EXPECT_TENSOR_NEAR(fg::log1p(fg::full({3}, x, fg::kFloat)), Array({3}, std::log1p(xf)), fg::kFloat,
                       (ref::Tol{1e-6, 0}));
  }
}

TEST(Unary, Expm1IsAccurateNearZero) {
  // exp(x) - 1 cancels to nothing in float32 and to a few digits in float64 (Highway's vector
  // expm1 in the CPU kernels, the C library's in the scalar path and on CUDA).
  for (double x : {1e-10, -3e-9, 2e-7, -0.25}) {
    EXPECT_TENSOR_NEAR(fg::expm1(fg::full({9}, x, fg::kDouble)), Array({9}, std::expm1(x)), fg::kDouble,
                       (ref::Tol{1e-13, 0}));
    const double xf = ref::round_to(x, fg::kFloat);
    EXPECT_TENSOR_NEAR(fg::expm1(fg::full({9}, x, fg::kFloat)), Array({9}, std::expm1(xf)), fg::kFloat,
                       (ref::Tol{1e-6, 0}));
  }
}

TEST(Unary, RsqrtIsNotAnApproximation) {
  // A raw hardware reciprocal square-root estimate is only good to ~1e-4 (AVX) or 2^-14 (AVX-512).
  ref::Rng rng(5);
  Array x = ref::random_array({1000}, rng, Domain{0.001, 1000}, fg::kFloat);
  EXPECT_TENSOR_NEAR(fg::rsqrt(ref::to_tensor(x, fg::kFloat)),
                     ref::map(x, [](double v) { return 1.0 / std::sqrt(v); }), fg::kFloat,
                     (ref::Tol{1e-6, 0}));
}

TEST(Unary, NegativeZeroAndSignsOfResults) {
  Tensor x = fg::tensor({-0.0, 0.0}, fg::kDouble);
  Tensor n = fg::neg(x);
  EXPECT_FALSE(std::signbit(n.data_ptr<double>()[0]));
  EXPECT_TRUE(std::signbit(n.data_ptr<double>()[1]));
  Tensor a = fg::abs(x);
  EXPECT_FALSE(std::signbit(a.data_ptr<double>()[0]));
}

TEST(Unary, BoolInputErrors) {
  EXPECT_FG_ERROR(fg::neg(fg::tensor({true, false})),
                  "fg::neg: negation of a bool tensor is not supported; use logical_not instead");
}

TEST(Unary, InPlaceIntegerTensorCannotHoldFloatResult) {
  Tensor x = fg::tensor({1, 2, 3});
  EXPECT_FG_ERROR(x.exp_(), "fg::exp_: result type float32 cannot be cast to the desired output type int64");
  EXPECT_FG_ERROR(fg::sqrt_(x), "fg::sqrt_: result type float32 cannot be cast to the desired output type int64");
  // Ops that keep int64 work in place on int64.
  x.neg_();
  EXPECT_TENSOR_EQ(x, Array({3}, {-1, -2, -3}), fg::kLong);
  x.abs_();
  EXPECT_TENSOR_EQ(x, Array({3}, {1, 2, 3}), fg::kLong);
}

// (self shape, other shape): equal shapes, trailing-dim broadcast, both sides broadcasting,
// 0-d operands, empty tensors, SIMD-tail sizes.
const std::vector<std::pair<Shape, Shape>>& binary_shapes() {
  static const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {3, 4}}, {{3, 4}, {4}},     {{4}, {3, 4}},       {{2, 1, 5}, {3, 1}}, {{3, 1}, {2, 1, 5}},
      {{3, 4}, {}},     {{}, {3, 4}},      {{}, {}},            {{5, 1}, {1, 6}},    {{1}, {3, 1}},
      {{0, 3}, {3}},    {{37, 65}, {65}},  {{37, 65}, {37, 1}}, {{2, 3, 4}, {2, 3, 4}},
      {{1, 67}, {67}},  {{131}, {131}}};
  return shapes;
}

using BinaryParam = std::tuple<size_t, fg::ScalarType, Layout>;

class BinaryTest : public ::testing::TestWithParam<BinaryParam> {
 protected:
  const BinaryOp& op() const { return binary_ops()[std::get<0>(GetParam())]; }
  fg::ScalarType dtype() const { return std::get<1>(GetParam()); }
  Layout layout() const { return std::get<2>(GetParam()); }
  fg::ScalarType result_dtype(fg::ScalarType in) const {
    if (op().compare) return fg::kBool;
    if (!op().int_stays_int && !fg::isFloatingType(in)) return fg::kFloat;
    return in;
  }
  ref::Tol tol() const { return ref::tol_for(result_dtype(dtype())); }
  // Integers to negative integer powers are an error in torch: int64 pow uses exponents 0..3.
  Domain b_dom() const { return op().name == "pow" && dtype() == fg::kLong ? Domain{0, 3, true} : op().b_dom; }
  ref::Rng rng_{0xB1A7};
};

std::string binary_name(const ::testing::TestParamInfo<BinaryParam>& info) {
  return binary_ops()[std::get<0>(info.param)].name + "_" + dtype_tag(std::get<1>(info.param)) + "_" +
         ref::layout_name(std::get<2>(info.param));
}

TEST_P(BinaryTest, BroadcastingMatchesReference) {
  const auto& layouts = ref::all_layouts();
  size_t k = 0;
  for (const auto& [sa, sb] : binary_shapes()) {
    // self takes this test's layout; other cycles through every layout.
    const Layout lb = layouts[k++ % layouts.size()];
    SCOPED_TRACE("shapes " + ref::shape_str(sa) + " and " + ref::shape_str(sb) + ", other " +
                 ref::layout_name(lb));
    ref::Input a = ref::make_input(sa, dtype(), layout(), rng_, op().a_dom);
    ref::Input b = ref::make_input(sb, dtype(), lb, rng_, b_dom());
    const Array xa = ref::from_tensor(a.view), xb = ref::from_tensor(b.view);
    const Array expected = ref::map(xa, xb, op().ref);
    EXPECT_TENSOR_NEAR(op().fn(a.view, b.view), expected, result_dtype(dtype()), tol());
    EXPECT_TENSOR_NEAR(op().method(a.view, b.view), expected, result_dtype(dtype()), tol());
    EXPECT_TRUE(ref::arrays_equal(ref::from_tensor(a.view), xa));
    EXPECT_TRUE(ref::arrays_equal(ref::from_tensor(b.view), xb));
  }
}

// Ops with a Scalar overload, every layout.
class BinaryScalarTest : public BinaryTest {};
// Ops with an in-place form whose result fits self's dtype, on writable layouts.
class BinaryInPlaceTest : public BinaryTest {};
// Once per op and dtype.
class BinaryOnceTest : public BinaryTest {};

TEST_P(BinaryScalarTest, ScalarOperand) {
  std::vector<fg::Scalar> scalars;
  if (op().compare) scalars = {fg::Scalar(1), fg::Scalar(0.5), fg::Scalar(-2.0)};
  else if (op().name == "pow") scalars = {fg::Scalar(2), fg::Scalar(0.5), fg::Scalar(-1.5), fg::Scalar(3)};
  else scalars = {fg::Scalar(2.5), fg::Scalar(-1.5), fg::Scalar(3), fg::Scalar(0.75)};
  for (const Shape& shape : {Shape{}, Shape{3, 4}, Shape{37, 65}}) {
    ref::Input a = ref::make_input(shape, dtype(), layout(), rng_, op().a_dom);
    const Array xa = ref::from_tensor(a.view);
    for (const fg::Scalar& s : scalars) {
      std::ostringstream trace;
      trace << "shape " << ref::shape_str(shape) << ", scalar " << s;
      SCOPED_TRACE(trace.str());
      const double sv = s.toDouble();
      // A C++ number never promotes a floating tensor: float32 stays float32.
      const fg::ScalarType want =
          op().compare ? fg::kBool
                       : (!fg::isFloatingType(dtype()) && (s.isFloatingPoint() || !op().int_stays_int)
                              ? fg::kFloat
                              : dtype());
      const Array expected = ref::map(xa, [&](double v) { return op().ref(v, sv); });
      EXPECT_TENSOR_NEAR(op().fn_scalar(a.view, s), expected, want, ref::tol_for(want));
      EXPECT_TENSOR_NEAR(op().method_scalar(a.view, s), expected, want, ref::tol_for(want));
    }
  }
}

TEST_P(BinaryInPlaceTest, InPlaceWritesThroughView) {
  // (self, other) where other broadcasts to self's shape; other is contiguous or expanded.
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {4}}, {{3, 4}, {3, 1}}, {{3, 4}, {}}, {{2, 3, 5}, {3, 1}}, {{2, 3, 5}, {2, 3, 5}},
      {{37, 65}, {65}}, {{}, {}}, {{5}, {1}}};
  for (const auto& [ss, so] : shapes) {
    for (Layout lo : {Layout::Contiguous, Layout::Expanded}) {
      SCOPED_TRACE("self " + ref::shape_str(ss) + ", other " + ref::shape_str(so) + " " +
                   ref::layout_name(lo));
      ref::Input self = ref::make_input(ss, dtype(), layout(), rng_, op().a_dom);
      ref::Input other = ref::make_input(so, dtype(), lo, rng_, b_dom());
      const Array base_before = ref::from_tensor(self.base);
      // Comparisons in place store 1/0 in self's dtype.
      const Array expected = ref::round_all(
          ref::map(ref::from_tensor(self.view), ref::from_tensor(other.view), op().ref), dtype());
      const Tensor* ret = op().inplace(self.view, other.view);
      EXPECT_EQ(ret, &self.view);
      EXPECT_TENSOR_NEAR(self.view, expected, dtype(), ref::tol_for(dtype()));
      EXPECT_TENSOR_NEAR(self.base, ref::base_after_view_write(self, base_before, expected), dtype(),
                         ref::tol_for(dtype()));
    }
  }
}

TEST_P(BinaryInPlaceTest, InPlaceScalarOperand) {
  ref::Input self = ref::make_input({6, 7}, dtype(), layout(), rng_, op().a_dom);
  const Array base_before = ref::from_tensor(self.base);
  const fg::Scalar s = 2;
  const Array expected = ref::round_all(ref::map(ref::from_tensor(self.view), [&](double v) {
                                          return op().ref(v, 2.0);
                                        }), dtype());
  const Tensor* ret = op().inplace_scalar(self.view, s);
  EXPECT_EQ(ret, &self.view);
  EXPECT_TENSOR_NEAR(self.view, expected, dtype(), ref::tol_for(dtype()));
  EXPECT_TENSOR_NEAR(self.base, ref::base_after_view_write(self, base_before, expected), dtype(),
                     ref::tol_for(dtype()));
}

TEST_P(BinaryOnceTest, OutVariant) {
  for (Layout input_layout : {Layout::Contiguous, Layout::Strided}) {
    for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{
             {{3, 4}, {4}}, {{2, 1, 5}, {3, 1}}, {{}, {}}, {{37, 65}, {37, 65}}}) {
      SCOPED_TRACE("shapes " + ref::shape_str(sa) + " and " + ref::shape_str(sb) + " inputs " +
                   ref::layout_name(input_layout));
      ref::Input a = ref::make_input(sa, dtype(), input_layout, rng_, op().a_dom);
      ref::Input b = ref::make_input(sb, dtype(), input_layout, rng_, b_dom());
      const Array expected = ref::map(ref::from_tensor(a.view), ref::from_tensor(b.view), op().ref);
      ref::check_out_variants([&](Tensor& out) { return op().out(out, a.view, b.view); }, expected,
                              result_dtype(dtype()), tol());
    }
  }
}

// Parameters (op, dtype, layout) for the ops, dtypes and layouts `keep` accepts.
std::vector<BinaryParam> binary_params(const std::vector<Layout>& layouts,
                                       const std::function<bool(const BinaryOp&, fg::ScalarType)>& keep) {
  std::vector<BinaryParam> out;
  for (size_t i = 0; i < binary_ops().size(); ++i)
    for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong})
      if (keep(binary_ops()[i], dt))
        for (Layout l : layouts) out.emplace_back(i, dt, l);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, BinaryTest,
                         ::testing::ValuesIn(binary_params(ref::all_layouts(),
                                                           [](const BinaryOp&, fg::ScalarType) { return true; })),
                         binary_name);
INSTANTIATE_TEST_SUITE_P(Ops, BinaryScalarTest,
                         ::testing::ValuesIn(binary_params(ref::all_layouts(),
                                                           [](const BinaryOp& op, fg::ScalarType) {
                                                             return static_cast<bool>(op.fn_scalar);
                                                           })),
                         binary_name);
INSTANTIATE_TEST_SUITE_P(Ops, BinaryInPlaceTest,
                         ::testing::ValuesIn(binary_params(ref::writable_layouts(),
                                                           [](const BinaryOp& op, fg::ScalarType dt) {
                                                             return op.inplace &&
                                                                    (fg::isFloatingType(dt) || op.int_stays_int);
                                                           })),
                         binary_name);
INSTANTIATE_TEST_SUITE_P(Ops, BinaryOnceTest,
                         ::testing::ValuesIn(binary_params({Layout::Contiguous},
                                                           [](const BinaryOp&, fg::ScalarType) { return true; })),
                         binary_name);

TEST(BinaryDatabase, CoversEveryBinaryOp) { EXPECT_EQ(binary_ops().size(), 13u); }

// ============================================================================ specifics

Tensor f32(std::initializer_list<double> v) { return fg::tensor(v, fg::kFloat); }

TEST(Binary, AlphaScalesOther) {
  ref::Rng rng(3);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    ref::Input a = ref::make_input({3, 4}, dt, Layout::Transposed, rng);
    ref::Input b = ref::make_input({4}, dt, Layout::Strided, rng);
    const Array xa = ref::from_tensor(a.view), xb = ref::from_tensor(b.view);
    EXPECT_TENSOR_NEAR(fg::add(a.view, b.view, 2.5), ref::map(xa, xb, [](double p, double q) { return p + 2.5 * q; }),
                       dt, ref::tol_for(dt));
    EXPECT_TENSOR_NEAR(fg::sub(a.view, b.view, -2), ref::map(xa, xb, [](double p, double q) { return p + 2 * q; }),
                       dt, ref::tol_for(dt));
    EXPECT_TENSOR_NEAR(a.view.add(3.0, 2), ref::map(xa, [](double p) { return p + 6; }), dt, ref::tol_for(dt));
    EXPECT_TENSOR_NEAR(fg::sub(a.view, 1.0, 0.5), ref::map(xa, [](double p) { return p - 0.5; }), dt,
                       ref::tol_for(dt));
    Tensor out = fg::empty({0}, dt);
    fg::add_out(out, a.view, b.view, 3);
    EXPECT_TENSOR_NEAR(out, ref::map(xa, xb, [](double p, double q) { return p + 3 * q; }), dt, ref::tol_for(dt));
    fg::sub_out(out, a.view, b.view, 3);
    EXPECT_TENSOR_NEAR(out, ref::map(xa, xb, [](double p, double q) { return p - 3 * q; }), dt, ref::tol_for(dt));
    Tensor c = a.view.clone();
    c.add_(b.view, -1);
    EXPECT_TENSOR_NEAR(c, ref::map(xa, xb, [](double p, double q) { return p - q; }), dt, ref::tol_for(dt));
    c.sub_(b.view, 2);
    EXPECT_TENSOR_NEAR(c, ref::map(xa, xb, [](double p, double q) { return p - 3 * q; }), dt, ref::tol_for(dt));
  }
  Tensor i = fg::tensor({1, 2, 3});
  EXPECT_TENSOR_EQ(fg::add(i, fg::tensor({10, 20, 30}), 2), Array({3}, {21, 42, 63}), fg::kLong);
}

struct PromotionCase {
  fg::ScalarType a;
  bool a_zero_dim;
  fg::ScalarType b;
  bool b_zero_dim;
  fg::ScalarType want;
};

// torch.result_type: dimensioned tensors decide within a category; a 0-d tensor only wins when it
// is of a higher category (bool < integer < floating) than every dimensioned operand.
TEST(Promotion, TensorTensor) {
  const std::vector<PromotionCase> cases = {
      {fg::kLong, false, fg::kFloat, false, fg::kFloat},   {fg::kBool, false, fg::kLong, false, fg::kLong},
      {fg::kFloat, false, fg::kDouble, false, fg::kDouble}, {fg::kBool, false, fg::kBool, false, fg::kBool},
      {fg::kLong, false, fg::kLong, false, fg::kLong},     {fg::kBool, false, fg::kDouble, false, fg::kDouble},
      {fg::kFloat, false, fg::kDouble, true, fg::kFloat},  {fg::kDouble, true, fg::kFloat, false, fg::kFloat},
      {fg::kLong, false, fg::kDouble, true, fg::kDouble},  {fg::kLong, false, fg::kFloat, true, fg::kFloat},
      {fg::kBool, false, fg::kLong, true, fg::kLong},      {fg::kLong, false, fg::kBool, true, fg::kLong},
      {fg::kFloat, true, fg::kDouble, true, fg::kDouble},  {fg::kLong, true, fg::kFloat, false, fg::kFloat},
      {fg::kFloat, false, fg::kLong, true, fg::kFloat},    {fg::kDouble, false, fg::kFloat, true, fg::kDouble},
  };
  for (const auto& c : cases) {
    std::ostringstream trace;
    trace << c.a << (c.a_zero_dim ? " 0-d" : " [3]") << " + " << c.b << (c.b_zero_dim ? " 0-d" : " [3]");
    SCOPED_TRACE(trace.str());
    Array xa(c.a_zero_dim ? Shape{} : Shape{3}), xb(c.b_zero_dim ? Shape{} : Shape{3});
    for (size_t i = 0; i < xa.data.size(); ++i) xa.data[i] = c.a == fg::kBool ? 1 : (c.a == fg::kLong ? 2 + i : 1.5 + i);
    for (size_t i = 0; i < xb.data.size(); ++i) xb.data[i] = c.b == fg::kBool ? 1 : (c.b == fg::kLong ? 3 : 0.25);
    Tensor ta = ref::to_tensor(xa, c.a), tb = ref::to_tensor(xb, c.b);
    const Array sum = ref::map(xa, xb, [&](double p, double q) {
      return c.want == fg::kBool ? double(p != 0 || q != 0) : p + q;
    });
    EXPECT_TENSOR_NEAR(fg::add(ta, tb), sum, c.want, ref::tol_for(c.want));
    if (c.want != fg::kBool) {
      EXPECT_TENSOR_NEAR(fg::mul(ta, tb), ref::map(xa, xb, [](double p, double q) { return p * q; }), c.want,
                         ref::tol_for(c.want));
      EXPECT_TENSOR_NEAR(fg::maximum(ta, tb), ref::map(xa, xb, nan_max), c.want, ref::tol_for(c.want));
      // where promotes its two value operands the same way.
      EXPECT_TENSOR_NEAR(fg::where(fg::full({3}, true), ta, tb),
                         ref::expand_to(xa, ref::broadcast(ref::broadcast(xa.shape, xb.shape), {3})), c.want,
                         ref::tol_for(c.want));
    }
  }
}

TEST(Promotion, TensorScalar) {
  Tensor f = f32({1.5, -2});
  Tensor d = fg::tensor({1.5, -2.0}, fg::kDouble);
  Tensor i = fg::tensor({1, -2});
  Tensor b = fg::tensor({true, false});
  // float32 with a C++ double stays float32; float64 stays float64.
  EXPECT_TENSOR_NEAR(f + 0.1, Array({2}, {1.6, -1.9}), fg::kFloat, ref::tol_for(fg::kFloat));
  EXPECT_TENSOR_NEAR(d * 2.0, Array({2}, {3, -4}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(f * 2, Array({2}, {3, -4}), fg::kFloat, ref::exact());
  // int64 with an integer stays int64, with a floating number becomes float32 (not float64).
  EXPECT_TENSOR_EQ(i + 3, Array({2}, {4, 1}), fg::kLong);
  EXPECT_TENSOR_EQ(i * 3, Array({2}, {3, -6}), fg::kLong);
  EXPECT_TENSOR_NEAR(i + 2.5, Array({2}, {3.5, 0.5}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(i * 0.5, Array({2}, {0.5, -1}), fg::kFloat, ref::exact());
  // True division always gives a floating result.
  EXPECT_TENSOR_NEAR(i / 2, Array({2}, {0.5, -1}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::div(i, fg::tensor({4, 4})), Array({2}, {0.25, -0.5}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::div(b, b), Array({2}, {1, ref::nan()}), fg::kFloat, ref::exact());
  // bool with an integer gives int64; with True stays bool; with a floating number gives float32.
  EXPECT_TENSOR_EQ(b + 2, Array({2}, {3, 2}), fg::kLong);
  EXPECT_TENSOR_NEAR(b * 1.5, Array({2}, {1.5, 0}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_EQ(b * true, Array({2}, {1, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(i * true, Array({2}, {1, -2}), fg::kLong);
  // Scalar on the left.
  EXPECT_TENSOR_NEAR(2.0 - f, Array({2}, {0.5, 4}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(3.0 / f, Array({2}, {2, -1.5}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_EQ(10 - i, Array({2}, {9, 12}), fg::kLong);
  EXPECT_TENSOR_NEAR(1 / i, Array({2}, {1, -0.5}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(2 + d, Array({2}, {3.5, 0}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(0.5 * i, Array({2}, {0.5, -1}), fg::kFloat, ref::exact());
}

TEST(Promotion, PowDtypes) {
  Tensor i = fg::tensor({2, 3});
  EXPECT_TENSOR_EQ(fg::pow(i, 2), Array({2}, {4, 9}), fg::kLong);
  EXPECT_TENSOR_EQ(fg::pow(i, fg::tensor({3, 2})), Array({2}, {8, 9}), fg::kLong);
  EXPECT_TENSOR_NEAR(fg::pow(i, 0.5), Array({2}, {std::sqrt(2.0), std::sqrt(3.0)}), fg::kFloat,
                     ref::tol_for(fg::kFloat));
  // Scalar base.
  EXPECT_TENSOR_EQ(fg::pow(2, i), Array({2}, {4, 8}), fg::kLong);
  EXPECT_TENSOR_NEAR(fg::pow(2.0, i), Array({2}, {4, 8}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::pow(2.0, fg::tensor({0.5, -1.0}, fg::kDouble)), Array({2}, {std::sqrt(2.0), 0.5}),
                     fg::kDouble, ref::tol_for(fg::kDouble));
  ref::Rng rng(11);
  ref::Input e = ref::make_input({4, 5}, fg::kFloat, Layout::Transposed, rng, kPowExp);
  EXPECT_TENSOR_NEAR(fg::pow(1.7, e.view), ref::map(ref::from_tensor(e.view), [](double v) { return std::pow(1.7, v); }),
                     fg::kFloat, ref::tol_for(fg::kFloat));
  // pow_out with a Scalar exponent.
  Tensor out = fg::empty({0});
  fg::pow_out(out, f32({2, 3}), 3);
  EXPECT_TENSOR_NEAR(out, Array({2}, {8, 27}), fg::kFloat, ref::exact());
  // Special exponents.
  Tensor x = fg::tensor({-2.0, 0.0, 4.0, -0.5}, fg::kDouble);
  EXPECT_TENSOR_NEAR(fg::pow(x, 2), Array({4}, {4, 0, 16, 0.25}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(fg::pow(x, 0.5), Array({4}, {ref::nan(), 0, 2, ref::nan()}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(fg::pow(x, -1), Array({4}, {-0.5, ref::inf(), 0.25, -2}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(fg::pow(x, 0), Array({4}, {1, 1, 1, 1}), fg::kDouble, ref::exact());
  EXPECT_TENSOR_NEAR(fg::pow(x, 3), Array({4}, {-8, 0, 64, -0.125}), fg::kDouble, ref::exact());
}

TEST(Promotion, BoolArithmetic) {
  Tensor p = fg::tensor({true, true, false, false});
  Tensor q = fg::tensor({true, false, true, false});
  EXPECT_TENSOR_EQ(p + q, Array({4}, {1, 1, 1, 0}), fg::kBool);  // logical or
  EXPECT_TENSOR_EQ(p * q, Array({4}, {1, 0, 0, 0}), fg::kBool);  // logical and
  EXPECT_TENSOR_EQ(fg::maximum(p, q), Array({4}, {1, 1, 1, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::minimum(p, q), Array({4}, {1, 0, 0, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(p == q, Array({4}, {1, 0, 0, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(p > q, Array({4}, {0, 1, 0, 0}), fg::kBool);
}

TEST(Promotion, ComparisonsPromoteBeforeComparing) {
  Tensor i = fg::tensor({1, 2, 3});
  // 2.5 is not truncated to 2.
  EXPECT_TENSOR_EQ(i > 2.5, Array({3}, {0, 0, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(i == 2.0, Array({3}, {0, 1, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(i <= 1.5, Array({3}, {1, 0, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::eq(i, f32({1.0, 2.5, 3.0})), Array({3}, {1, 0, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::lt(i, f32({1.5, 1.5, 3.5})), Array({3}, {1, 0, 1}), fg::kBool);
  // Scalar on the left flips the comparison.
  EXPECT_TENSOR_EQ(2 < i, Array({3}, {0, 0, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(2 >= i, Array({3}, {1, 1, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(2 != i, Array({3}, {1, 0, 1}), fg::kBool);
  // float32 compared with a float64 tensor compares in float64: 0.1f != 0.1.
  EXPECT_TENSOR_EQ(fg::eq(f32({0.1}), fg::tensor({0.1}, fg::kDouble)), Array({1}, {0}), fg::kBool);
  // NaN compares unequal to everything, itself included.
  Tensor n = f32({ref::nan(), 1.0});
  EXPECT_TENSOR_EQ(n == n, Array({2}, {0, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(n != n, Array({2}, {1, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(n < 5.0, Array({2}, {0, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(n >= 5.0, Array({2}, {0, 0}), fg::kBool);
}

TEST(Logical, TruthOfEachElementAsTorch) {
  Tensor p = fg::tensor({true, true, false, false});
  Tensor q = fg::tensor({true, false, true, false});
  EXPECT_TENSOR_EQ(fg::logical_and(p, q), Array({4}, {1, 0, 0, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(p.logical_or(q), Array({4}, {1, 1, 1, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::logical_xor(p, q), Array({4}, {0, 1, 1, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::logical_not(p), Array({4}, {0, 0, 1, 1}), fg::kBool);
  // Numbers: nonzero is true, NaN included; -0.0 is false; mixed dtypes and broadcasting.
  Tensor x = f32({0.0, -0.0, 2.5, ref::nan()});
  EXPECT_TENSOR_EQ(x.logical_not(), Array({4}, {1, 1, 0, 0}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::logical_and(x, fg::tensor({1, 0, 3, 4})), Array({4}, {0, 0, 1, 1}), fg::kBool);
  EXPECT_TENSOR_EQ(fg::logical_or(x.reshape({4, 1}), fg::tensor({false, true})),
                   Array({4, 2}, {0, 1, 0, 1, 1, 1, 1, 1}), fg::kBool);
  EXPECT_THROW(fg::logical_and(x, f32({1.0, 2.0})), fg::Error);
  // negating a bool tensor points to logical_not, which exists
  try {
    (void)(-p);
    FAIL() << "negating a bool tensor must fail";
  } catch (const fg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("logical_not"), std::string::npos);
    EXPECT_TENSOR_EQ(fg::logical_not(p), Array({4}, {0, 0, 1, 1}), fg::kBool);
  }
}

// torch.nn.functional's activations with parameters, against their definitions in double, on
// float32 and float64, a transposed view, NaN, and the parameters torch defaults to.
TEST(Activations, LeakyReluEluSoftplusHardtanhAsTheirDefinitions) {
  using Ref = std::function<double(double)>;
  const std::vector<std::tuple<std::string, std::function<Tensor(const Tensor&)>, Ref>> cases = {
      {"leaky_relu", [](const Tensor& x) { return fg::leaky_relu(x, 0.2); }, [](double v) { return v > 0 ? v : 0.2 * v; }},
      {"leaky_relu default", [](const Tensor& x) { return fg::leaky_relu(x); }, [](double v) { return v > 0 ? v : 0.01 * v; }},
      {"elu", [](const Tensor& x) { return fg::elu(x, 0.7); }, [](double v) { return v > 0 ? v : 0.7 * std::expm1(v); }},
      {"softplus", [](const Tensor& x) { return fg::softplus(x, 2.0, 3.0); },
       [](double v) { return 2 * v > 3 ? v : std::log1p(std::exp(2 * v)) / 2; }},
      {"softplus default", [](const Tensor& x) { return fg::softplus(x); },
       [](double v) { return v > 20 ? v : std::log1p(std::exp(v)); }},
      {"hardtanh", [](const Tensor& x) { return fg::hardtanh(x, -0.5, 1.5); },
       [](double v) { return v < -0.5 ? -0.5 : v > 1.5 ? 1.5 : v; }},
      {"hardtanh default", [](const Tensor& x) { return fg::hardtanh(x); }, [](double v) { return std::clamp(v, -1.0, 1.0); }},
      {"gelu", [](const Tensor& x) { return fg::gelu(x); }, [](double v) { return v * 0.5 * std::erfc(-v / std::sqrt(2.0)); }},
      {"gelu tanh", [](const Tensor& x) { return fg::gelu(x, "tanh"); },
       [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }},
  };
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    const Tensor base = fg::tensor({-30.0, -2.5, -0.3, -0.0, 0.0, 0.4, 1.2, 1.6, 12.0, 40.0, ref::nan(), -1.0}, dt);
    const Tensor x = base.reshape({3, 4}).t();  // a transposed view
    for (const auto& [name, f, r] : cases) {
      SCOPED_TRACE(name);
      const Tensor got = f(x);
      ASSERT_EQ(got.dtype(), dt);
      ASSERT_EQ(got.sizes(), x.sizes());
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 3; ++j) {
          const double v = x[i][j].item<double>(), want = r(v), have = got[i][j].item<double>();
          if (std::isnan(want)) EXPECT_TRUE(std::isnan(have)) << v;
          else EXPECT_NEAR(have, want, 1e-6 * (1 + std::abs(want))) << v;
        }
    }
  }
  EXPECT_THROW(fg::leaky_relu(fg::tensor({1, 2})), fg::Error);  // integer tensors, as torch
  EXPECT_THROW(fg::hardtanh(f32({1.0}), 1.0, -1.0), fg::Error);
  EXPECT_THROW(fg::gelu(f32({1.0}), "erf"), fg::Error);
}

TEST(Promotion, InPlaceKeepsSelfDtype) {
  // float32 self with a float64 or int64 other: computed, then stored as float32.
  Tensor f = f32({1.5, 2.5});
  f.add_(fg::tensor({1, 2}));
  EXPECT_TENSOR_NEAR(f, Array({2}, {2.5, 4.5}), fg::kFloat, ref::exact());
  f.mul_(fg::tensor({2.0, 0.5}, fg::kDouble));
  EXPECT_TENSOR_NEAR(f, Array({2}, {5, 2.25}), fg::kFloat, ref::exact());
  EXPECT_EQ(f.dtype(), fg::kFloat);
  // Comparison in place stores 1 and 0 in self's dtype.
  Tensor g = f32({1, 5, 3});
  g.gt_(2);
  EXPECT_TENSOR_NEAR(g, Array({3}, {0, 1, 1}), fg::kFloat, ref::exact());
  // int64 self with an integer result is fine.
  Tensor i = fg::tensor({1, 2});
  i.mul_(3);
  i += fg::tensor({true, false});
  EXPECT_TENSOR_EQ(i, Array({2}, {4, 6}), fg::kLong);
}

TEST(Promotion, InPlaceIntegerSelfRejectsFloatingResult) {
  Tensor i = fg::tensor({1, 2});
  EXPECT_FG_ERROR(i.add_(f32({1, 2})),
                  "fg::add_: result type float32 cannot be cast to the desired output type int64");
  EXPECT_FG_ERROR(i.mul_(2.5), "fg::mul_: result type float32 cannot be cast to the desired output type int64");
  EXPECT_FG_ERROR(i.div_(2), "fg::div_: result type float32 cannot be cast to the desired output type int64");
  Tensor b = fg::tensor({true, false});
  EXPECT_FG_ERROR(b.add_(1), "fg::add_: result type int64 cannot be cast to the desired output type bool");
  // Nothing was written.
  EXPECT_TENSOR_EQ(i, Array({2}, {1, 2}), fg::kLong);
}

// ============================================================================ where

TEST(Where, BroadcastsAllThreeOperands) {
  ref::Rng rng(21);
  struct Case {
    Shape c, a, b;
  };
  const std::vector<Case> cases = {{{3, 4}, {4}, {3, 1}}, {{2, 1, 5}, {3, 1}, {}}, {{}, {3}, {2, 1}},
                                   {{5}, {5}, {5}},       {{37, 65}, {37, 65}, {65}}, {{4, 1}, {}, {}}};
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble, fg::kLong, fg::kBool}) {
    for (const auto& c : cases) {
      for (Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Expanded, Layout::Diagonal}) {
        SCOPED_TRACE(ref::shape_str(c.c) + " " + ref::shape_str(c.a) + " " + ref::shape_str(c.b) + " " +
                     ref::layout_name(layout) + " " + fg::toString(dt));
        ref::Input cond = ref::make_input(c.c, fg::kBool, layout, rng);
        ref::Input a = ref::make_input(c.a, dt, layout, rng);
        ref::Input b = ref::make_input(c.b, dt, Layout::Strided, rng);
        const Array expected =
            ref::map(ref::from_tensor(cond.view), ref::from_tensor(a.view), ref::from_tensor(b.view),
                     [](double k, double p, double q) { return k != 0 ? p : q; });
        EXPECT_TENSOR_EQ(fg::where(cond.view, a.view, b.view), expected, dt);
        EXPECT_TENSOR_EQ(a.view.where(cond.view, b.view), expected, dt);
      }
    }
  }
}

TEST(Where, ScalarOperandsAndPromotion) {
  Tensor cond = fg::tensor({true, false, true});
  Tensor f = f32({1, 2, 3});
  Tensor i = fg::tensor({1, 2, 3});
  EXPECT_TENSOR_NEAR(fg::where(cond, f, 2.5), Array({3}, {1, 2.5, 3}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::where(cond, -1.0, f), Array({3}, {-1, 2, -1}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::where(cond, i, 2.5), Array({3}, {1, 2.5, 3}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_EQ(fg::where(cond, i, 7), Array({3}, {1, 7, 3}), fg::kLong);
  EXPECT_TENSOR_NEAR(fg::where(cond, i, f32({0.5, 0.5, 0.5})), Array({3}, {1, 0.5, 3}), fg::kFloat, ref::exact());
  EXPECT_TENSOR_NEAR(fg::where(cond, f, fg::tensor({9.0, 9.0, 9.0}, fg::kDouble)), Array({3}, {1, 9, 3}),
                     fg::kDouble, ref::exact());
  // Two scalars: integers give int64, a floating one gives float32.
  EXPECT_TENSOR_EQ(fg::where(cond, 1, 0), Array({3}, {1, 0, 1}), fg::kLong);
  EXPECT_TENSOR_NEAR(fg::where(cond, 1.5, 0), Array({3}, {1.5, 0, 1.5}), fg::kFloat, ref::exact());
  // The scalar forms broadcast against condition.
  Tensor cond2 = fg::tensor({true, false}).unsqueeze(1);
  EXPECT_TENSOR_NEAR(fg::where(cond2, f, 0.0), Array({2, 3}, {1, 2, 3, 0, 0, 0}), fg::kFloat, ref::exact());
}

TEST(Where, OutVariant) {
  ref::Rng rng(8);
  ref::Input cond = ref::make_input({3, 4}, fg::kBool, Layout::Transposed, rng);
  ref::Input a = ref::make_input({4}, fg::kDouble, Layout::Contiguous, rng);
  ref::Input b = ref::make_input({3, 1}, fg::kDouble, Layout::Contiguous, rng);
  const Array expected = ref::map(ref::from_tensor(cond.view), ref::from_tensor(a.view), ref::from_tensor(b.view),
                                  [](double k, double p, double q) { return k != 0 ? p : q; });
  ref::check_out_variants([&](Tensor& out) { return &fg::where_out(out, cond.view, a.view, b.view); }, expected,
                     fg::kDouble, ref::exact());
}

TEST(Where, Errors) {
  EXPECT_FG_ERROR(fg::where(f32({1, 0}), f32({1, 2}), f32({3, 4})),
                  "fg::where: expected a bool condition, got a tensor of dtype float32");
  EXPECT_FG_ERROR(fg::where(fg::tensor({true, false}), f32({1, 2, 3}), f32({3, 4})),
                  "fg::where: shapes [2] and [3] cannot be broadcast");
}

// ============================================================================ clamp

TEST(Clamp, MatchesReference) {
  ref::Rng rng(31);
  struct Bounds {
    std::optional<double> lo, hi;
  };
  const std::vector<Bounds> bounds = {{-1.0, 1.0}, {0.5, std::nullopt}, {std::nullopt, -0.25}, {2.0, 1.0}};
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    for (Layout layout : ref::all_layouts()) {
      for (const Shape& shape : {Shape{}, Shape{3, 4}, Shape{37, 65}}) {
        for (const auto& bd : bounds) {
          SCOPED_TRACE(std::string(fg::toString(dt)) + " " + ref::layout_name(layout) + " " + ref::shape_str(shape));
          ref::Input in = ref::make_input(shape, dt, layout, rng, Domain{-3, 3});
          const Array x = ref::from_tensor(in.view);
          // torch: min(max(x, lo), hi), so lo > hi gives hi everywhere.
          auto f = [&](double v) {
            if (bd.lo) v = std::max(v, *bd.lo);
            if (bd.hi) v = std::min(v, *bd.hi);
            return v;
          };
          std::optional<fg::Scalar> lo, hi;
          if (bd.lo) lo = fg::Scalar(*bd.lo);
          if (bd.hi) hi = fg::Scalar(*bd.hi);
          const Array expected = ref::map(x, f);
          EXPECT_TENSOR_NEAR(fg::clamp(in.view, lo, hi), expected, dt, ref::exact());
          EXPECT_TENSOR_NEAR(in.view.clamp(lo, hi), expected, dt, ref::exact());
          if (bd.lo && !bd.hi) {
            EXPECT_TENSOR_NEAR(fg::clamp_min(in.view, *lo), expected, dt, ref::exact());
            EXPECT_TENSOR_NEAR(in.view.clamp_min(*lo), expected, dt, ref::exact());
          }
          if (bd.hi && !bd.lo) {
            EXPECT_TENSOR_NEAR(fg::clamp_max(in.view, *hi), expected, dt, ref::exact());
            EXPECT_TENSOR_NEAR(in.view.clamp_max(*hi), expected, dt, ref::exact());
          }
          if (layout != Layout::Expanded) {
            const Array base_before = ref::from_tensor(in.base);
            Tensor v = in.view;
            const Tensor* ret = &fg::clamp_(v, lo, hi);
            EXPECT_EQ(ret, &v);
            EXPECT_TENSOR_NEAR(in.base, ref::base_after_view_write(in, base_before, expected), dt, ref::exact());
          }
        }
      }
    }
  }
}

TEST(Clamp, InPlaceMethodsAndOut) {
  Tensor base = fg::tensor({{-3.0, -1.0, 0.5}, {2.0, 4.0, -0.5}});
  base.t().clamp_(-1.0, 1.0);
  EXPECT_TENSOR_NEAR(base, Array({2, 3}, {-1, -1, 0.5, 1, 1, -0.5}), fg::kFloat, ref::exact());
  base.select(1, 0).clamp_min_(0.0);
  EXPECT_TENSOR_NEAR(base, Array({2, 3}, {0, -1, 0.5, 1, 1, -0.5}), fg::kFloat, ref::exact());
  base.slice(1, 1).clamp_max_(0.0);
  EXPECT_TENSOR_NEAR(base, Array({2, 3}, {0, -1, 0, 1, 0, -0.5}), fg::kFloat, ref::exact());
  Tensor x = f32({-2, 0, 2});
  ref::check_out_variants([&](Tensor& out) { return &fg::clamp_out(out, x, -1.0, 1.0); }, Array({3}, {-1, 0, 1}),
                     fg::kFloat, ref::exact());
}

TEST(Clamp, NaNAndIntegers) {
  Tensor n = fg::tensor({ref::nan(), 5.0, -5.0}, fg::kDouble);
  EXPECT_TENSOR_NEAR(fg::clamp(n, -1.0, 1.0), Array({3}, {ref::nan(), 1, -1}), fg::kDouble, ref::exact());
  Tensor big = fg::full({70}, ref::nan());
  EXPECT_TENSOR_NEAR(fg::clamp(big, 0.0, 1.0), Array({70}, ref::nan()), fg::kFloat, ref::exact());
  Tensor i = fg::tensor({-5, 0, 5});
  EXPECT_TENSOR_EQ(fg::clamp(i, -1, 2), Array({3}, {-1, 0, 2}), fg::kLong);
  // A floating bound promotes an integer tensor (torch >= 1.13).
  EXPECT_TENSOR_NEAR(fg::clamp(i, -1.5, 2.5), Array({3}, {-1.5, 0, 2.5}), fg::kFloat, ref::exact());
}

TEST(Clamp, Errors) {
  EXPECT_FG_ERROR(fg::clamp(f32({1}), std::nullopt, std::nullopt),
                  "fg::clamp: at least one of min and max must be given");
}

// ============================================================================ operators

TEST(Operators, MatchFunctions) {
  ref::Rng rng(41);
  ref::Input a = ref::make_input({3, 4}, fg::kFloat, Layout::Transposed, rng);
  ref::Input b = ref::make_input({4}, fg::kFloat, Layout::Strided, rng, kDenominator);
  const Array xa = ref::from_tensor(a.view), xb = ref::from_tensor(b.view);
  const auto tol = ref::tol_for(fg::kFloat);
  EXPECT_TENSOR_NEAR(a.view + b.view, ref::map(xa, xb, std::plus<double>()), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(a.view - b.view, ref::map(xa, xb, std::minus<double>()), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(a.view * b.view, ref::map(xa, xb, std::multiplies<double>()), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(a.view / b.view, ref::map(xa, xb, std::divides<double>()), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(-a.view, ref::map(xa, [](double v) { return -v; }), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(a.view + 1.5, ref::map(xa, [](double v) { return v + 1.5; }), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(1.5 + a.view, ref::map(xa, [](double v) { return v + 1.5; }), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(a.view - 1.5, ref::map(xa, [](double v) { return v - 1.5; }), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(1.5 - a.view, ref::map(xa, [](double v) { return 1.5 - v; }), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(a.view * 3, ref::map(xa, [](double v) { return v * 3; }), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(3 * a.view, ref::map(xa, [](double v) { return v * 3; }), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(a.view / 4, ref::map(xa, [](double v) { return v / 4; }), fg::kFloat, tol);
  EXPECT_TENSOR_NEAR(2.0 / b.view, ref::map(xb, [](double v) { return 2.0 / v; }), fg::kFloat, tol);
  EXPECT_TENSOR_EQ(a.view > b.view, ref::map(xa, xb, [](double p, double q) { return double(p > q); }), fg::kBool);
  EXPECT_TENSOR_EQ(a.view < 0, ref::map(xa, [](double v) { return double(v < 0); }), fg::kBool);
  EXPECT_TENSOR_EQ(a.view >= b.view, ref::map(xa, xb, [](double p, double q) { return double(p >= q); }), fg::kBool);
  EXPECT_TENSOR_EQ(a.view <= 0.5, ref::map(xa, [](double v) { return double(v <= 0.5); }), fg::kBool);
  EXPECT_TENSOR_EQ(0.5 > a.view, ref::map(xa, [](double v) { return double(0.5 > v); }), fg::kBool);
  EXPECT_TENSOR_EQ(0.5 <= a.view, ref::map(xa, [](double v) { return double(0.5 <= v); }), fg::kBool);
  EXPECT_TENSOR_EQ(a.view == a.view, Array({3, 4}, 1.0), fg::kBool);
  EXPECT_TENSOR_EQ(a.view != a.view, Array({3, 4}, 0.0), fg::kBool);
}

TEST(Operators, CompoundAssignmentWritesThrough) {
  Tensor x = fg::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor col = x.select(1, 1);  // [2, 5]
  col += 10;
  col *= fg::tensor({2.0, 3.0});
  col -= 1.0;
  col /= 2;
  EXPECT_TENSOR_NEAR(x, Array({2, 3}, {1, 11.5, 3, 4, 22, 6}), fg::kFloat, ref::exact());
  Tensor t = x.t();
  t -= fg::tensor({1.0, 2.0});  // broadcast along t's last dim = x's first dim
  EXPECT_TENSOR_NEAR(x, Array({2, 3}, {0, 10.5, 2, 2, 20, 4}), fg::kFloat, ref::exact());
  const Tensor& r = (t += 1.0);
  EXPECT_EQ(&r, &t);
}

// ============================================================================ errors

TEST(ElementwiseErrors, BroadcastMismatch) {
  Tensor a = fg::zeros({3, 4}), b = fg::zeros({5});
  EXPECT_FG_ERROR(fg::add(a, b), "fg::add: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_FG_ERROR(a + b, "fg::add: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_FG_ERROR(fg::sub(a, b), "fg::sub: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_FG_ERROR(fg::mul(b, a), "fg::mul: shapes [5] and [3, 4] cannot be broadcast");
  EXPECT_FG_ERROR(fg::div(a, b), "fg::div: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_FG_ERROR(fg::pow(a, b), "fg::pow: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_FG_ERROR(fg::maximum(a, b), "fg::maximum: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_FG_ERROR(fg::minimum(a, b), "fg::minimum: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_FG_ERROR(a > b, "fg::gt: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_FG_ERROR(fg::eq(a, b), "fg::eq: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_FG_ERROR(fg::add(fg::zeros({2, 3, 4}), fg::zeros({3, 1, 5})),
                  "fg::add: shapes [2, 3, 4] and [3, 1, 5] cannot be broadcast");
  Tensor out = fg::empty({0});
  EXPECT_FG_ERROR(fg::add_out(out, a, b), "fg::add_out: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_EQ(fg::infer_size({3, 1}, {1, 4}), (std::vector<int64_t>{3, 4}));
  EXPECT_FG_ERROR(fg::infer_size({3, 4}, {5}), "fg::broadcast: shapes [3, 4] and [5] cannot be broadcast");
}

TEST(ElementwiseErrors, InPlaceResultShapeMustMatchSelf) {
  Tensor self = fg::zeros({1});
  EXPECT_FG_ERROR(self.add_(fg::zeros({3, 1})),
                  "fg::add_: output shape [1] does not match the broadcast shape [3, 1]");
  EXPECT_FG_ERROR(fg::zeros({4}).mul_(fg::zeros({2, 4})),
                  "fg::mul_: output shape [4] does not match the broadcast shape [2, 4]");
  EXPECT_FG_ERROR(fg::zeros({3, 4}).sub_(fg::zeros({5})),
                  "fg::sub_: shapes [3, 4] and [5] cannot be broadcast");
  EXPECT_FG_ERROR(fg::zeros({3}).gt_(fg::zeros({2, 3})),
                  "fg::gt_: output shape [3] does not match the broadcast shape [2, 3]");
}

TEST(ElementwiseErrors, InPlaceOnExpandedSelfIsRejected) {
  // Several elements of an expanded tensor share one memory location, so torch refuses to write.
  Tensor row = fg::zeros({3});
  EXPECT_FG_ERROR(row.expand({2, 3}).add_(1),
                  "fg::add_: unsupported operation: more than one element of the written-to tensor (shape "
                  "[2, 3], strides [0, 1]) refers to a single memory location; clone() it before writing to it");
  EXPECT_TENSOR_NEAR(row, Array({3}, 0.0), fg::kFloat, ref::exact());
}

TEST(ElementwiseErrors, BoolSubtraction) {
  Tensor b = fg::tensor({true, false});
  EXPECT_FG_ERROR(fg::sub(b, b),
                  "fg::sub: subtraction of two bool tensors is not supported; use logical_xor or ne instead");
  EXPECT_FG_ERROR(b - true,
                  "fg::sub: subtraction of two bool tensors is not supported; use logical_xor or ne instead");
}

TEST(ElementwiseErrors, SubtractionWithOneBoolOperand) {
  // torch's sub_check rejects a bool operand on either side, not only two bools: `1 - mask` raises
  // "Subtraction, the `-` operator, with a bool tensor is not supported".
  Tensor b = fg::tensor({true, false});
  EXPECT_FG_ERROR(b - 1, "fg::sub: subtraction with a bool tensor is not supported; use logical_not to invert a mask");
  EXPECT_FG_ERROR(1 - b, "fg::sub: subtraction with a bool tensor is not supported; use logical_not to invert a mask");
  EXPECT_FG_ERROR(fg::sub(f32({1, 2}), b),
                  "fg::sub: subtraction with a bool tensor is not supported; use logical_not to invert a mask");
}

}  // namespace

namespace {

TEST(ElementwiseErrors, OutDtypeMustHoldResult) {
  // torch: "result type Float can't be cast to the desired output type Long".
  Tensor out = fg::zeros({2}, fg::kLong);
  EXPECT_FG_ERROR(fg::add_out(out, fg::tensor({1.5, 2.5}), fg::tensor({1.0, 1.0})),
                  "fg::add_out: result type float32 cannot be cast to the desired output type int64");
  Tensor out2 = fg::zeros({2}, fg::kLong);
  EXPECT_FG_ERROR(fg::exp_out(out2, fg::tensor({1, 2})),
                  "fg::exp_out: result type float32 cannot be cast to the desired output type int64");
  // A wider out is fine: float32 results stored in float64.
  Tensor wide = fg::zeros({2}, fg::kDouble);
  fg::mul_out(wide, fg::tensor({1.5, 2.0}), fg::tensor({2.0, 0.25}));
  EXPECT_TENSOR_NEAR(wide, Array({2}, {3, 0.5}), fg::kDouble, ref::exact());
}

}  // namespace

namespace {

// Large enough (> 2 * 32768 elements) for the runtime to split the work across threads.
TEST(LargeTensors, ThreadedPathsMatchReference) {
  ref::Rng rng(77);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    SCOPED_TRACE(fg::toString(dt));
    const ref::Tol tol = ref::tol_for(dt);
    ref::Input a = ref::make_input({300, 301}, dt, Layout::Contiguous, rng);
    ref::Input at = ref::make_input({300, 301}, dt, Layout::Transposed, rng);
    ref::Input row = ref::make_input({301}, dt, Layout::Strided, rng);
    ref::Input big = ref::make_input({100000}, dt, Layout::Contiguous, rng, Domain{-5, 5});
    const Array xa = ref::from_tensor(a.view), xt = ref::from_tensor(at.view), xr = ref::from_tensor(row.view);
    const Array xb = ref::from_tensor(big.view);
    EXPECT_TENSOR_NEAR(fg::exp(a.view), ref::map(xa, [](double v) { return std::exp(v); }), dt, tol);
    EXPECT_TENSOR_NEAR(fg::tanh(at.view), ref::map(xt, [](double v) { return std::tanh(v); }), dt, tol);
    EXPECT_TENSOR_NEAR(fg::sigmoid(big.view), ref::map(xb, [](double v) { return 1 / (1 + std::exp(-v)); }), dt, tol);
    EXPECT_TENSOR_NEAR(a.view * row.view, ref::map(xa, xr, std::multiplies<double>()), dt, tol);
    EXPECT_TENSOR_NEAR(fg::add(a.view, at.view), ref::map(xa, xt, std::plus<double>()), dt, tol);
    EXPECT_TENSOR_NEAR(fg::maximum(at.view, row.view), ref::map(xt, xr, nan_max), dt, ref::exact());
    EXPECT_TENSOR_EQ(fg::gt(a.view, at.view), ref::map(xa, xt, [](double p, double q) { return double(p > q); }),
                     fg::kBool);
    EXPECT_TENSOR_NEAR(fg::where(a.view > 0, a.view, at.view),
                       ref::map(xa, xt, [](double p, double q) { return p > 0 ? p : q; }), dt, ref::exact());
    // In place through a transposed view of a large base.
    const Array base_before = ref::from_tensor(at.base);
    at.view.mul_(row.view);
    const Array prod = ref::map(xt, xr, std::multiplies<double>());
    EXPECT_TENSOR_NEAR(at.base, ref::base_after_view_write(at, base_before, prod), dt, tol);
    Tensor c = fg::clamp(big.view, -1.0, 1.0);
    EXPECT_TENSOR_NEAR(c, ref::map(xb, [](double v) { return std::min(std::max(v, -1.0), 1.0); }), dt, ref::exact());
  }
}

}  // namespace
