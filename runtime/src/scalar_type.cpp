#include "funcgen/runtime/scalar_type.h"

#include <algorithm>

namespace fg {

const char* toString(ScalarType t) {
  switch (t) {
    case kBool: return "bool";
    case kLong: return "int64";
    case kFloat: return "float32";
    case kDouble: return "float64";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

size_t elementSize(ScalarType t) {
  switch (t) {
    case kBool: return 1;
    case kLong: return 8;
    case kFloat: return 4;
    case kDouble: return 8;
  }
  return 1;
}

ScalarType promoteTypes(ScalarType a, ScalarType b) {
  // The enum is ordered bool < int64 < float32 < float64, which is torch's lattice for these four.
  return static_cast<ScalarType>(std::max(static_cast<int>(a), static_cast<int>(b)));
}

Device::Device(const std::string& spec) : type_(kCPU), index_(-1) {
  std::string kind = spec;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    kind = spec.substr(0, colon);
    const std::string idx = spec.substr(colon + 1);
    if (idx.empty() || !std::all_of(idx.begin(), idx.end(), ::isdigit))
      detail::fail("Device", "invalid device string '", spec, "'");
    index_ = std::stoi(idx);
  }
  if (kind == "cpu") {
    type_ = kCPU;
  } else if (kind == "cuda") {
    type_ = kCUDA;
    if (index_ < 0) index_ = 0;
  } else {
    detail::fail("Device", "invalid device string '", spec, "' (expected cpu, cuda or cuda:N)");
  }
}

std::string Device::str() const {
  if (type_ == kCPU) return "cpu";
  return "cuda:" + std::to_string(index_ < 0 ? 0 : index_);
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.isFloatingPoint()) return os << s.toDouble();
  if (s.isBoolean()) return os << (s.toBool() ? "true" : "false");
  return os << s.toLong();
}

}  // namespace fg
