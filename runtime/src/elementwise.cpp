// Element-wise ops: broadcasting, dtype promotion, in-place and out= variants. The arithmetic
// runs in the SIMD kernels of cpu/kernels.cpp for float32/float64; integer and bool tensors take
// plain loops.
#include "elementwise.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "device.h"
#include "funcgen/runtime/ad.h"
#include "strided_loop.h"

namespace fg {
namespace detail {

namespace {
int category(ScalarType t) { return t == kBool ? 0 : t == kLong ? 1 : 2; }

// torch's combine_categories: the higher tier wins unless a lower tier has a higher category.
std::optional<ScalarType> combine(std::optional<ScalarType> higher, std::optional<ScalarType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (isFloatingType(*higher)) return higher;
  if (*higher == kBool || isFloatingType(*lower)) return promoteTypes(*higher, *lower);
  return higher;
}
}  // namespace

Operand wrap(const Scalar& s) {
  const ScalarType t = s.isFloatingPoint() ? kDouble : s.isBoolean() ? kBool : kLong;
  Tensor w = empty({}, TensorOptions(t));
  w.fill_(s);
  return Operand{w, true};
}

ScalarType result_type(std::initializer_list<Operand> operands) {
  std::optional<ScalarType> dim_result, zero_result, wrapped_result;
  for (const Operand& o : operands) {
    auto& slot = o.wrapped_number ? wrapped_result : o.tensor.dim() > 0 ? dim_result : zero_result;
    // A wrapped float takes the default dtype (float32), as a Python float does in torch.
    ScalarType t = o.tensor.dtype();
    if (o.wrapped_number && isFloatingType(t)) t = kFloat;
    slot = slot ? promoteTypes(*slot, t) : t;
  }
  return *combine(dim_result, combine(zero_result, wrapped_result));
}

bool can_cast(ScalarType from, ScalarType to) { return category(from) <= category(to); }

namespace {

// Innermost runs whose operands are not unit-stride (or broadcast) are staged through small
// contiguous buffers, so every element goes through the same SIMD kernel whatever the layout.
constexpr int64_t kStage = 256;

template <typename T>
bool unit_or_zero(int64_t byte_stride) {
  return byte_stride == 0 || byte_stride == static_cast<int64_t>(sizeof(T));
}

template <typename T>
void gather(T* dst, const char* src, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = *reinterpret_cast<const T*>(src + i * stride);
}
template <typename T>
void scatter(char* dst, int64_t stride, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(dst + i * stride) = src[i];
}

// Short runs of the four IEEE operations inline (the same correctly rounded result as the SIMD
// kernel, without its dispatch: a scale column times the rows of a small matrix is many runs of
// a few elements).
template <typename T, typename Op>
void short_loop(const T* a, int64_t sa, const T* b, int64_t sb, T* out, int64_t n, Op op) {
  // The stride patterns spelled out, so that the compiler vectorizes each.
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
  } else if (sa == 1) {
    const T y = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], y);
  } else if (sb == 1) {
    const T x = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = op(x, b[i]);
  } else {
    const T r = op(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = r;
  }
}
template <typename T>
bool short_run(cpu::BinaryKind kind, const T* a, int64_t sa, const T* b, int64_t sb, T* out, int64_t n) {
  if (n > 32) return false;
  switch (kind) {
    case cpu::BinaryKind::Add: short_loop(a, sa, b, sb, out, n, [](T x, T y) { return x + y; }); return true;
    case cpu::BinaryKind::Sub: short_loop(a, sa, b, sb, out, n, [](T x, T y) { return x - y; }); return true;
    case cpu::BinaryKind::Mul: short_loop(a, sa, b, sb, out, n, [](T x, T y) { return x * y; }); return true;
    case cpu::BinaryKind::Div: short_loop(a, sa, b, sb, out, n, [](T x, T y) { return x / y; }); return true;
    default: return false;
  }
}

template <typename T>
void binary_run_float(cpu::BinaryKind kind, char* const* p, const int64_t* s, int64_t n) {
  constexpr auto es = static_cast<int64_t>(sizeof(T));
  if (s[0] == es && unit_or_zero<T>(s[1]) && unit_or_zero<T>(s[2])) {
    if (short_run(kind, reinterpret_cast<const T*>(p[1]), s[1] / es, reinterpret_cast<const T*>(p[2]), s[2] / es,
                  reinterpret_cast<T*>(p[0]), n))
      return;
    cpu::binary(kind, reinterpret_cast<const T*>(p[1]), s[1] / es, reinterpret_cast<const T*>(p[2]),
                s[2] / es, reinterpret_cast<T*>(p[0]), n);
    return;
  }
  alignas(64) T a[kStage], b[kStage], o[kStage];
  for (int64_t i = 0; i < n; i += kStage) {
    const int64_t m = std::min(kStage, n - i);
    gather(a, p[1] + i * s[1], s[1], m);
    gather(b, p[2] + i * s[2], s[2], m);
    cpu::binary(kind, a, 1, b, 1, o, m);
    scatter(p[0] + i * s[0], s[0], o, m);
  }
}

std::vector<int64_t> byte_strides_for(const Tensor& t, IntArrayRef shape) {
  return broadcast_byte_strides(t.sizes(), t.strides(), t.element_size(), shape);
}

}  // namespace

