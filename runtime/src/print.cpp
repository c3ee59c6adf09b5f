// operator<< in the layout of Python's repr(torch.Tensor): aligned columns, '...' past 1000
// elements, the dtype named when it is not the default for its kind.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "internal.h"

namespace fg {
using namespace detail;

namespace {

constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kEdgeItems = 3;

struct Formatter {
  ScalarType dtype;
  bool scientific = false;
  bool integral_floats = false;  // every value is a whole number: print "1." like torch
  int width = 1;

  std::string format(double v) const {
    std::ostringstream os;
    if (dtype == kBool) {
      os << (v != 0 ? "True" : "False");
    } else if (dtype == kLong) {
      os << static_cast<int64_t>(v);
    } else if (std::isnan(v)) {
      os << "nan";
    } else if (std::isinf(v)) {
      os << (v > 0 ? "inf" : "-inf");
    } else if (scientific) {
      os << std::scientific << std::setprecision(4) << v;
    } else if (integral_floats) {
      os << std::fixed << std::setprecision(0) << v << '.';
    } else {
      os << std::fixed << std::setprecision(4) << v;
    }
    return os.str();
  }
};

double value_at(const Tensor& t, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.stride(static_cast<int64_t>(d));
  return dispatch_all(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(static_cast<const T*>(t.data_ptr())[off]);
  });
}

// Indices shown along a dim of size n.
std::vector<int64_t> shown(int64_t n, bool summarize) {
  std::vector<int64_t> out;
  if (!summarize || n <= 2 * kEdgeItems) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
  } else {
    for (int64_t i = 0; i < kEdgeItems; ++i) out.push_back(i);
    out.push_back(-1);  // the ellipsis
    for (int64_t i = n - kEdgeItems; i < n; ++i) out.push_back(i);
  }
  return out;
}

void collect(const Tensor& t, std::vector<int64_t>& idx, bool summarize, std::vector<double>& out) {
  const size_t d = idx.size();
  if (static_cast<int64_t>(d) == t.dim()) {
    out.push_back(value_at(t, idx));
    return;
  }
  for (int64_t i : shown(t.size(static_cast<int64_t>(d)), summarize)) {
    if (i < 0) continue;
    idx.push_back(i);
    collect(t, idx, summarize, out);
    idx.pop_back();
  }
}

void emit(std::ostream& os, const Tensor& t, std::vector<int64_t>& idx, bool summarize,
          const Formatter& f, int indent) {
  const int64_t d = static_cast<int64_t>(idx.size());
  if (d == t.dim()) {
    const std::string s = f.format(value_at(t, idx));
    os << std::string(std::max<int>(0, f.width - static_cast<int>(s.size())), ' ') << s;
    return;
  }
  os << '[';
  const auto items = shown(t.size(d), summarize);
  const bool last_dim = d == t.dim() - 1;
  for (size_t k = 0; k < items.size(); ++k) {
    if (k > 0) {
      os << ',';
      if (last_dim) {
        os << ' ';
      } else {
        os << std::string(static_cast<size_t>(t.dim() - d - 1), '\n') << std::string(indent + d + 1, ' ');
      }
    }
    if (items[k] < 0) {
      os << (last_dim ? " ..." : "...");  // as Python's repr: two spaces after the comma in a row
      continue;
    }
    idx.push_back(items[k]);
    emit(os, t, idx, summarize, f, indent);
    idx.pop_back();
  }
  os << ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  if (!t.is_cpu()) {  // torch's form: the values, then device='cuda:0'
    std::ostringstream values;
    values << t.cpu();
    std::string text = values.str();
    text.insert(text.size() - 1, ", device='" + t.device().str() + "'");
    return os << text;
  }
  const bool summarize = t.numel() > kSummarizeAbove;
  Formatter f{t.dtype()};
  std::vector<double> values;
  std::vector<int64_t> idx;
  collect(t, idx, summarize, values);
  if (isFloatingType(t.dtype())) {
    double max_abs = 0, min_abs = INFINITY;
    bool all_integral = true;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      max_abs = std::max(max_abs, std::abs(v));
      if (v != 0) min_abs = std::min(min_abs, std::abs(v));
      if (v != std::floor(v)) all_integral = false;
    }
    f.integral_floats = all_integral && max_abs < 1e8;
    f.scientific = !f.integral_floats && (max_abs >= 1e8 || (min_abs < 1e-4 && min_abs > 0));
  }
  for (double v : values) f.width = std::max<int>(f.width, static_cast<int>(f.format(v).size()));
  os << "tensor(";
  if (t.numel() == 0) {
    os << "[]";
  } else {
    emit(os, t, idx, summarize, f, 7);
  }
  const bool default_dtype = t.dtype() == kFloat || t.dtype() == kLong || t.dtype() == kBool;
  if (t.numel() == 0 && t.dim() != 1) os << ", size=" << t.sizes();
  if (!default_dtype) os << ", dtype=" << t.dtype();
  return os << ')';
}

}  // namespace fg
