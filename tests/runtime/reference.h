// An independent scalar reference for the runtime tests: a tiny N-d array of double with its own
// shape, strides and broadcasting index arithmetic, plus converters from and to fg::Tensor that
// read and write element by element through sizes()/strides()/data_ptr(), so that the reference
// depends on none of the runtime's copy, broadcast or reduction kernels.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "funcgen/funcgen.h"

namespace ref {

using Shape = std::vector<int64_t>;

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline Shape contiguous_strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i)
    st[i] = st[i + 1] * std::max<int64_t>(s[i + 1], 1);
  return st;
}

inline std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << ']';
  return os.str();
}

inline Shape to_shape(fg::IntArrayRef a) { return Shape(a.begin(), a.end()); }

inline int64_t wrap(int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n) throw std::logic_error("ref::wrap: dim out of range");
  return dim < 0 ? dim + n : dim;
}

// Calls f(idx) for every index of `shape` in row-major order.
template <typename F>
void for_each_index(const Shape& shape, F&& f) {
  int64_t n = numel_of(shape);
  if (n == 0) return;
  Shape idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(static_cast<const Shape&>(idx));
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// A dense row-major N-d array of double.
struct Array {
  Shape shape;
  std::vector<double> data;

  Array() = default;
  explicit Array(Shape s, double fill = 0.0) : shape(std::move(s)), data(numel_of(shape), fill) {}
  Array(Shape s, std::vector<double> d) : shape(std::move(s)), data(std::move(d)) {
    if (static_cast<int64_t>(data.size()) != numel_of(shape))
      throw std::logic_error("ref::Array: data size does not match shape " + shape_str(shape));
  }
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  int64_t dim() const { return static_cast<int64_t>(shape.size()); }
  Shape strides() const { return contiguous_strides_of(shape); }
  int64_t offset(const Shape& idx) const {
    Shape st = strides();
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0 || idx[i] >= shape[i]) throw std::logic_error("ref::Array: index out of range");
      off += idx[i] * st[i];
    }
    return off;
  }
  double& at(const Shape& idx) { return data[offset(idx)]; }
  double at(const Shape& idx) const { return data[offset(idx)]; }
};

// ------------------------------------------------------------------ broadcasting

// The broadcast shape of a and b; nullopt when they do not broadcast.
inline std::optional<Shape> try_broadcast(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

inline Shape broadcast(const Shape& a, const Shape& b) {
  auto r = try_broadcast(a, b);
  if (!r) throw std::logic_error("ref::broadcast: " + shape_str(a) + " vs " + shape_str(b));
  return *r;
}

// The element of `a` that index `out_idx` of a broadcast result reads.
inline double bget(const Array& a, const Shape& out_idx) {
  size_t lead = out_idx.size() - a.shape.size();
  Shape st = a.strides();
  int64_t off = 0;
  for (size_t i = 0; i < a.shape.size(); ++i) {
    int64_t v = a.shape[i] == 1 ? 0 : out_idx[lead + i];
    off += v * st[i];
  }
  return a.data[off];
}

inline Array map(const Array& a, const std::function<double(double)>& f) {
  Array r(a.shape);
  for (size_t i = 0; i < a.data.size(); ++i) r.data[i] = f(a.data[i]);
  return r;
}

inline Array map(const Array& a, const Array& b, const std::function<double(double, double)>& f) {
  Array r(broadcast(a.shape, b.shape));
  int64_t k = 0;
  for_each_index(r.shape, [&](const Shape& idx) { r.data[k++] = f(bget(a, idx), bget(b, idx)); });
  return r;
}

inline Array map(const Array& a, const Array& b, const Array& c,
                 const std::function<double(double, double, double)>& f) {
  Array r(broadcast(broadcast(a.shape, b.shape), c.shape));
  int64_t k = 0;
  for_each_index(r.shape, [&](const Shape& idx) {
    r.data[k++] = f(bget(a, idx), bget(b, idx), bget(c, idx));
  });
  return r;
}

inline Array expand_to(const Array& a, const Shape& shape) {
  Array r(shape);
  int64_t k = 0;
  for_each_index(shape, [&](const Shape& idx) { r.data[k++] = bget(a, idx); });
  return r;
}

// ------------------------------------------------------------------ reductions

// Normalized, sorted reduction dims; an empty list means every dim.
inline std::vector<int64_t> norm_dims(const std::vector<int64_t>& dims, int64_t ndim) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) out.push_back(wrap(d, ndim));
  std::sort(out.begin(), out.end());
  if (ndim == 0) out.clear();
  return out;
}