void run_binary(cpu::BinaryKind kind, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (!out.is_cpu()) return device_binary(kind, out, a, b);
  const auto so = byte_strides_for(out, out.sizes());
  const auto sa = byte_strides_for(a, out.sizes());
  const auto sb = byte_strides_for(b, out.sizes());
  const std::array<char*, 3> base{byte_ptr(out), byte_ptr(a), byte_ptr(b)};
  const std::array<const int64_t*, 3> strides{so.data(), sa.data(), sb.data()};
  switch (out.dtype()) {
    case kFloat:
      strided_loop<3>(out.sizes(), base, strides,
                      [kind](char* const* p, const int64_t* s, int64_t n) { binary_run_float<float>(kind, p, s, n); });
      return;
    case kDouble:
      strided_loop<3>(out.sizes(), base, strides,
                      [kind](char* const* p, const int64_t* s, int64_t n) { binary_run_float<double>(kind, p, s, n); });
      return;
    case kLong:
    case kBool:
      dispatch_all(out.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using Wide = std::conditional_t<std::is_same_v<T, bool>, int64_t, T>;
        if constexpr (std::is_integral_v<T>) strided_loop<3>(out.sizes(), base, strides, [kind](char* const* p, const int64_t* s, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            const Wide x = *reinterpret_cast<const T*>(p[1] + i * s[1]);
            const Wide y = *reinterpret_cast<const T*>(p[2] + i * s[2]);
            const Wide r = kernels::apply_binary<Wide>(kind, x, y);
            *reinterpret_cast<T*>(p[0] + i * s[0]) = static_cast<T>(std::is_same_v<T, bool> ? r != 0 : r);
          }
        });
      });
      return;
  }
}

namespace {
template <typename T>
void unary_run_float(cpu::UnaryKind kind, char* const* p, const int64_t* s, int64_t n) {
  constexpr auto es = static_cast<int64_t>(sizeof(T));
  if (s[0] == es && s[1] == es) {
    cpu::unary(kind, reinterpret_cast<const T*>(p[1]), reinterpret_cast<T*>(p[0]), n);
    return;
  }
  alignas(64) T a[kStage], o[kStage];
  for (int64_t i = 0; i < n; i += kStage) {
    const int64_t m = std::min(kStage, n - i);
    gather(a, p[1] + i * s[1], s[1], m);
    cpu::unary(kind, a, o, m);
    scatter(p[0] + i * s[0], s[0], o, m);
  }
}
}  // namespace

void run_unary(cpu::UnaryKind kind, const Tensor& out, const Tensor& in) {
  if (!out.is_cpu()) {
    if (out.dtype() == kBool) return device_copy(out, in);  // abs and relu of bool are the identity
    return device_unary(kind, out, in);
  }
  const auto so = byte_strides_for(out, out.sizes());
  const auto si = byte_strides_for(in, out.sizes());
  const std::array<char*, 2> base{byte_ptr(out), byte_ptr(in)};
  const std::array<const int64_t*, 2> strides{so.data(), si.data()};
  switch (out.dtype()) {
    case kFloat:
      strided_loop<2>(out.sizes(), base, strides,
                      [kind](char* const* p, const int64_t* s, int64_t n) { unary_run_float<float>(kind, p, s, n); });
      return;
    case kDouble:
      strided_loop<2>(out.sizes(), base, strides,
                      [kind](char* const* p, const int64_t* s, int64_t n) { unary_run_float<double>(kind, p, s, n); });
      return;
    case kLong:
      strided_loop<2>(out.sizes(), base, strides, [kind](char* const* p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          const int64_t x = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
          const int64_t r = kernels::apply_unary_integer(kind, x);
          *reinterpret_cast<int64_t*>(p[0] + i * s[0]) = r;
        }
      });
      return;
    case kBool:
      copy_strided(out, in);  // abs and relu of bool are the identity
      return;
  }
}

}  // namespace detail

using namespace detail;
using cpu::BinaryKind;
using cpu::UnaryKind;

// ------------------------------------------------------------------ broadcasting
std::vector<int64_t> infer_size(IntArrayRef a, IntArrayRef b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) fail(op, "shapes ", a, " and ", b, " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  detail::checked_numel(out, op);
  return out;
}

Tensor broadcast_to(const Tensor& self, IntArrayRef size) { return self.expand(size); }

