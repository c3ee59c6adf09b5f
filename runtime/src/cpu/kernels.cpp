// One kernel source, compiled per ISA by Highway's foreach_target and dispatched at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/kernels.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace fg::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Largest vector, in elements, of any target: the size of the padded buffer for loop tails.
constexpr size_t kMaxLanes = 64;

// Marks ops whose vector form is exact for every input (no scalar fallback needed).
struct AlwaysInDomain {};

// Runs `vec(d, v)` over full vectors and, for the tail, over one padded vector, so that every
// element goes through the same arithmetic whatever the length. Where `in_domain` says a lane
// holds a value outside the fast approximation's valid range (infinities, NaN, huge arguments),
// that lane alone takes the C library's `scalar`: an element's result never depends on its
// neighbours, so a batch and each of its examples agree bit for bit (vmap and the loop of calls).
template <class D, class T, class Vec, class Scalar, class Domain>
HWY_INLINE void MapUnary(D d, const T* HWY_RESTRICT x, T* HWY_RESTRICT out, int64_t n, Vec vec,
                         Scalar scalar, Domain in_domain) {
  const size_t N = hn::Lanes(d);
  auto one_vector = [&](const T* src, T* dst, size_t lanes) {
    const auto v = hn::LoadU(d, src);
    if constexpr (!std::is_same_v<Domain, AlwaysInDomain>) {
      const auto ok = in_domain(d, v);
      if (!hn::AllTrue(d, ok)) {
        HWY_ALIGN T values[kMaxLanes];  // (src may be dst: an in-place op)
        hn::Store(v, d, values);
        uint8_t bits[(kMaxLanes + 7) / 8] = {};
        hn::StoreMaskBits(d, ok, bits);
        // The other lanes hold a value in every op's domain meanwhile (Highway's emulated targets
        // convert NaN to int on the way, which is undefined).
        hn::StoreU(vec(d, hn::IfThenElse(ok, v, hn::Set(d, T(0.5)))), d, dst);
        for (size_t i = 0; i < lanes; ++i)
          if (((bits[i / 8] >> (i % 8)) & 1) == 0) dst[i] = scalar(values[i]);
        return;
      }
    }
    hn::StoreU(vec(d, v), d, dst);
  };
  size_t i = 0;
  const size_t count = static_cast<size_t>(n);
  for (; i + N <= count; i += N) one_vector(x + i, out + i, N);
  if (i < count) {
    HWY_ALIGN T buf[kMaxLanes] = {};
    const size_t rest = count - i;
    std::memcpy(buf, x + i, rest * sizeof(T));
    for (size_t k = rest; k < N; ++k) buf[k] = T(0.5);  // a value inside every op's domain
    one_vector(buf, buf, rest);
    std::memcpy(out + i, buf, rest * sizeof(T));
  }
}

// Finite and within [lo, hi]: false for NaN.
template <class D, class V, class T>
HWY_INLINE auto InRange(D d, V v, T lo, T hi) {
  return hn::And(hn::Ge(v, hn::Set(d, lo)), hn::Le(v, hn::Set(d, hi)));
}

template <class T>
struct Limits {
  static constexpr T kExpMax = sizeof(T) == 4 ? T(88.5) : T(709.0);
  static constexpr T kTrigMax = T(39000);
};

