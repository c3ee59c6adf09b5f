// The op database shared by the element-wise and ISA tests: one entry per op with its fg
// callables (functional, method, in-place, out), an independent scalar reference in double and
// the input domain it is checked on.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "reference.h"

namespace opdb {

using fg::Tensor;
using ref::Domain;

// ============================================================================ unary op database

enum class IntPolicy { KeepInt, ToFloat };

struct UnaryOp {
  std::string name;
  std::function<Tensor(const Tensor&)> fn;                         // fg::op(x)
  std::function<Tensor(const Tensor&)> method;                     // x.op()
  std::function<const Tensor*(Tensor&)> free_inplace;              // &fg::op_(x)
  std::function<const Tensor*(const Tensor&)> method_inplace;      // &x.op_()
  std::function<const Tensor*(Tensor&, const Tensor&)> out;        // &fg::op_out(out, x)
  std::function<double(double)> ref;
  Domain domain;
  IntPolicy int_policy;
  std::vector<double> specials;  // edge inputs: infinities, NaN, zeros, overflow
};

#define FG_UNARY_OP(op, ref_fn, lo, hi, policy, ...)                                     \
  UnaryOp {                                                                              \
    #op, [](const Tensor& x) { return fg::op(x); }, [](const Tensor& x) { return x.op(); }, \
        [](Tensor& x) -> const Tensor* { return &fg::op##_(x); },                        \
        [](const Tensor& x) -> const Tensor* { return &x.op##_(); },                     \
        [](Tensor& o, const Tensor& x) -> const Tensor* { return &fg::op##_out(o, x); }, \
        ref_fn, Domain{lo, hi}, policy, std::vector<double> __VA_ARGS__                  \
  }

inline const double kInf = ref::inf();
inline const double kNaN = ref::nan();

inline const std::vector<UnaryOp>& unary_ops() {
  static const std::vector<UnaryOp> ops = {
      FG_UNARY_OP(neg, [](double x) { return -x; }, -5, 5, IntPolicy::KeepInt,
                  {0.0, -0.0, kInf, -kInf, kNaN}),
      FG_UNARY_OP(abs, [](double x) { return std::fabs(x); }, -5, 5, IntPolicy::KeepInt,
                  {0.0, -0.0, -kInf, kInf, kNaN, -3.5}),
      FG_UNARY_OP(exp, [](double x) { return std::exp(x); }, -10, 10, IntPolicy::ToFloat,
                  {0.0, -kInf, kInf, kNaN, 100.0, -100.0, -1000.0, 1000.0, 1.0}),
      FG_UNARY_OP(log, [](double x) { return std::log(x); }, 0.01, 10, IntPolicy::ToFloat,
                  {0.0, -1.0, kInf, kNaN, 1.0, -kInf, 1e-30}),
      FG_UNARY_OP(log1p, [](double x) { return std::log1p(x); }, -0.9, 10, IntPolicy::ToFloat,
                  {0.0, -1.0, -2.0, kInf, kNaN, 1e6}),
      FG_UNARY_OP(expm1, [](double x) { return std::expm1(x); }, -10, 10, IntPolicy::ToFloat,
                  {0.0, -0.0, -kInf, kInf, kNaN, 1e-10, -1e-10, 100.0, -100.0, 707.0, 1000.0}),
      FG_UNARY_OP(sqrt, [](double x) { return std::sqrt(x); }, 0, 10, IntPolicy::ToFloat,
                  {0.0, -1.0, kInf, kNaN, 1e-30, 4.0, -kInf}),
      FG_UNARY_OP(rsqrt, [](double x) { return 1.0 / std::sqrt(x); }, 0.01, 10, IntPolicy::ToFloat,
                  {0.0, -1.0, kInf, kNaN, 4.0, 1e-30, 1e30}),
      FG_UNARY_OP(sin, [](double x) { return std::sin(x); }, -10, 10, IntPolicy::ToFloat,
                  {0.0, kInf, -kInf, kNaN, 1000.0, -3.0}),
      FG_UNARY_OP(cos, [](double x) { return std::cos(x); }, -10, 10, IntPolicy::ToFloat,
                  {0.0, kInf, -kInf, kNaN, 1000.0, 3.0}),
      FG_UNARY_OP(tan, [](double x) { return std::tan(x); }, -1.4, 1.4, IntPolicy::ToFloat,
                  {0.0, kInf, kNaN, 1.0, -1.0}),
      FG_UNARY_OP(tanh, [](double x) { return std::tanh(x); }, -6, 6, IntPolicy::ToFloat,
                  {0.0, kInf, -kInf, kNaN, 20.0, -20.0, 100.0, -100.0, 1e-3}),
      FG_UNARY_OP(sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -20, 20,
                  IntPolicy::ToFloat, {0.0, kInf, -kInf, kNaN, 100.0, -100.0, 50.0, -50.0}),
      FG_UNARY_OP(relu, [](double x) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); }, -5, 5,
                  IntPolicy::KeepInt, {0.0, -0.0, kInf, -kInf, kNaN, -1e-30}),
      FG_UNARY_OP(erf, [](double x) { return std::erf(x); }, -4, 4, IntPolicy::ToFloat,
                  {0.0, -0.0, kInf, -kInf, kNaN, 10.0, -10.0, 1e-30}),
      FG_UNARY_OP(silu, [](double x) { return x / (1.0 + std::exp(-x)); }, -20, 20, IntPolicy::ToFloat,
                  {0.0, kInf, -kInf, kNaN, 100.0, -100.0, -800.0}),
      FG_UNARY_OP(log_sigmoid, [](double x) { return std::min(x, 0.0) - std::log1p(std::exp(-std::abs(x))); }, -20,
                  20, IntPolicy::ToFloat, {0.0, kInf, -kInf, kNaN, 100.0, -100.0, -800.0, 800.0}),
  };
  return ops;
}

// ============================================================================ binary op database

struct BinaryOp {
  std::string name;
  std::function<Tensor(const Tensor&, const Tensor&)> fn;
  std::function<Tensor(const Tensor&, const Tensor&)> method;
  std::function<Tensor(const Tensor&, const fg::Scalar&)> fn_scalar;      // null: no overload
  std::function<Tensor(const Tensor&, const fg::Scalar&)> method_scalar;  // null: no overload
  std::function<const Tensor*(const Tensor&, const Tensor&)> inplace;     // null: no in-place
  std::function<const Tensor*(const Tensor&, const fg::Scalar&)> inplace_scalar;
  std::function<const Tensor*(Tensor&, const Tensor&, const Tensor&)> out;
  std::function<double(double, double)> ref;
  Domain a_dom, b_dom;
  bool compare;        // gives bool
  bool int_stays_int;  // int64 (op) int64 gives int64 (div gives float32)
};

#define FG_BINARY_FULL(op, ref_fn, a_dom, b_dom, compare, int_stays_int)                          \
  BinaryOp {                                                                                      \
    #op, [](const Tensor& a, const Tensor& b) { return fg::op(a, b); },                           \
        [](const Tensor& a, const Tensor& b) { return a.op(b); },                                 \
        [](const Tensor& a, const fg::Scalar& b) { return fg::op(a, b); },                        \
        [](const Tensor& a, const fg::Scalar& b) { return a.op(b); },                             \
        [](const Tensor& a, const Tensor& b) -> const Tensor* { return &a.op##_(b); },            \
        [](const Tensor& a, const fg::Scalar& b) -> const Tensor* { return &a.op##_(b); },        \
        [](Tensor& o, const Tensor& a, const Tensor& b) -> const Tensor* {                        \
          return &fg::op##_out(o, a, b);                                                          \
        },                                                                                        \
        ref_fn, a_dom, b_dom, compare, int_stays_int                                              \
  }

#define FG_BINARY_NO_SCALAR(op, ref_fn, a_dom, b_dom)                                     \
  BinaryOp {                                                                              \
    #op, [](const Tensor& a, const Tensor& b) { return fg::op(a, b); },                   \
        [](const Tensor& a, const Tensor& b) { return a.op(b); }, nullptr, nullptr, nullptr, \
        nullptr,                                                                          \
        [](Tensor& o, const Tensor& a, const Tensor& b) -> const Tensor* {                \
          return &fg::op##_out(o, a, b);                                                  \
        },                                                                                \
        ref_fn, a_dom, b_dom, false, true                                                 \
  }

inline double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? ref::nan() : std::max(a, b); }
inline double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? ref::nan() : std::min(a, b); }

inline const Domain kGeneral{-5, 5};
inline const Domain kDenominator{-5, 5, false, 0.5};
inline const Domain kPowBase{0.1, 4};
inline const Domain kPowExp{-3, 3};
inline const Domain kSmallInts{-3, 3, true};

inline const std::vector<BinaryOp>& binary_ops() {
  static const std::vector<BinaryOp> ops = {
      FG_BINARY_FULL(add, [](double a, double b) { return a + b; }, kGeneral, kGeneral, false, true),
      FG_BINARY_FULL(sub, [](double a, double b) { return a - b; }, kGeneral, kGeneral, false, true),
      FG_BINARY_FULL(mul, [](double a, double b) { return a * b; }, kGeneral, kGeneral, false, true),
      FG_BINARY_FULL(div, [](double a, double b) { return a / b; }, kGeneral, kDenominator, false, false),
      FG_BINARY_FULL(pow, [](double a, double b) { return std::pow(a, b); }, kPowBase, kPowExp, false, true),
      FG_BINARY_NO_SCALAR(maximum, nan_max, kSmallInts, kGeneral),
      FG_BINARY_NO_SCALAR(minimum, nan_min, kSmallInts, kGeneral),
      FG_BINARY_FULL(gt, [](double a, double b) { return double(a > b); }, kSmallInts, kSmallInts, true, true),
      FG_BINARY_FULL(lt, [](double a, double b) { return double(a < b); }, kSmallInts, kSmallInts, true, true),
      FG_BINARY_FULL(ge, [](double a, double b) { return double(a >= b); }, kSmallInts, kSmallInts, true, true),
      FG_BINARY_FULL(le, [](double a, double b) { return double(a <= b); }, kSmallInts, kSmallInts, true, true),
      FG_BINARY_FULL(eq, [](double a, double b) { return double(a == b); }, kSmallInts, kSmallInts, true, true),
      FG_BINARY_FULL(ne, [](double a, double b) { return double(a != b); }, kSmallInts, kSmallInts, true, true),
  };
  return ops;
}

}  // namespace opdb