inline Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& dims, bool keepdim) {
  auto nd = norm_dims(dims, static_cast<int64_t>(shape.size()));
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    bool r = std::find(nd.begin(), nd.end(), d) != nd.end();
    if (!r) out.push_back(shape[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

// Reduces `a` over `dims`; f receives the reduced slice's values in row-major order of the reduced
// dims (for a single dim: in order along it).
inline Array reduce(const Array& a, const std::vector<int64_t>& dims, bool keepdim,
                    const std::function<double(const std::vector<double>&)>& f) {
  auto nd = norm_dims(dims, a.dim());
  Shape kept_shape, red_shape;
  std::vector<int64_t> kept_dims;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (std::find(nd.begin(), nd.end(), d) != nd.end()) red_shape.push_back(a.shape[d]);
    else {
      kept_shape.push_back(a.shape[d]);
      kept_dims.push_back(d);
    }
  }
  Array r(reduced_shape(a.shape, dims, keepdim));
  int64_t k = 0;
  auto visit = [&](const Shape& kidx) {
    std::vector<double> vals;
    for_each_index(red_shape, [&](const Shape& ridx) {
      Shape full(a.dim());
      size_t ki = 0, ri = 0;
      for (int64_t d = 0; d < a.dim(); ++d) {
        if (ki < kept_dims.size() && kept_dims[ki] == d) full[d] = kidx[ki++];
        else full[d] = ridx[ri++];
      }
      vals.push_back(a.at(full));
    });
    r.data[k++] = f(vals);
  };
  if (kept_shape.empty()) visit(Shape{});
  else for_each_index(kept_shape, visit);
  return r;
}

// Applies f to every 1-d line of `a` along `dim` (f maps a line to a line of the same length).
inline Array along_dim(const Array& a, int64_t dim,
                       const std::function<std::vector<double>(const std::vector<double>&)>& f) {
  Array r(a.shape);
  if (a.dim() == 0) {
    r.data = f(a.data);
    return r;
  }
  dim = wrap(dim, a.dim());
  Shape outer = a.shape;
  outer[dim] = 1;
  for_each_index(outer, [&](const Shape& oidx) {
    std::vector<double> line;
    Shape idx = oidx;
    for (int64_t i = 0; i < a.shape[dim]; ++i) {
      idx[dim] = i;
      line.push_back(a.at(idx));
    }
    auto out = f(line);
    for (int64_t i = 0; i < a.shape[dim]; ++i) {
      idx[dim] = i;
      r.at(idx) = out[i];
    }
  });
  return r;
}

inline double nan() { return std::numeric_limits<double>::quiet_NaN(); }
inline double inf() { return std::numeric_limits<double>::infinity(); }

inline double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
inline double abs_sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::fabs(x);
  return s;
}
// max with NaN propagation (torch.amax)
inline double max_of(const std::vector<double>& v) {
  double m = -inf();
  for (double x : v) {
    if (std::isnan(x)) return nan();
    m = std::max(m, x);
  }
  return m;
}
inline double min_of(const std::vector<double>& v) {
  double m = inf();
  for (double x : v) {
    if (std::isnan(x)) return nan();
    m = std::min(m, x);
  }
  return m;
}
// Index of the first maximum (the first NaN wins), as torch.argmax.
inline int64_t argmax_of(const std::vector<double>& v) {
  int64_t best = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    if (std::isnan(v[i])) return i;
    if (v[i] > v[best]) best = i;
  }
  return best;
}
inline int64_t argmin_of(const std::vector<double>& v) {
  int64_t best = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    if (std::isnan(v[i])) return i;
    if (v[i] < v[best]) best = i;
  }
  return best;
}
inline double logsumexp_of(const std::vector<double>& v) {
  double m = max_of(v);
  if (std::isnan(m)) return m;
  if (std::isinf(m)) return m;  // all -inf gives -inf; any +inf gives +inf
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}
inline std::vector<double> softmax_of(const std::vector<double>& v) {
  std::vector<double> r(v.size());
  double m = max_of(v);
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) s += std::exp(v[i] - m);
  for (size_t i = 0; i < v.size(); ++i) r[i] = std::exp(v[i] - m) / s;
  return r;
}
inline std::vector<double> log_softmax_of(const std::vector<double>& v) {
  std::vector<double> r(v.size());
  double lse = logsumexp_of(v);
  for (size_t i = 0; i < v.size(); ++i) r[i] = v[i] - lse;
  return r;
}
inline double pnorm_of(const std::vector<double>& v, double p) {
  if (std::isinf(p)) {
    double m = p > 0 ? 0.0 : inf();
    for (double x : v) m = p > 0 ? std::max(m, std::fabs(x)) : std::min(m, std::fabs(x));
    return m;
  }
  if (p == 0) {
    double c = 0;
    for (double x : v) c += x != 0;
    return c;
  }
  double s = 0;
  for (double x : v) s += std::pow(std::fabs(x), p);
  return std::pow(s, 1.0 / p);
}