// ------------------------------------------------------------------ binary arithmetic
namespace {

struct BinaryPlan {
  std::vector<int64_t> shape;
  ScalarType compute;  // dtype the kernel runs in and the result has
  Device device;       // where it runs
  TensorOptions options() const { return TensorOptions(compute).device(device); }
  // An operand ready for the kernel: the compute dtype, on the device.
  Tensor operand(const Tensor& t) const { return t.to(device).to(compute); }
};

BinaryPlan plan_binary(BinaryKind kind, const Operand& a, const Operand& b, const char* op) {
  check_defined(a.tensor, op);
  check_defined(b.tensor, op, "other");
  BinaryPlan plan{infer_size(a.tensor.sizes(), b.tensor.sizes(), op), result_type({a, b}),
                  common_device({&a.tensor, &b.tensor}, op)};
  if (kind == BinaryKind::Div && !isFloatingType(plan.compute)) plan.compute = kFloat;  // true division
  if (kind == BinaryKind::Sub && (a.tensor.dtype() == kBool || b.tensor.dtype() == kBool)) {
    if (a.tensor.dtype() == b.tensor.dtype())
      fail(op, "subtraction of two bool tensors is not supported; use logical_xor or ne instead");
    fail(op, "subtraction with a bool tensor is not supported; use logical_not to invert a mask");
  }
  if (plan.compute == kBool && kind == BinaryKind::Pow) plan.compute = kLong;
  if (kind == BinaryKind::Pow && plan.compute == kLong) {
    // torch refuses integers to negative integer powers rather than truncating them.
    const Tensor& e = b.tensor;
    if (e.dtype() == kLong && e.numel() > 0 && (e.lt(0)).to(kLong).sum().item<int64_t>() > 0)
      fail(op, "integers to negative integer powers are not allowed");
  }
  return plan;
}

Tensor binary(BinaryKind kind, const Operand& a, const Operand& b, const char* op) {
  const BinaryPlan plan = plan_binary(kind, a, b, op);
  const Tensor& layout = a.tensor.sizes() == IntArrayRef(plan.shape) ? a.tensor : b.tensor;
  Tensor out = empty_like_layout(plan.shape, plan.options(), layout);
  run_binary(kind, out, plan.operand(a.tensor), plan.operand(b.tensor));
  return out;
}

// The out= form: computes straight into `out` when it already has the result's shape and dtype
// and shares no memory with the inputs; otherwise resizes or casts through assign_out.
Tensor& binary_out(Tensor& out, BinaryKind kind, const Operand& a, const Operand& b, const char* op) {
  check_defined(out, op, "out");
  const BinaryPlan plan = plan_binary(kind, a, b, op);
  if (out.sizes() != IntArrayRef(plan.shape) || out.dtype() != plan.compute || out.device() != plan.device ||
      shares_storage(out, a.tensor) || shares_storage(out, b.tensor))
    return assign_out(out, binary(kind, a, b, op), op);
  check_no_internal_overlap(out, op);
  run_binary(kind, out, plan.operand(a.tensor), plan.operand(b.tensor));
  return out;
}

// Writes a (op) b into self, which must have the broadcast shape and a dtype the result casts to.
const Tensor& binary_inplace(BinaryKind kind, const Tensor& self, const Operand& b, const char* op) {
  check_defined(self, op);
  check_no_internal_overlap(self, op);
  const Operand a{self, false};
  const BinaryPlan plan = plan_binary(kind, a, b, op);
  if (plan.device != self.device())
    fail(op, "cannot write a result on ", plan.device, " into a tensor on ", self.device());
  if (IntArrayRef(plan.shape) != self.sizes())
    fail(op, "output shape ", self.sizes(), " does not match the broadcast shape ", IntArrayRef(plan.shape));
  if (!can_cast(plan.compute, self.dtype()))
    fail(op, "result type ", plan.compute, " cannot be cast to the desired output type ", self.dtype());
  const Tensor other = plan.operand(b.tensor);
  // Same dtype and no partial overlap: compute straight into self, element i reading element i.
  const bool direct = plan.compute == self.dtype() &&
                      (!shares_storage(self, other) ||
                       (other.sizes() == self.sizes() && other.strides() == self.strides() &&
                        other.storage_offset() == self.storage_offset()));
  if (direct) {
    run_binary(kind, self, self, other);
  } else {
    Tensor tmp = empty(plan.shape, plan.options());
    run_binary(kind, tmp, self.to(plan.compute), other);
    copy_strided(self, tmp);
  }
  return self;
}

Operand scaled(const Tensor& other, const Scalar& alpha) {
  if (alpha.isFloatingPoint() ? alpha.toDouble() == 1.0 : alpha.toLong() == 1) return Operand{other, false};
  return Operand{mul(other, alpha), false};
}
Operand scaled(const Scalar& other, const Scalar& alpha) {
  if (alpha.isIntegral(false) && alpha.toLong() == 1) return wrap(other);
  if (alpha.isFloatingPoint() || other.isFloatingPoint()) return wrap(other.toDouble() * alpha.toDouble());
  return wrap(other.toLong() * alpha.toLong());
}

}  // namespace

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return binary(BinaryKind::Add, {self}, scaled(other, alpha), "add");
}
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return binary(BinaryKind::Add, {self}, scaled(other, alpha), "add");
}
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return binary(BinaryKind::Sub, {self}, scaled(other, alpha), "sub");
}
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return binary(BinaryKind::Sub, {self}, scaled(other, alpha), "sub");
}
Tensor mul(const Tensor& self, const Tensor& other) { return binary(BinaryKind::Mul, {self}, {other}, "mul"); }
Tensor mul(const Tensor& self, const Scalar& other) { return binary(BinaryKind::Mul, {self}, wrap(other), "mul"); }
Tensor div(const Tensor& self, const Tensor& other) { return binary(BinaryKind::Div, {self}, {other}, "div"); }
Tensor div(const Tensor& self, const Scalar& other) { return binary(BinaryKind::Div, {self}, wrap(other), "div"); }
Tensor maximum(const Tensor& self, const Tensor& other) {
  return binary(BinaryKind::Maximum, {self}, {other}, "maximum");
}
Tensor minimum(const Tensor& self, const Tensor& other) {
  return binary(BinaryKind::Minimum, {self}, {other}, "minimum");
}
Tensor pow(const Tensor& self, const Tensor& exponent) {
  return binary(BinaryKind::Pow, {self}, {exponent}, "pow");
}
Tensor pow(const Tensor& self, const Scalar& exponent) {
  check_defined(self, "pow");
  if (isFloatingType(self.dtype())) {
    // Exponents that have exact cheaper forms (torch does the same).
    const double e = exponent.toDouble();
    if (e == 1.0) return self.clone();
    if (e == 2.0) return mul(self, self);
    if (e == 0.5) return sqrt(self);
    if (e == -1.0) return Scalar(1.0) / self;
  }
  return binary(BinaryKind::Pow, {self}, wrap(exponent), "pow");
}
Tensor pow(const Scalar& self, const Tensor& exponent) {
  return binary(BinaryKind::Pow, wrap(self), {exponent}, "pow");
}
Tensor operator-(const Scalar& a, const Tensor& b) { return binary(BinaryKind::Sub, wrap(a), {b}, "sub"); }
Tensor operator/(const Scalar& a, const Tensor& b) { return binary(BinaryKind::Div, wrap(a), {b}, "div"); }