template <class D, class T = hn::TFromD<D>>
void Unary(D d, UnaryKind kind, const T* x, T* out, int64_t n) {
  using V = hn::Vec<D>;
  constexpr T kMax = std::numeric_limits<T>::max();
  constexpr T kMinNormal = std::numeric_limits<T>::min();
  const auto finite = [](D dd, V v) { return InRange(dd, v, -kMax, kMax); };
  const auto exp_domain = [](D dd, V v) { return InRange(dd, v, -kMax, Limits<T>::kExpMax); };
  const auto trig_domain = [](D dd, V v) {
    return InRange(dd, v, -Limits<T>::kTrigMax, Limits<T>::kTrigMax);
  };
  switch (kind) {
    case UnaryKind::Neg:
      return MapUnary(d, x, out, n, [](D, V v) { return hn::Neg(v); }, [](T v) { return -v; },
                      AlwaysInDomain());
    case UnaryKind::Abs:
      return MapUnary(d, x, out, n, [](D, V v) { return hn::Abs(v); },
                      [](T v) { return std::abs(v); }, AlwaysInDomain());
    case UnaryKind::Exp:
      return MapUnary(d, x, out, n, [](D dd, V v) { return hn::Exp(dd, v); },
                      [](T v) { return std::exp(v); }, exp_domain);
    case UnaryKind::Log:
      return MapUnary(d, x, out, n, [](D dd, V v) { return hn::Log(dd, v); },
                      [](T v) { return std::log(v); },
                      [](D dd, V v) { return InRange(dd, v, kMinNormal, kMax); });
    case UnaryKind::Log1p:
      return MapUnary(d, x, out, n, [](D dd, V v) { return hn::Log1p(dd, v); },
                      [](T v) { return std::log1p(v); },
                      [](D dd, V v) { return InRange(dd, v, T(-0.999), kMax); });
    case UnaryKind::Sqrt:
      return MapUnary(d, x, out, n, [](D, V v) { return hn::Sqrt(v); },
                      [](T v) { return std::sqrt(v); }, AlwaysInDomain());
    case UnaryKind::Rsqrt:
      return MapUnary(d, x, out, n, [](D dd, V v) { return hn::Div(hn::Set(dd, T(1)), hn::Sqrt(v)); },
                      [](T v) { return T(1) / std::sqrt(v); }, AlwaysInDomain());
    case UnaryKind::Sin:
      return MapUnary(d, x, out, n, [](D dd, V v) { return hn::Sin(dd, v); },
                      [](T v) { return std::sin(v); }, trig_domain);
    case UnaryKind::Cos:
      return MapUnary(d, x, out, n, [](D dd, V v) { return hn::Cos(dd, v); },
                      [](T v) { return std::cos(v); }, trig_domain);
    case UnaryKind::Tan:
      // No vector tan in Highway; sin/cos loses accuracy near the poles, so stay with libm.
      for (int64_t i = 0; i < n; ++i) out[i] = std::tan(x[i]);
      return;
    case UnaryKind::Tanh:
      return MapUnary(d, x, out, n, [](D dd, V v) { return hn::Tanh(dd, v); },
                      [](T v) { return std::tanh(v); }, finite);
    case UnaryKind::Sigmoid:
      return MapUnary(
          d, x, out, n,
          [](D dd, V v) {
            const V one = hn::Set(dd, T(1));
            return hn::Div(one, hn::Add(one, hn::Exp(dd, hn::Neg(v))));
          },
          [](T v) { return T(1) / (T(1) + std::exp(-v)); },
          [](D dd, V v) { return InRange(dd, v, -Limits<T>::kExpMax, kMax); });
    case UnaryKind::Relu:
      return MapUnary(
          d, x, out, n,
          [](D dd, V v) { return hn::IfThenElse(hn::Lt(v, hn::Zero(dd)), hn::Zero(dd), v); },
          [](T v) { return v < T(0) ? T(0) : v; }, AlwaysInDomain());
    case UnaryKind::Erf:
      // No vector erf in Highway; a rational approximation would lose the last digits torch keeps.
      for (int64_t i = 0; i < n; ++i) out[i] = std::erf(x[i]);
      return;
    case UnaryKind::Silu:  // x * sigmoid(x)
      return MapUnary(
          d, x, out, n,
          [](D dd, V v) { return hn::Div(v, hn::Add(hn::Set(dd, T(1)), hn::Exp(dd, hn::Neg(v)))); },
          [](T v) { return v / (T(1) + std::exp(-v)); },
          [](D dd, V v) { return InRange(dd, v, -Limits<T>::kExpMax, kMax); });
    case UnaryKind::LogSigmoid:  // min(x, 0) - log1p(exp(-|x|)): no overflow for large |x|
      return MapUnary(
          d, x, out, n,
          [](D dd, V v) {
            return hn::Sub(hn::Min(v, hn::Zero(dd)), hn::Log1p(dd, hn::Exp(dd, hn::Neg(hn::Abs(v)))));
          },
          [](T v) { return std::min(v, T(0)) - std::log1p(std::exp(-std::abs(v))); }, finite);
    case UnaryKind::Expm1:
      return MapUnary(d, x, out, n, [](D dd, V v) { return hn::Expm1(dd, v); },
                      [](T v) { return std::expm1(v); },
                      // (Highway's expm1 is valid to 706 in double; exp's limit is 709)
                      [](D dd, V v) { return InRange(dd, v, -kMax, sizeof(T) == 4 ? T(88.5) : T(706)); });
  }
}