// ------------------------------------------------------------------ tensors

// The value `v` takes once stored in `dtype` (float rounding, int64 truncation, bool).
inline double round_to(double v, fg::ScalarType dtype) {
  switch (dtype) {
    case fg::kFloat: return static_cast<double>(static_cast<float>(v));
    case fg::kDouble: return v;
    case fg::kLong: return static_cast<double>(static_cast<int64_t>(v));
    case fg::kBool: return v != 0 ? 1.0 : 0.0;
  }
  return v;
}

inline size_t elem_size(fg::ScalarType dtype) {
  switch (dtype) {
    case fg::kFloat: return 4;
    case fg::kDouble: return 8;
    case fg::kLong: return 8;
    case fg::kBool: return 1;
  }
  return 0;
}

inline double read_raw(const char* p, fg::ScalarType dtype) {
  switch (dtype) {
    case fg::kFloat: return *reinterpret_cast<const float*>(p);
    case fg::kDouble: return *reinterpret_cast<const double*>(p);
    case fg::kLong: return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case fg::kBool: return *reinterpret_cast<const bool*>(p) ? 1.0 : 0.0;
  }
  return 0;
}

inline void write_raw(char* p, fg::ScalarType dtype, double v) {
  switch (dtype) {
    case fg::kFloat: *reinterpret_cast<float*>(p) = static_cast<float>(v); break;
    case fg::kDouble: *reinterpret_cast<double*>(p) = v; break;
    case fg::kLong: *reinterpret_cast<int64_t*>(p) = static_cast<int64_t>(v); break;
    case fg::kBool: *reinterpret_cast<bool*>(p) = v != 0; break;
  }
}

// Reads every element of t through its sizes, strides and data pointer.
inline Array from_tensor(const fg::Tensor& t) {
  Shape shape = to_shape(t.sizes());
  Shape strides = to_shape(t.strides());
  if (strides.size() != shape.size()) throw std::logic_error("ref::from_tensor: strides/sizes rank differ");
  Array r(shape);
  if (r.numel() == 0) return r;
  const char* base = static_cast<const char*>(t.data_ptr());
  size_t es = elem_size(t.dtype());
  int64_t k = 0;
  for_each_index(shape, [&](const Shape& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    r.data[k++] = read_raw(base + off * static_cast<int64_t>(es), t.dtype());
  });
  return r;
}

// Writes `values` into t (whose shape must equal values.shape) element by element through strides.
inline void write_into(const fg::Tensor& t, const Array& values) {
  Shape shape = to_shape(t.sizes());
  if (shape != values.shape) throw std::logic_error("ref::write_into: shape mismatch");
  Shape strides = to_shape(t.strides());
  if (values.numel() == 0) return;
  char* base = static_cast<char*>(t.data_ptr());
  size_t es = elem_size(t.dtype());
  int64_t k = 0;
  for_each_index(shape, [&](const Shape& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    write_raw(base + off * static_cast<int64_t>(es), t.dtype(), values.data[k++]);
  });
}

// A new tensor of `dtype` holding `a`'s values (through fg::empty and raw element writes).
inline fg::Tensor to_tensor(const Array& a, fg::ScalarType dtype) {
  fg::Tensor t = fg::empty(a.shape, fg::dtype(dtype));
  write_into(t, a);
  return t;
}

inline Array round_all(const Array& a, fg::ScalarType dtype) {
  return map(a, [&](double v) { return round_to(v, dtype); });
}

// ------------------------------------------------------------------ comparison