Tensor& add_out(Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return binary_out(out, BinaryKind::Add, {self}, scaled(other, alpha), "add_out");
}
Tensor& sub_out(Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return binary_out(out, BinaryKind::Sub, {self}, scaled(other, alpha), "sub_out");
}
Tensor& mul_out(Tensor& out, const Tensor& self, const Tensor& other) {
  return binary_out(out, BinaryKind::Mul, {self}, {other}, "mul_out");
}
Tensor& div_out(Tensor& out, const Tensor& self, const Tensor& other) {
  return binary_out(out, BinaryKind::Div, {self}, {other}, "div_out");
}
Tensor& pow_out(Tensor& out, const Tensor& self, const Tensor& exponent) {
  return binary_out(out, BinaryKind::Pow, {self}, {exponent}, "pow_out");
}
Tensor& pow_out(Tensor& out, const Tensor& self, const Scalar& exponent) {
  return assign_out(out, pow(self, exponent), "pow_out");
}
Tensor& maximum_out(Tensor& out, const Tensor& self, const Tensor& other) {
  return binary_out(out, BinaryKind::Maximum, {self}, {other}, "maximum_out");
}
Tensor& minimum_out(Tensor& out, const Tensor& self, const Tensor& other) {
  return binary_out(out, BinaryKind::Minimum, {self}, {other}, "minimum_out");
}

const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const {
  return binary_inplace(BinaryKind::Add, *this, scaled(other, alpha), "add_");
}
const Tensor& Tensor::add_(const Scalar& other, const Scalar& alpha) const {
  return binary_inplace(BinaryKind::Add, *this, scaled(other, alpha), "add_");
}
const Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) const {
  return binary_inplace(BinaryKind::Sub, *this, scaled(other, alpha), "sub_");
}
const Tensor& Tensor::sub_(const Scalar& other, const Scalar& alpha) const {
  return binary_inplace(BinaryKind::Sub, *this, scaled(other, alpha), "sub_");
}
const Tensor& Tensor::mul_(const Tensor& other) const { return binary_inplace(BinaryKind::Mul, *this, {other}, "mul_"); }
const Tensor& Tensor::mul_(const Scalar& other) const { return binary_inplace(BinaryKind::Mul, *this, wrap(other), "mul_"); }
const Tensor& Tensor::div_(const Tensor& other) const { return binary_inplace(BinaryKind::Div, *this, {other}, "div_"); }
const Tensor& Tensor::div_(const Scalar& other) const { return binary_inplace(BinaryKind::Div, *this, wrap(other), "div_"); }
const Tensor& Tensor::pow_(const Tensor& e) const { return binary_inplace(BinaryKind::Pow, *this, {e}, "pow_"); }
const Tensor& Tensor::pow_(const Scalar& e) const { return binary_inplace(BinaryKind::Pow, *this, wrap(e), "pow_"); }

