// Dtypes, devices, tensor options and the Scalar operand type, named as in libtorch.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <type_traits>

#include "funcgen/runtime/error.h"

namespace fg {

enum class ScalarType : int8_t { Bool = 0, Long = 1, Float = 2, Double = 3 };

constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kInt64 = ScalarType::Long;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kFloat64 = ScalarType::Double;

// torch's dtype names: "float32", "float64", "int64", "bool".
const char* toString(ScalarType t);
std::ostream& operator<<(std::ostream& os, ScalarType t);
size_t elementSize(ScalarType t);
inline bool isFloatingType(ScalarType t) { return t == kFloat || t == kDouble; }
inline bool isIntegralType(ScalarType t, bool include_bool) {
  return t == kLong || (include_bool && t == kBool);
}
// The dtype that holds both operands, as torch.promote_types.
ScalarType promoteTypes(ScalarType a, ScalarType b);

template <typename T>
struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = kFloat; };
template <> struct CppTypeToScalarType<double> { static constexpr ScalarType value = kDouble; };
template <> struct CppTypeToScalarType<int64_t> { static constexpr ScalarType value = kLong; };
template <> struct CppTypeToScalarType<bool> { static constexpr ScalarType value = kBool; };

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;

class Device {
 public:
  Device(DeviceType type, int index = -1) : type_(type), index_(index) {}  // NOLINT
  // "cpu", "cuda", "cuda:1".
  explicit Device(const std::string& spec);
  Device(const char* spec) : Device(std::string(spec)) {}  // NOLINT
  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == kCPU; }
  bool is_cuda() const { return type_ == kCUDA; }
  std::string str() const;
  friend bool operator==(const Device& a, const Device& b) {
    return a.type_ == b.type_ && (a.type_ == kCPU || a.index_ == b.index_ ||
                                  a.index_ < 0 || b.index_ < 0);
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }

 private:
  DeviceType type_;
  int index_;
};
std::ostream& operator<<(std::ostream& os, const Device& d);

// What a factory creates: dtype (default float32) and device (default cpu).
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType dtype) : dtype_(dtype), has_dtype_(true) {}  // NOLINT
  TensorOptions(Device device) : device_(device) {}                      // NOLINT
  TensorOptions(DeviceType device) : device_(device) {}                  // NOLINT
  TensorOptions dtype(ScalarType t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    o.has_dtype_ = true;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  // Accepted for source compatibility with libtorch; funcgen differentiates at compile time.
  TensorOptions requires_grad(bool = true) const { return *this; }
  ScalarType dtype() const { return dtype_; }
  bool has_dtype() const { return has_dtype_; }
  Device device() const { return device_; }

 private:
  ScalarType dtype_ = kFloat;
  bool has_dtype_ = false;
  Device device_ = Device(kCPU);
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }

// A number operand of an op (`x * 2`, `fg::full({2}, 1.5)`), as at::Scalar.
class Scalar {
 public:
  Scalar() : Scalar(int64_t{0}) {}
  Scalar(double v) : tag_(kDouble), d_(v) {}  // NOLINT
  Scalar(float v) : tag_(kDouble), d_(v) {}   // NOLINT
  Scalar(bool v) : tag_(kBool), i_(v) {}      // NOLINT
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Scalar(I v) : tag_(kLong), i_(static_cast<int64_t>(v)) {}  // NOLINT

  // kDouble for floating values, kLong for integers, kBool for booleans.
  ScalarType type() const { return tag_; }
  bool isFloatingPoint() const { return tag_ == kDouble; }
  bool isIntegral(bool include_bool) const { return tag_ == kLong || (include_bool && tag_ == kBool); }
  bool isBoolean() const { return tag_ == kBool; }
  template <typename T>
  T to() const {
    return tag_ == kDouble ? static_cast<T>(d_) : static_cast<T>(i_);
  }
  double toDouble() const { return to<double>(); }
  int64_t toLong() const { return to<int64_t>(); }
  bool toBool() const { return tag_ == kDouble ? d_ != 0.0 : i_ != 0; }

 private:
  ScalarType tag_;
  double d_ = 0;
  int64_t i_ = 0;
};
std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace fg