struct Tol {
  double rtol;
  double atol;
};
inline Tol exact() { return {0.0, 0.0}; }
// For element-wise results: float32 kernels (SIMD transcendentals) are a few ULP off.
inline Tol tol_for(fg::ScalarType dtype) {
  switch (dtype) {
    case fg::kFloat: return {1e-5, 1e-6};
    case fg::kDouble: return {1e-12, 1e-13};
    default: return exact();
  }
}

inline bool close(double actual, double expected, Tol tol, double extra_atol = 0) {
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::isnan(actual)) return false;
  if (std::isinf(expected) || std::isinf(actual)) return actual == expected;
  return std::fabs(actual - expected) <= tol.atol + extra_atol + tol.rtol * std::fabs(expected);
}

// Checks dtype, shape and every value of `actual` against `expected`; `atol_per_elem`, when given,
// adds a per-element absolute tolerance (for reductions whose error scales with the summed input).
inline ::testing::AssertionResult tensor_matches(const fg::Tensor& actual, const Array& expected,
                                                 fg::ScalarType dtype, Tol tol,
                                                 const Array* atol_per_elem = nullptr) {
  if (!actual.defined()) return ::testing::AssertionFailure() << "result tensor is undefined";
  if (actual.dtype() != dtype)
    return ::testing::AssertionFailure() << "dtype " << actual.dtype() << ", expected " << dtype;
  Shape shape = to_shape(actual.sizes());
  if (shape != expected.shape)
    return ::testing::AssertionFailure()
           << "shape " << shape_str(shape) << ", expected " << shape_str(expected.shape);
  Array got = from_tensor(actual);
  int bad = 0;
  std::ostringstream os;
  os.precision(17);
  int64_t k = 0;
  for_each_index(shape, [&](const Shape& idx) {
    double extra = atol_per_elem ? atol_per_elem->data[k] : 0.0;
    if (!close(got.data[k], expected.data[k], tol, extra)) {
      if (bad < 8)
        os << "\n  at " << shape_str(idx) << ": got " << got.data[k] << ", expected " << expected.data[k];
      ++bad;
    }
    ++k;
  });
  if (bad)
    return ::testing::AssertionFailure() << bad << " of " << got.numel() << " elements differ (rtol "
                                         << tol.rtol << ", atol " << tol.atol << ")" << os.str();
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult arrays_equal(const Array& a, const Array& b) {
  if (a.shape != b.shape)
    return ::testing::AssertionFailure() << "shape " << shape_str(a.shape) << " vs " << shape_str(b.shape);
  for (size_t i = 0; i < a.data.size(); ++i) {
    bool same = a.data[i] == b.data[i] || (std::isnan(a.data[i]) && std::isnan(b.data[i]));
    if (!same)
      return ::testing::AssertionFailure() << "element " << i << ": " << a.data[i] << " vs " << b.data[i];
  }
  return ::testing::AssertionSuccess();
}

// ------------------------------------------------------------------ inputs

class Rng {
 public:
  explicit Rng(uint64_t seed = 12345) : gen_(seed) {}
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  int64_t integer(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }
  std::mt19937_64& engine() { return gen_; }

 private:
  std::mt19937_64 gen_;
};

// Where random inputs are drawn from. `integral`: whole numbers only (ties for comparisons);
// `min_abs`: keep |v| at least this (denominators).
struct Domain {
  double lo = -2.0;
  double hi = 2.0;
  bool integral = false;
  double min_abs = 0.0;
};

inline double draw(Rng& rng, const Domain& d, fg::ScalarType dtype) {
  if (dtype == fg::kBool) return static_cast<double>(rng.integer(0, 1));
  bool integral = d.integral || dtype == fg::kLong;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    double v = integral ? static_cast<double>(rng.integer(static_cast<int64_t>(std::ceil(d.lo)),
                                                          static_cast<int64_t>(std::floor(d.hi))))
                        : rng.uniform(d.lo, d.hi);
    v = round_to(v, dtype);
    if (std::fabs(v) >= d.min_abs) return v;
  }
  throw std::logic_error("ref::draw: domain has no admissible value");
}

inline Array random_array(const Shape& shape, Rng& rng, const Domain& d, fg::ScalarType dtype) {
  Array a(shape);
  for (double& v : a.data) v = draw(rng, d, dtype);
  return a;
}