// ------------------------------------------------------------------ unary
namespace {

struct UnaryInfo {
  const char* name;
  bool promotes_integers;  // exp, log, ... of an integer tensor give float32, as in torch
};

UnaryInfo unary_info(UnaryKind k) {
  switch (k) {
    case UnaryKind::Neg: return {"neg", false};
    case UnaryKind::Abs: return {"abs", false};
    case UnaryKind::Exp: return {"exp", true};
    case UnaryKind::Log: return {"log", true};
    case UnaryKind::Log1p: return {"log1p", true};
    case UnaryKind::Sqrt: return {"sqrt", true};
    case UnaryKind::Rsqrt: return {"rsqrt", true};
    case UnaryKind::Sin: return {"sin", true};
    case UnaryKind::Cos: return {"cos", true};
    case UnaryKind::Tan: return {"tan", true};
    case UnaryKind::Tanh: return {"tanh", true};
    case UnaryKind::Sigmoid: return {"sigmoid", true};
    case UnaryKind::Relu: return {"relu", false};
    case UnaryKind::Erf: return {"erf", true};
    case UnaryKind::Silu: return {"silu", true};
    case UnaryKind::LogSigmoid: return {"log_sigmoid", true};
    case UnaryKind::Expm1: return {"expm1", true};
  }
  return {"unary", true};
}

ScalarType unary_dtype(UnaryKind kind, const Tensor& self, const char* op) {
  check_defined(self, op);
  if (kind == UnaryKind::Neg && self.dtype() == kBool)
    fail(op, "negation of a bool tensor is not supported; use logical_not instead");
  return unary_info(kind).promotes_integers && !isFloatingType(self.dtype()) ? kFloat : self.dtype();
}

Tensor unary(UnaryKind kind, const Tensor& self, const char* op) {
  const ScalarType t = unary_dtype(kind, self, op);
  Tensor out = empty_like_layout(self.sizes(), self.options().dtype(t), self);
  run_unary(kind, out, self.to(t));
  return out;
}

// The out= form, as binary_out.
Tensor& unary_out(Tensor& out, UnaryKind kind, const Tensor& self, const char* op) {
  check_defined(out, op, "out");
  const ScalarType t = unary_dtype(kind, self, op);
  if (out.sizes() != self.sizes() || out.dtype() != t || out.device() != self.device() || shares_storage(out, self))
    return assign_out(out, unary(kind, self, op), op);
  check_no_internal_overlap(out, op);
  run_unary(kind, out, self.to(t));
  return out;
}

const Tensor& unary_inplace(UnaryKind kind, const Tensor& self, const char* op) {
  const ScalarType t = unary_dtype(kind, self, op);
  check_no_internal_overlap(self, op);
  if (t != self.dtype())
    fail(op, "result type ", t, " cannot be cast to the desired output type ", self.dtype());
  run_unary(kind, self, self);  // element i reads only element i: safe in place
  return self;
}

}  // namespace

namespace detail {
Tensor elementwise_unary(UnaryKind kind, const Tensor& self, const char* op) { return unary(kind, self, op); }
Tensor elementwise_binary(BinaryKind kind, const Operand& a, const Operand& b, const char* op) {
  return binary(kind, a, b, op);
}
}  // namespace detail