// NaN-propagating maximum/minimum, as torch.maximum. (x86 max/min return the second operand when
// either is NaN, and Ne(v, v) is an ordered compare there, so NaN is tested with IsNaN.)
template <class D, class V>
HWY_INLINE V MaxNaN(D, V a, V b) {
  return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, hn::Max(a, b)));
}
template <class D, class V>
HWY_INLINE V MinNaN(D, V a, V b) {
  return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, hn::Min(a, b)));
}
template <class T>
T ScalarMax(T a, T b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b); }
template <class T>
T ScalarMin(T a, T b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b); }

template <class D, class T, class Op>
HWY_INLINE void MapBinary(D d, const T* a, int64_t sa, const T* b, int64_t sb, T* out, int64_t n,
                          Op op) {
  const size_t N = hn::Lanes(d);
  const size_t count = static_cast<size_t>(n);
  size_t i = 0;
  if (sa == 1 && sb == 1) {
    for (; i + N <= count; i += N)
      hn::StoreU(op(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  } else if (sa == 1) {
    const auto vb = hn::Set(d, b[0]);
    for (; i + N <= count; i += N) hn::StoreU(op(d, hn::LoadU(d, a + i), vb), d, out + i);
  } else if (sb == 1) {
    const auto va = hn::Set(d, a[0]);
    for (; i + N <= count; i += N) hn::StoreU(op(d, va, hn::LoadU(d, b + i)), d, out + i);
  }
  if (i < count) {
    // Tail (or both broadcast): one padded vector per N elements.
    HWY_ALIGN T bufa[kMaxLanes];
    HWY_ALIGN T bufb[kMaxLanes];
    while (i < count) {
      const size_t rest = std::min(N, count - i);
      for (size_t k = 0; k < N; ++k) {
        bufa[k] = k < rest ? a[(i + k) * sa] : T(1);
        bufb[k] = k < rest ? b[(i + k) * sb] : T(1);
      }
      hn::Store(op(d, hn::Load(d, bufa), hn::Load(d, bufb)), d, bufa);
      std::memcpy(out + i, bufa, rest * sizeof(T));
      i += rest;
    }
  }
}

template <class D, class T = hn::TFromD<D>>
void Binary(D d, BinaryKind kind, const T* a, int64_t sa, const T* b, int64_t sb, T* out, int64_t n) {
  using V = hn::Vec<D>;
  switch (kind) {
    case BinaryKind::Add:
      return MapBinary(d, a, sa, b, sb, out, n, [](D, V x, V y) { return hn::Add(x, y); });
    case BinaryKind::Sub:
      return MapBinary(d, a, sa, b, sb, out, n, [](D, V x, V y) { return hn::Sub(x, y); });
    case BinaryKind::Mul:
      return MapBinary(d, a, sa, b, sb, out, n, [](D, V x, V y) { return hn::Mul(x, y); });
    case BinaryKind::Div:
      return MapBinary(d, a, sa, b, sb, out, n, [](D, V x, V y) { return hn::Div(x, y); });
    case BinaryKind::Maximum:
      return MapBinary(d, a, sa, b, sb, out, n, [](D dd, V x, V y) { return MaxNaN(dd, x, y); });
    case BinaryKind::Minimum:
      return MapBinary(d, a, sa, b, sb, out, n, [](D dd, V x, V y) { return MinNaN(dd, x, y); });
    case BinaryKind::ReluBackward:
      return MapBinary(d, a, sa, b, sb, out, n,
                       [](D dd, V g, V y) { return hn::IfThenZeroElse(hn::Le(y, hn::Zero(dd)), g); });
    case BinaryKind::Pow:
      // Vector pow would need exp(y log x) with sign and integer-exponent fix-ups; libm is exact.
      for (int64_t i = 0; i < n; ++i) out[i] = std::pow(a[i * sa], b[i * sb]);
      return;
  }
}

template <class D, class T = hn::TFromD<D>>
void Clamp(D d, const T* x, T lo, T hi, T* out, int64_t n) {
  using V = hn::Vec<D>;
  const V vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  MapUnary(
      d, x, out, n,
      [&](D, V v) { return hn::IfThenElse(hn::IsNaN(v), v, hn::Min(hn::Max(v, vlo), vhi)); },
      [&](T v) { return std::isnan(v) ? v : std::min(std::max(v, lo), hi); }, AlwaysInDomain());
}

// Sum of up to a block of elements with four independent accumulators.
template <class D, class T = hn::TFromD<D>>
T SumBlock(D d, const T* x, size_t n) {
  const size_t N = hn::Lanes(d);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    s0 = hn::Add(s0, hn::LoadU(d, x + i));
    s1 = hn::Add(s1, hn::LoadU(d, x + i + N));
    s2 = hn::Add(s2, hn::LoadU(d, x + i + 2 * N));
    s3 = hn::Add(s3, hn::LoadU(d, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) s0 = hn::Add(s0, hn::LoadU(d, x + i));
  T total = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
  for (; i < n; ++i) total += x[i];
  return total;
}

// Pairwise over blocks keeps the float32 error growing with log(n), not n.
template <class D, class T = hn::TFromD<D>>
T SumPairwise(D d, const T* x, size_t n) {
  constexpr size_t kBlock = 2048;
  if (n <= kBlock) return SumBlock(d, x, n);
  const size_t half = ((n / 2) + kBlock - 1) / kBlock * kBlock;
  return SumPairwise(d, x, half) + SumPairwise(d, x + half, n - half);
}

template <bool kMax, class D, class T = hn::TFromD<D>>
T Extreme(D d, const T* x, size_t n) {
  const size_t N = hn::Lanes(d);
  T result = kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  size_t i = 0;
  if (n >= N) {
    auto acc = hn::LoadU(d, x);
    auto nan = hn::IsNaN(acc);
    for (i = N; i + N <= n; i += N) {
      const auto v = hn::LoadU(d, x + i);
      nan = hn::Or(nan, hn::IsNaN(v));
      acc = kMax ? hn::Max(acc, v) : hn::Min(acc, v);
    }
    if (!hn::AllFalse(d, nan)) return std::numeric_limits<T>::quiet_NaN();
    result = hn::GetLane(kMax ? hn::MaxOfLanes(d, acc) : hn::MinOfLanes(d, acc));
  }
  for (; i < n; ++i) result = kMax ? ScalarMax(result, x[i]) : ScalarMin(result, x[i]);
  return result;
}

template <class D, class T = hn::TFromD<D>>
T Reduce(D d, ReduceKind kind, const T* x, int64_t n) {
  switch (kind) {
    case ReduceKind::Sum: return SumPairwise(d, x, static_cast<size_t>(n));
    case ReduceKind::Max: return Extreme<true>(d, x, static_cast<size_t>(n));
    case ReduceKind::Min: return Extreme<false>(d, x, static_cast<size_t>(n));
  }
  return T(0);
}

template <class D, class T = hn::TFromD<D>>
void SoftmaxRows(D d, const T* x, T* out, int64_t rows, int64_t n, bool log) {
  using V = hn::Vec<D>;
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    T* yr = out + r * n;
    const T m = Extreme<true>(d, xr, static_cast<size_t>(n));
    const V vm = hn::Set(d, m);
    // exp(x - m): every argument is <= 0, so only -inf and NaN leave the fast path.
    MapUnary(d, xr, yr, n, [&](D dd, V v) { return hn::Exp(dd, hn::Sub(v, vm)); },
             [&](T v) { return std::exp(v - m); },
             [&](D dd, V v) { return InRange(dd, hn::Sub(v, vm), -std::numeric_limits<T>::max(), T(0)); });
    const T s = SumPairwise(d, yr, static_cast<size_t>(n));
    if (log) {
      // (x - m) - log(s), not x - (m + log(s)): the latter loses log(s) against a large m.
      const T log_s = std::log(s);
      Binary(d, BinaryKind::Sub, xr, 1, &m, 0, yr, n);
      Binary(d, BinaryKind::Sub, yr, 1, &log_s, 0, yr, n);
    } else {
      const T inv = T(1) / s;
      Binary(d, BinaryKind::Mul, yr, 1, &inv, 0, yr, n);
    }
  }
}

#define FG_KERNELS_FOR(T, SUFFIX)                                                                \
  void Unary##SUFFIX(UnaryKind k, const T* x, T* out, int64_t n) {                               \
    Unary(hn::ScalableTag<T>(), k, x, out, n);                                                   \
  }                                                                                              \
  void Binary##SUFFIX(BinaryKind k, const T* a, int64_t sa, const T* b, int64_t sb, T* out,      \
                      int64_t n) {                                                               \
    Binary(hn::ScalableTag<T>(), k, a, sa, b, sb, out, n);                                       \
  }                                                                                              \
  void Clamp##SUFFIX(const T* x, T lo, T hi, T* out, int64_t n) {                                \
    Clamp(hn::ScalableTag<T>(), x, lo, hi, out, n);                                              \
  }                                                                                              \
  T Reduce##SUFFIX(ReduceKind k, const T* x, int64_t n) {                                        \
    return Reduce(hn::ScalableTag<T>(), k, x, n);                                                \
  }                                                                                              \
  void Softmax##SUFFIX(const T* x, T* out, int64_t rows, int64_t n, bool log) {                  \
    SoftmaxRows(hn::ScalableTag<T>(), x, out, rows, n, log);                                     \
  }