// A dtype's short name, for parameterized test names.
inline const char* dtype_tag(fg::ScalarType t) {
  switch (t) {
    case fg::kFloat: return "f32";
    case fg::kDouble: return "f64";
    case fg::kLong: return "i64";
    case fg::kBool: return "bool";
  }
  return "x";
}

// How an input tensor is laid out in memory.
enum class Layout { Contiguous, Transposed, Strided, Offset, Expanded, Diagonal };

inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous: return "Contiguous";
    case Layout::Transposed: return "Transposed";
    case Layout::Strided: return "Strided";
    case Layout::Offset: return "Offset";
    case Layout::Expanded: return "Expanded";
    case Layout::Diagonal: return "Diagonal";
  }
  return "?";
}

inline const std::vector<Layout>& all_layouts() {
  static const std::vector<Layout> v = {Layout::Contiguous, Layout::Transposed, Layout::Strided,
                                        Layout::Offset,     Layout::Expanded,   Layout::Diagonal};
  return v;
}
// The layouts a tensor written in place may have (no internal overlap).
inline const std::vector<Layout>& writable_layouts() {
  static const std::vector<Layout> v = {Layout::Contiguous, Layout::Transposed, Layout::Strided,
                                        Layout::Offset, Layout::Diagonal};
  return v;
}

// A tensor `view` of shape `shape` laid out as `layout`, living in the contiguous tensor `base`.
struct Input {
  fg::Tensor base;
  fg::Tensor view;
};

// Builds a tensor of the given shape and layout with random values: the base is allocated with
// fg::empty, filled with raw writes, and the view made with the runtime's view ops (transpose,
// slice with step 2, narrow/select, expand, diagonal). Its values are read back with from_tensor.
inline Input make_input(const Shape& shape, fg::ScalarType dtype, Layout layout, Rng& rng,
                        const Domain& dom = Domain{}) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  Shape base_shape = shape;
  switch (layout) {
    case Layout::Contiguous: break;
    case Layout::Transposed:
      if (nd >= 2) std::swap(base_shape[nd - 1], base_shape[nd - 2]);
      else if (nd == 1) base_shape[0] *= 2;
      break;
    case Layout::Strided:
      if (nd >= 1) base_shape[nd - 1] *= 2;
      break;
    case Layout::Offset:
      if (nd == 0) base_shape = {2};
      else base_shape[0] += 1;
      break;
    case Layout::Expanded:
      for (int64_t d = 0; d < nd; ++d)
        if (base_shape[d] > 1) {
          base_shape[d] = 1;
          break;
        }
      break;
    case Layout::Diagonal:
      if (nd >= 1) base_shape.push_back(shape[nd - 1]);
      break;
  }
  fg::Tensor base = fg::empty(base_shape, fg::dtype(dtype));
  write_into(base, random_array(base_shape, rng, dom, dtype));
  fg::Tensor view = base;
  switch (layout) {
    case Layout::Contiguous: break;
    case Layout::Transposed:
      if (nd >= 2) view = base.transpose(-1, -2);
      else if (nd == 1) view = base.slice(0, 0, std::nullopt, 2);
      break;
    case Layout::Strided:
      if (nd >= 1) view = base.slice(-1, 0, std::nullopt, 2);
      break;
    case Layout::Offset:
      view = nd == 0 ? base.select(0, 1) : base.narrow(0, 1, shape[0]);
      break;
    case Layout::Expanded: view = base.expand(shape); break;
    case Layout::Diagonal:
      if (nd >= 1) view = base.diagonal(0, -2, -1);
      break;
  }
  if (to_shape(view.sizes()) != shape)
    throw std::logic_error(std::string("ref::make_input: ") + layout_name(layout) + " view has shape " +
                           shape_str(to_shape(view.sizes())) + ", wanted " + shape_str(shape));
  return {base, view};
}

// What `in.base` holds after `in.view`'s elements were overwritten with `view_values` and nothing
// else changed: the write-through a correct in-place op on the view must produce.
inline Array base_after_view_write(const Input& in, const Array& base_before, const Array& view_values) {
  if (view_values.numel() == 0) return base_before;
  if (to_shape(in.base.strides()) != contiguous_strides_of(to_shape(in.base.sizes())))
    throw std::logic_error("ref::base_after_view_write: base not contiguous");
  Array r = base_before;
  Shape strides = to_shape(in.view.strides());
  int64_t start = in.view.storage_offset() - in.base.storage_offset();
  int64_t k = 0;
  for_each_index(view_values.shape, [&](const Shape& idx) {
    int64_t off = start;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    r.data.at(off) = view_values.data[k++];
  });
  return r;
}

}  // namespace ref