#define FG_DEFINE_UNARY(name, Kind)                                                        \
  Tensor name(const Tensor& self) { return unary(UnaryKind::Kind, self, #name); }          \
  Tensor& name##_(Tensor& self) {                                                          \
    unary_inplace(UnaryKind::Kind, self, #name "_");                                       \
    return self;                                                                           \
  }                                                                                        \
  Tensor& name##_out(Tensor& out, const Tensor& self) {                                    \
    return unary_out(out, UnaryKind::Kind, self, #name "_out");                            \
  }                                                                                        \
  Tensor Tensor::name() const { return unary(UnaryKind::Kind, *this, #name); }             \
  const Tensor& Tensor::name##_() const { return unary_inplace(UnaryKind::Kind, *this, #name "_"); }
FG_DEFINE_UNARY(neg, Neg)
FG_DEFINE_UNARY(abs, Abs)
FG_DEFINE_UNARY(exp, Exp)
FG_DEFINE_UNARY(log, Log)
FG_DEFINE_UNARY(log1p, Log1p)
FG_DEFINE_UNARY(sqrt, Sqrt)
FG_DEFINE_UNARY(rsqrt, Rsqrt)
FG_DEFINE_UNARY(sin, Sin)
FG_DEFINE_UNARY(cos, Cos)
FG_DEFINE_UNARY(tan, Tan)
FG_DEFINE_UNARY(tanh, Tanh)
FG_DEFINE_UNARY(sigmoid, Sigmoid)
FG_DEFINE_UNARY(relu, Relu)
FG_DEFINE_UNARY(erf, Erf)
FG_DEFINE_UNARY(silu, Silu)
FG_DEFINE_UNARY(log_sigmoid, LogSigmoid)
FG_DEFINE_UNARY(expm1, Expm1)
#undef FG_DEFINE_UNARY

Tensor operator-(const Tensor& self) { return neg(self); }

// ------------------------------------------------------------------ clamp
namespace {

ScalarType clamp_dtype(const Tensor& self, const std::optional<Scalar>& lo,
                       const std::optional<Scalar>& hi, const char* op) {
  check_defined(self, op);
  if (!lo && !hi) fail(op, "at least one of min and max must be given");
  ScalarType t = self.dtype();
  if (!isFloatingType(t) && ((lo && lo->isFloatingPoint()) || (hi && hi->isFloatingPoint()))) t = kFloat;
  if (t == kBool) t = kLong;
  return t;
}

void run_clamp(const Tensor& out, const Tensor& in, const std::optional<Scalar>& lo,
               const std::optional<Scalar>& hi) {
  if (!out.is_cpu()) return device_clamp(out, in, lo, hi);
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return;
    } else {
      const T l = lo ? lo->to<T>() : std::numeric_limits<T>::lowest();
      const T h = hi ? hi->to<T>() : std::numeric_limits<T>::max();
      const T low = std::is_floating_point_v<T> && !lo ? -std::numeric_limits<T>::infinity() : l;
      const T high = std::is_floating_point_v<T> && !hi ? std::numeric_limits<T>::infinity() : h;
      const auto so = broadcast_byte_strides(out.sizes(), out.strides(), sizeof(T), out.sizes());
      const auto si = broadcast_byte_strides(in.sizes(), in.strides(), sizeof(T), out.sizes());
      strided_loop<2>(out.sizes(), {byte_ptr(out), byte_ptr(in)}, {so.data(), si.data()},
                      [=](char* const* p, const int64_t* s, int64_t n) {
                        if constexpr (std::is_floating_point_v<T>) {
                          if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
                            cpu::clamp(reinterpret_cast<const T*>(p[1]), low, high, reinterpret_cast<T*>(p[0]), n);
                            return;
                          }
                        }
                        for (int64_t i = 0; i < n; ++i) {
                          const T v = *reinterpret_cast<const T*>(p[1] + i * s[1]);
                          T r = v;
                          if constexpr (std::is_floating_point_v<T>) {
                            if (!std::isnan(v)) r = std::min(std::max(v, low), high);
                          } else {
                            r = std::min(std::max(v, low), high);
                          }
                          *reinterpret_cast<T*>(p[0] + i * s[0]) = r;
                        }
                      });
    }
  });
}

}  // namespace

Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  const ScalarType t = clamp_dtype(self, min, max, "clamp");
  Tensor out = empty(self.sizes(), self.options().dtype(t));
  run_clamp(out, self.to(t), min, max);
  return out;
}
Tensor clamp_min(const Tensor& self, const Scalar& min) { return clamp(self, min, std::nullopt); }
Tensor clamp_max(const Tensor& self, const Scalar& max) { return clamp(self, std::nullopt, max); }
Tensor& clamp_(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  self.clamp_(min, max);
  return self;
}
Tensor& clamp_out(Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                  const std::optional<Scalar>& max) {
  return assign_out(out, clamp(self, min, max), "clamp_out");
}
const Tensor& Tensor::clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  const ScalarType t = clamp_dtype(*this, min, max, "clamp_");
  check_no_internal_overlap(*this, "clamp_");
  if (t != dtype()) fail("clamp_", "result type ", t, " cannot be cast to the desired output type ", dtype());
  run_clamp(*this, *this, min, max);
  return *this;
}
const Tensor& Tensor::clamp_min_(const Scalar& min) const { return clamp_(min, std::nullopt); }
const Tensor& Tensor::clamp_max_(const Scalar& max) const { return clamp_(std::nullopt, max); }
Tensor Tensor::clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return fg::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(const Scalar& min) const { return fg::clamp_min(*this, min); }
Tensor Tensor::clamp_max(const Scalar& max) const { return fg::clamp_max(*this, max); }

// ------------------------------------------------------------------ comparisons
namespace {

using Cmp = kernels::CompareKind;

void run_compare(Cmp c, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (!out.is_cpu()) return device_compare(c, out, a, b);
  const auto so = broadcast_byte_strides(out.sizes(), out.strides(), 1, out.sizes());
  const auto sa = broadcast_byte_strides(a.sizes(), a.strides(), a.element_size(), out.sizes());
  const auto sb = broadcast_byte_strides(b.sizes(), b.strides(), b.element_size(), out.sizes());
  dispatch_all(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    strided_loop<3>(out.sizes(), {byte_ptr(out), byte_ptr(a), byte_ptr(b)}, {so.data(), sa.data(), sb.data()},
                    [c](char* const* p, const int64_t* s, int64_t n) {
                      for (int64_t i = 0; i < n; ++i)
                        *reinterpret_cast<bool*>(p[0] + i * s[0]) =
                            kernels::apply_compare(c, *reinterpret_cast<const T*>(p[1] + i * s[1]),
                                    *reinterpret_cast<const T*>(p[2] + i * s[2]));
                    });
  });
}

