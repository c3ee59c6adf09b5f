// The per-element math of the element-wise ops, once for every device: the CUDA kernels apply it
// to every element; the CPU backend applies it to the dtypes its SIMD kernels do not cover
// (integers, bool) and is checked against it for the rest. Semantics follow torch: maximum and
// minimum propagate NaN, relu keeps NaN, integer pow is exact (negative exponents of |x| > 1 give 0).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/host_device.h"

namespace fg::kernels {

enum class UnaryKind : int {
  Neg, Abs, Exp, Log, Log1p, Sqrt, Rsqrt, Sin, Cos, Tan, Tanh, Sigmoid, Relu, Erf, Silu, LogSigmoid, Expm1,
};
// ReluBackward: a where b > 0, else 0 (relu's gradient a at its output b; NaN passes a, as torch).
enum class BinaryKind : int { Add, Sub, Mul, Div, Maximum, Minimum, Pow, ReluBackward };
enum class ReduceKind : int { Sum, Max, Min };
// Comparisons and logical ops: bool results (And/Or/Xor treat nonzero, NaN included, as true).
enum class CompareKind : int { Gt, Lt, Ge, Le, Eq, Ne, And, Or, Xor };

template <typename T>
FG_HD_INLINE bool is_nan(T x) {
  return x != x;  // false for integers; no libm call, so it works the same in device code
}

FG_HD_INLINE bool is_trigonometric(UnaryKind kind) {
  return kind == UnaryKind::Sin || kind == UnaryKind::Cos || kind == UnaryKind::Tan;
}

// sin, cos and tan of float and double. Kept apart from the other unary ops because their
// reduction of huge arguments (Payne-Hanek) needs a small stack array, which on the GPU is local
// memory: the CUDA backend builds these in their own kernel (cuda/backend_trig.cu).
template <typename T>
FG_HD_INLINE T apply_trigonometric(UnaryKind kind, T x) {
  if (kind == UnaryKind::Sin) return std::sin(x);
  if (kind == UnaryKind::Cos) return std::cos(x);
  return std::tan(x);
}

// The other unary ops on float and double (trigonometric kinds return x unchanged).
template <typename T>
FG_HD_INLINE T apply_smooth_unary(UnaryKind kind, T x) {
  switch (kind) {
    case UnaryKind::Neg: return -x;
    case UnaryKind::Abs: return x < T(0) ? -x : x == T(0) ? T(0) : x;  // abs(-0) = +0
    case UnaryKind::Exp: return std::exp(x);
    case UnaryKind::Log: return std::log(x);
    case UnaryKind::Log1p: return std::log1p(x);
    case UnaryKind::Sqrt: return std::sqrt(x);
    case UnaryKind::Rsqrt: return T(1) / std::sqrt(x);
    case UnaryKind::Tanh: return std::tanh(x);
    case UnaryKind::Sigmoid: return T(1) / (T(1) + std::exp(-x));
    case UnaryKind::Relu: return x < T(0) ? T(0) : x;
    case UnaryKind::Erf: return std::erf(x);
    case UnaryKind::Silu: return x / (T(1) + std::exp(-x));
    case UnaryKind::LogSigmoid: {  // min(x, 0) - log1p(exp(-|x|)): no overflow for large |x|
      const T m = x < T(0) ? x : T(0);
      return m - std::log1p(std::exp(x < T(0) ? x : -x));
    }
    case UnaryKind::Expm1: return std::expm1(x);  // exp(x) - 1, exact near 0 where that cancels
    case UnaryKind::Sin:
    case UnaryKind::Cos:
    case UnaryKind::Tan: return x;
  }
  return x;
}

template <typename T>
FG_HD_INLINE T apply_unary(UnaryKind kind, T x) {
  return is_trigonometric(kind) ? apply_trigonometric(kind, x) : apply_smooth_unary(kind, x);
}

// Unary ops on int64 (neg, abs, relu; the others promote to float before they get here).
FG_HD_INLINE int64_t apply_unary_integer(UnaryKind kind, int64_t x) {
  if (kind == UnaryKind::Neg) return -x;
  if (kind == UnaryKind::Abs) return x < 0 ? -x : x;
  if (kind == UnaryKind::Relu) return x < 0 ? 0 : x;
  return x;
}

template <typename T>
FG_HD_INLINE T integer_pow(T x, T y) {
  if (y < 0) return x == 1 ? T(1) : x == -1 ? ((y & 1) ? T(-1) : T(1)) : T(0);
  T r = 1, b = x;
  for (T e = y; e > 0; e >>= 1, b *= b)
    if (e & 1) r *= b;
  return r;
}

// Binary ops on float, double and int64 (bool operands compute in int64 and narrow).
template <typename T>
FG_HD_INLINE T apply_binary(BinaryKind kind, T x, T y) {
  constexpr bool kFloating = std::is_floating_point<T>::value;
  switch (kind) {
    case BinaryKind::Add: return x + y;
    case BinaryKind::Sub: return x - y;
    case BinaryKind::Mul: return x * y;
    case BinaryKind::Div:
      if constexpr (kFloating) return x / y;
      else return y == 0 ? T(0) : x / y;  // not reached: div promotes integers to float
    case BinaryKind::Maximum: return is_nan(x) || is_nan(y) ? x + y : x > y ? x : y;
    case BinaryKind::Minimum: return is_nan(x) || is_nan(y) ? x + y : x < y ? x : y;
    case BinaryKind::ReluBackward: return y <= T(0) ? T(0) : x;
    case BinaryKind::Pow:
      if constexpr (kFloating) return std::pow(x, y);
      else return integer_pow(x, y);
  }
  return x;
}

template <typename T>
FG_HD_INLINE bool apply_compare(CompareKind kind, T a, T b) {
  switch (kind) {
    case CompareKind::Gt: return a > b;
    case CompareKind::Lt: return a < b;
    case CompareKind::Ge: return a >= b;
    case CompareKind::Le: return a <= b;
    case CompareKind::Eq: return a == b;
    case CompareKind::Ne: return a != b;
    case CompareKind::And: return a != T(0) && b != T(0);
    case CompareKind::Or: return a != T(0) || b != T(0);
    case CompareKind::Xor: return (a != T(0)) != (b != T(0));
  }
  return false;
}

// min(max(x, lo), hi) with NaN kept, as torch (lo > hi gives hi); bounds already in T.
template <typename T>
FG_HD_INLINE T apply_clamp(T x, T lo, T hi) {
  if (is_nan(x)) return x;
  const T r = x < lo ? lo : x;
  return r > hi ? hi : r;
}

}  // namespace fg::kernels