FG_KERNELS_FOR(float, F32)
FG_KERNELS_FOR(double, F64)
#undef FG_KERNELS_FOR

}  // namespace HWY_NAMESPACE
}  // namespace fg::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fg::cpu {

HWY_EXPORT(UnaryF32);
HWY_EXPORT(UnaryF64);
HWY_EXPORT(BinaryF32);
HWY_EXPORT(BinaryF64);
HWY_EXPORT(ClampF32);
HWY_EXPORT(ClampF64);
HWY_EXPORT(ReduceF32);
HWY_EXPORT(ReduceF64);
HWY_EXPORT(SoftmaxF32);
HWY_EXPORT(SoftmaxF64);

void unary(UnaryKind k, const float* x, float* out, int64_t n) { HWY_DYNAMIC_DISPATCH(UnaryF32)(k, x, out, n); }
void unary(UnaryKind k, const double* x, double* out, int64_t n) { HWY_DYNAMIC_DISPATCH(UnaryF64)(k, x, out, n); }
void binary(BinaryKind k, const float* a, int64_t sa, const float* b, int64_t sb, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryF32)(k, a, sa, b, sb, out, n);
}
void binary(BinaryKind k, const double* a, int64_t sa, const double* b, int64_t sb, double* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryF64)(k, a, sa, b, sb, out, n);
}
void clamp(const float* x, float lo, float hi, float* out, int64_t n) { HWY_DYNAMIC_DISPATCH(ClampF32)(x, lo, hi, out, n); }
void clamp(const double* x, double lo, double hi, double* out, int64_t n) { HWY_DYNAMIC_DISPATCH(ClampF64)(x, lo, hi, out, n); }
float reduce(ReduceKind k, const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(ReduceF32)(k, x, n); }
double reduce(ReduceKind k, const double* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(ReduceF64)(k, x, n); }
void softmax_rows(const float* x, float* out, int64_t rows, int64_t n, bool log) {
  HWY_DYNAMIC_DISPATCH(SoftmaxF32)(x, out, rows, n, log);
}
void softmax_rows(const double* x, double* out, int64_t rows, int64_t n, bool log) {
  HWY_DYNAMIC_DISPATCH(SoftmaxF64)(x, out, rows, n, log);
}

}  // namespace fg::cpu
#endif  // HWY_ONCE