Tensor comparison(Cmp c, const Operand& a, const Operand& b, const char* op) {
  check_defined(a.tensor, op);
  check_defined(b.tensor, op, "other");
  const Device device = common_device({&a.tensor, &b.tensor}, op);
  const auto shape = infer_size(a.tensor.sizes(), b.tensor.sizes(), op);
  const ScalarType t = result_type({a, b});
  Tensor out = empty(shape, TensorOptions(kBool).device(device));
  run_compare(c, out, a.tensor.to(device).to(t), b.tensor.to(device).to(t));
  return out;
}

const Tensor& comparison_inplace(Cmp c, const Tensor& self, const Operand& b, const char* op) {
  check_no_internal_overlap(self, op);
  Tensor r = comparison(c, {self}, b, op);
  if (r.sizes() != self.sizes())
    fail(op, "output shape ", self.sizes(), " does not match the broadcast shape ", r.sizes());
  copy_strided(self, r);
  return self;
}

}  // namespace

#define FG_DEFINE_COMPARE(name, C)                                                                 \
  Tensor name(const Tensor& self, const Tensor& other) { return comparison(Cmp::C, {self}, {other}, #name); } \
  Tensor name(const Tensor& self, const Scalar& other) { return comparison(Cmp::C, {self}, wrap(other), #name); } \
  Tensor& name##_out(Tensor& out, const Tensor& self, const Tensor& other) {                      \
    return assign_out(out, name(self, other), #name "_out");                                      \
  }                                                                                                \
  Tensor Tensor::name(const Tensor& other) const { return fg::name(*this, other); }               \
  Tensor Tensor::name(const Scalar& other) const { return fg::name(*this, other); }               \
  const Tensor& Tensor::name##_(const Tensor& other) const {                                      \
    return comparison_inplace(Cmp::C, *this, {other}, #name "_");                                 \
  }                                                                                                \
  const Tensor& Tensor::name##_(const Scalar& other) const {                                      \
    return comparison_inplace(Cmp::C, *this, wrap(other), #name "_");                             \
  }
FG_DEFINE_COMPARE(gt, Gt)
FG_DEFINE_COMPARE(lt, Lt)
FG_DEFINE_COMPARE(ge, Ge)
FG_DEFINE_COMPARE(le, Le)
FG_DEFINE_COMPARE(eq, Eq)
FG_DEFINE_COMPARE(ne, Ne)
FG_DEFINE_COMPARE(logical_and, And)
FG_DEFINE_COMPARE(logical_or, Or)
FG_DEFINE_COMPARE(logical_xor, Xor)
#undef FG_DEFINE_COMPARE

Tensor logical_not(const Tensor& self) { return comparison(Cmp::Eq, {self}, wrap(Scalar(false)), "logical_not"); }
Tensor Tensor::logical_not() const { return fg::logical_not(*this); }

// ------------------------------------------------------------------ where
namespace {
Tensor where_impl(const Tensor& cond, const Operand& a, const Operand& b) {
  check_defined(cond, "where");
  check_defined(a.tensor, "where");
  check_defined(b.tensor, "where");
  const Device device = common_device({&cond, &a.tensor, &b.tensor}, "where");
  if (cond.dtype() != kBool)
    fail("where", "expected a bool condition, got a tensor of dtype ", cond.dtype());
  const auto shape = infer_size(infer_size(cond.sizes(), a.tensor.sizes(), "where"), b.tensor.sizes(), "where");
  const ScalarType t = result_type({a, b});
  Tensor out = empty(shape, TensorOptions(t).device(device));
  const Tensor x = a.tensor.to(device).to(t), y = b.tensor.to(device).to(t);
  if (!device.is_cpu()) {
    device_where(out, cond.to(device), x, y);
    return out;
  }
  const auto so = broadcast_byte_strides(out.sizes(), out.strides(), out.element_size(), shape);
  const auto sc = broadcast_byte_strides(cond.sizes(), cond.strides(), 1, shape);
  const auto sx = broadcast_byte_strides(x.sizes(), x.strides(), x.element_size(), shape);
  const auto sy = broadcast_byte_strides(y.sizes(), y.strides(), y.element_size(), shape);
  dispatch_all(t, [&](auto tag) {
    using T = decltype(tag);
    strided_loop<4>(shape, {byte_ptr(out), byte_ptr(cond), byte_ptr(x), byte_ptr(y)},
                    {so.data(), sc.data(), sx.data(), sy.data()}, [](char* const* p, const int64_t* s, int64_t n) {
                      for (int64_t i = 0; i < n; ++i)
                        *reinterpret_cast<T*>(p[0] + i * s[0]) =
                            *reinterpret_cast<const bool*>(p[1] + i * s[1])
                                ? *reinterpret_cast<const T*>(p[2] + i * s[2])
                                : *reinterpret_cast<const T*>(p[3] + i * s[3]);
                    });
  });
  return out;
}
}  // namespace

Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return where_impl(c, {a}, {b}); }
Tensor where(const Tensor& c, const Scalar& a, const Tensor& b) { return where_impl(c, wrap(a), {b}); }
Tensor where(const Tensor& c, const Tensor& a, const Scalar& b) { return where_impl(c, {a}, wrap(b)); }
Tensor where(const Tensor& c, const Scalar& a, const Scalar& b) { return where_impl(c, wrap(a), wrap(b)); }
Tensor& where_out(Tensor& out, const Tensor& c, const Tensor& a, const Tensor& b) {
  return assign_out(out, where(c, a, b), "where_out");
}
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return fg::where(condition, *this, other);
}

// ------------------------------------------------------------------ checks
namespace {
// isclose of tensors on a device, from the device's ops in the CPU kernel's arithmetic (double).
Tensor isclose_on_device(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  const Tensor a = self.to(kDouble), b = other.to(kDouble);
  const double inf = std::numeric_limits<double>::infinity();
  Tensor close = eq(a, b);
  if (equal_nan) close = logical_or(close, logical_and(ne(a, a), ne(b, b)));
  const Tensor finite = logical_and(lt(abs(a), inf), lt(abs(b), inf));
  return logical_or(close, logical_and(finite, le(abs(a - b), abs(b) * rtol + atol)));
}
}  // namespace

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  check_defined(self, "isclose");
  check_defined(other, "isclose");
  const Device device = common_device({&self, &other}, "isclose");
  if (self.dtype() != other.dtype())
    fail("isclose", "expected both tensors to have the same dtype, got ", self.dtype(), " and ", other.dtype());
  const auto shape = infer_size(self.sizes(), other.sizes(), "isclose");
  if (!device.is_cpu()) return isclose_on_device(self, other, rtol, atol, equal_nan);
  Tensor out = empty(shape, TensorOptions(kBool));
  const auto so = broadcast_byte_strides(out.sizes(), out.strides(), 1, shape);
  const auto sa = broadcast_byte_strides(self.sizes(), self.strides(), self.element_size(), shape);
  const auto sb = broadcast_byte_strides(other.sizes(), other.strides(), other.element_size(), shape);
  dispatch_all(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    strided_loop<3>(shape, {byte_ptr(out), byte_ptr(self), byte_ptr(other)}, {so.data(), sa.data(), sb.data()},
                    [=](char* const* p, const int64_t* s, int64_t n) {
                      for (int64_t i = 0; i < n; ++i) {
                        const double a = static_cast<double>(*reinterpret_cast<const T*>(p[1] + i * s[1]));
                        const double b = static_cast<double>(*reinterpret_cast<const T*>(p[2] + i * s[2]));
                        bool close = a == b;
                        if (!close && std::isnan(a) && std::isnan(b)) close = equal_nan;
                        else if (!close && std::isfinite(a) && std::isfinite(b))
                          close = std::abs(a - b) <= atol + rtol * std::abs(b);
                        *reinterpret_cast<bool*>(p[0] + i * s[0]) = close;
                      }
                    });
  });
  return out;
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  check_defined(self, "allclose");
  check_defined(other, "allclose");
  if (self.dtype() != other.dtype())
    fail("allclose", "expected both tensors to have the same dtype, got ", self.dtype(), " and ", other.dtype());
  infer_size(self.sizes(), other.sizes(), "allclose");
  const Tensor close = isclose(self, other, rtol, atol, equal_nan);
  return close.numel() == close.to(kLong).sum().item<int64_t>();
}

bool equal(const Tensor& self, const Tensor& other) {
  check_defined(self, "equal");
  check_defined(other, "equal");
  common_device({&self, &other}, "equal");
  if (self.sizes() != other.sizes()) return false;
  const Tensor same = eq(self, other);
  return same.numel() == same.to(kLong).sum().item<int64_t>();
}

namespace ad {

Tensor relu_backward(const Tensor& g, const Tensor& output) {
  const char* op = "ad::relu_backward";
  check_defined(g, op, "g");
  check_defined(output, op, "output");
  dispatch_floating(g.scalar_type(), op, [](auto) {});
  if (g.scalar_type() != output.scalar_type())
    fail(op, "g (", g.scalar_type(), ") and output (", output.scalar_type(), ") must have the same dtype");
  return binary(BinaryKind::ReluBackward, {g}, {output}, op);
}

}  // namespace ad
}  // namespace fg
