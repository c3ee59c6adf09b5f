// Activations with parameters (torch.nn.functional's leaky_relu, elu, softplus, hardtanh, gelu): one
// pass over memory, the per-element math written once as a functor of the element type.
#include <cmath>

#include "funcgen/runtime/ops.h"
#include "internal.h"
#include "strided_loop.h"

namespace fg {

using namespace detail;

namespace {

// out = f(self) element by element, on float32 or float64 (torch raises for integer inputs too).
// On other devices the same function of the device's ops, on_device(self).
template <typename F, typename G>
Tensor map_floating(const Tensor& self, const char* op, F f, G on_device) {
  check_defined(self, op);
  if (!self.is_cpu()) {
    dispatch_floating(self.dtype(), op, [](auto) {});
    return on_device(self);
  }
  Tensor out = empty_like_layout(self.sizes(), TensorOptions(self.dtype()), self);
  dispatch_floating(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const auto so = broadcast_byte_strides(out.sizes(), out.strides(), sizeof(T), out.sizes());
    const auto si = broadcast_byte_strides(self.sizes(), self.strides(), sizeof(T), out.sizes());
    strided_loop<2>(out.sizes(), {byte_ptr(out), byte_ptr(self)}, {so.data(), si.data()},
                    [&](char* const* p, const int64_t* s, int64_t n) {
                      for (int64_t i = 0; i < n; ++i)
                        *reinterpret_cast<T*>(p[0] + i * s[0]) = f(*reinterpret_cast<const T*>(p[1] + i * s[1]));
                    });
  });
  return out;
}

}  // namespace

Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope) {
  const double slope = negative_slope.toDouble();
  return map_floating(
      self, "leaky_relu",
      [slope](auto x) {
        using T = decltype(x);
        return x > T(0) ? x : x * T(slope);
      },
      [slope](const Tensor& x) { return where(x > 0, x, x * slope); });
}

Tensor elu(const Tensor& self, const Scalar& alpha) {
  const double a = alpha.toDouble();
  return map_floating(
      self, "elu",
      [a](auto x) {
        using T = decltype(x);
        return x > T(0) ? x : T(a) * std::expm1(x);
      },
      [a](const Tensor& x) {
        const Tensor t = tanh(x * 0.5);  // expm1(x) = 2t / (1 - t), accurate near 0 where exp(x) - 1 is not
        return where(x > 0, x, (t * (2 * a)) / (1 - t));
      });
}

// log(1 + exp(beta x)) / beta, linear above threshold (as torch, for overflow).
Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  const double b = beta.toDouble(), limit = threshold.toDouble();
  return map_floating(
      self, "softplus",
      [b, limit](auto x) {
        using T = decltype(x);
        return x * T(b) > T(limit) ? x : std::log1p(std::exp(x * T(b))) / T(b);
      },
      [b, limit](const Tensor& x) { return where(x * b > limit, x, log1p(exp(x * b)) / b); });
}

// clamp's kernel (SIMD, NaN kept), on floating tensors as torch's hardtanh; its derivative differs
// from clamp's at the bounds (templates/derivatives.def).
Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  check_defined(self, "hardtanh");
  dispatch_floating(self.dtype(), "hardtanh", [](auto) {});
  if (min_val.toDouble() > max_val.toDouble())
    fail("hardtanh", "min_val (", min_val.toDouble(), ") must not be greater than max_val (", max_val.toDouble(), ")");
  return clamp(self, min_val, max_val);
}

Tensor gelu(const Tensor& self, const std::string& approximate) {
  if (approximate == "none")
    return map_floating(
        self, "gelu",
        [](auto x) {
          using T = decltype(x);
          return x * T(0.5) * (T(1) + std::erf(x * T(0.7071067811865476)));  // x * Phi(x)
        },
        [](const Tensor& x) { return x * 0.5 * (erf(x * 0.7071067811865476) + 1); });
  if (approximate == "tanh")
    return map_floating(
        self, "gelu",
        [](auto x) {
          using T = decltype(x);
          const T inner = T(0.7978845608028654) * (x + T(0.044715) * x * x * x);  // sqrt(2 / pi) (x + c x^3)
          return T(0.5) * x * (T(1) + std::tanh(inner));
        },
        [](const Tensor& x) { return x * 0.5 * (tanh((x + x * x * x * 0.044715) * 0.7978845608028654) + 1); });
  fail("gelu", "approximate must be 'none' or 'tanh', got '", approximate, "'");
}

Tensor logsigmoid(const Tensor& self) { return log_sigmoid(self); }

}  // namespace fg