// ------------------------------------------------------------------ assertions

#define EXPECT_TENSOR_NEAR(actual, expected, dtype, tol) \
  EXPECT_TRUE(::ref::tensor_matches((actual), (expected), (dtype), (tol)))
#define ASSERT_TENSOR_NEAR(actual, expected, dtype, tol) \
  ASSERT_TRUE(::ref::tensor_matches((actual), (expected), (dtype), (tol)))
#define EXPECT_TENSOR_EQ(actual, expected, dtype) \
  EXPECT_TRUE(::ref::tensor_matches((actual), (expected), (dtype), ::ref::exact()))

// Runs `stmt` and checks that it throws fg::Error whose what() is exactly `msg`.
#define EXPECT_FG_ERROR(stmt, msg)                                                        \
  do {                                                                                    \
    try {                                                                                 \
      stmt;                                                                               \
      ADD_FAILURE() << "expected fg::Error \"" << (msg) << "\" from: " #stmt;             \
    } catch (const fg::Error& fg_error_) {                                                \
      EXPECT_EQ(std::string(fg_error_.what()), std::string(msg)) << "from: " #stmt;       \
    } catch (const std::exception& other_) {                                              \
      ADD_FAILURE() << "expected fg::Error, got another exception: " << other_.what()     \
                    << " from: " #stmt;                                                   \
    } catch (...) {                                                                       \
      ADD_FAILURE() << "expected fg::Error, got a non-std exception from: " #stmt;        \
    }                                                                                     \
  } while (0)

// Runs `stmt` and checks that it throws fg::Error (any message).
#define EXPECT_ANY_FG_ERROR(stmt)                                                         \
  do {                                                                                    \
    try {                                                                                 \
      stmt;                                                                               \
      ADD_FAILURE() << "expected fg::Error from: " #stmt;                                 \
    } catch (const fg::Error&) {                                                          \
    } catch (const std::exception& other_) {                                              \
      ADD_FAILURE() << "expected fg::Error, got another exception: " << other_.what()     \
                    << " from: " #stmt;                                                   \
    }                                                                                     \
  } while (0)

namespace ref {

// ------------------------------------------------------------------ *_out checks

// Runs an *_out function three ways: an out of the right shape (written in place, same storage),
// an out of the wrong shape (resized, as torch does) and a non-contiguous out of the right shape
// (written through into its base, elements outside the view untouched).
inline void check_out_variants(const std::function<const fg::Tensor*(fg::Tensor&)>& call,
                               const Array& expected, fg::ScalarType dtype, Tol tol) {
  {
    SCOPED_TRACE("out of the right shape");
    fg::Tensor out = fg::zeros(expected.shape, fg::dtype(dtype));
    const void* ptr = out.data_ptr();
    const fg::Tensor* ret = call(out);
    EXPECT_EQ(ret, &out) << "*_out must return out";
    EXPECT_EQ(out.data_ptr(), ptr) << "an out of the right shape is written in place";
    EXPECT_TENSOR_NEAR(out, expected, dtype, tol);
  }
  for (Shape wrong : {Shape{0}, Shape{5, 7, 3}}) {
    SCOPED_TRACE("out of the wrong shape " + shape_str(wrong));
    if (wrong == expected.shape) continue;
    fg::Tensor out = fg::zeros(wrong, fg::dtype(dtype));
    const fg::Tensor* ret = call(out);
    EXPECT_EQ(ret, &out);
    EXPECT_TENSOR_NEAR(out, expected, dtype, tol);
  }
  if (!expected.shape.empty()) {
    SCOPED_TRACE("non-contiguous out (step-2 slice)");
    Shape base_shape = expected.shape;
    base_shape.back() *= 2;
    fg::Tensor base = fg::full(base_shape, -7, fg::dtype(dtype));
    fg::Tensor out = base.slice(-1, 0, std::nullopt, 2);
    call(out);
    EXPECT_TENSOR_NEAR(out, expected, dtype, tol);
    EXPECT_TENSOR_NEAR(base.slice(-1, 1, std::nullopt, 2), Array(expected.shape, round_to(-7, dtype)), dtype,
                       exact());
  }
}

}  // namespace ref
