// Reductions over dims (sum, mean, amax, amin, max/min with indices, argmax, logsumexp, norm)
// and softmax. The input is brought to an [A, R, B] layout (R the reduced extent): rows with
// B == 1 reduce in the SIMD row kernel, B > 1 accumulates whole rows with the SIMD binary kernel.
#include <cmath>
#include <limits>
#include <numeric>

#include "device.h"
#include "elementwise.h"
#include "strided_loop.h"

namespace fg {
using namespace detail;
using cpu::ReduceKind;

namespace {

struct ReducePlan {
  std::vector<bool> reduced;        // per input dim
  std::vector<int64_t> out_shape;   // with keepdim applied
  std::vector<int64_t> keep_shape;  // reduced dims as 1 (the keepdim shape)
};

ReducePlan plan_reduce(const Tensor& self, IntArrayRef dims, bool keepdim, const char* op) {
  ReducePlan p;
  p.reduced.assign(self.dim(), dims.empty());
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, self.dim(), op);
    if (self.dim() == 0) continue;
    if (p.reduced[w]) fail(op, "dim ", w, " appears multiple times in the list of dims ", dims);
    p.reduced[w] = true;
  }
  for (int64_t i = 0; i < self.dim(); ++i) {
    p.keep_shape.push_back(p.reduced[i] ? 1 : self.size(i));
    if (!p.reduced[i] || keepdim) p.out_shape.push_back(p.keep_shape.back());
  }
  return p;
}

template <typename T>
T combine(ReduceKind k, T a, T b) {
  if (k == ReduceKind::Sum) return a + b;
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return k == ReduceKind::Max ? (a > b ? a : b) : (a < b ? a : b);
}

template <typename T>
T reduce_row(ReduceKind k, const T* x, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    return cpu::reduce(k, x, n);
  } else {
    T acc = k == ReduceKind::Sum ? T(0) : x[0];
    for (int64_t i = k == ReduceKind::Sum ? 0 : 1; i < n; ++i) acc = combine(k, acc, x[i]);
    return acc;
  }
}

// x: contiguous [A, R, B]; out: contiguous [A, B].
template <typename T>
void reduce_arb(ReduceKind k, const T* x, T* out, int64_t A, int64_t R, int64_t B) {
  const bool threads = A * R * B >= 2 * kParallelGrain && A > 1 && !omp_in_parallel();
  if (B == 1) {
    parallel_for(0, A, threads, [&](int64_t a) { out[a] = reduce_row(k, x + a * R, R); });
    return;
  }
  parallel_for(0, A, threads, [&](int64_t a) {
    T* o = out + a * B;
    const T* xa = x + a * R * B;
    std::copy(xa, xa + B, o);
    for (int64_t r = 1; r < R; ++r) {
      const T* row = xa + r * B;
      if constexpr (std::is_floating_point_v<T>) {
        const auto kind = k == ReduceKind::Sum   ? cpu::BinaryKind::Add
                          : k == ReduceKind::Max ? cpu::BinaryKind::Maximum
                                                 : cpu::BinaryKind::Minimum;
        cpu::binary(kind, o, 1, row, 1, o, B);
      } else {
        for (int64_t b = 0; b < B; ++b) o[b] = combine(k, o[b], row[b]);
      }
    }
  });
}

// Reduces `x` (already in the compute dtype) over plan.reduced into a tensor of keep_shape.
Tensor reduce_impl(ReduceKind k, const Tensor& x, const ReducePlan& p, const char* op) {
  Tensor out = empty(p.keep_shape, x.options());
  const int64_t nd = x.dim();
  int64_t R = 1;
  for (int64_t i = 0; i < nd; ++i)
    if (p.reduced[i]) R *= x.size(i);
  if (R == 0) {
    if (k != ReduceKind::Sum) fail(op, "cannot reduce over a zero-size dimension (input shape ", x.sizes(), ")");
    out.zero_();
    return out;
  }
  if (out.numel() == 0) return out;
  if (R == 1) {  // only size-1 dims reduced (a sum_to of a per-example bias): a copy, not A reductions
    out.copy_(x);
    return out;
  }
  // The reduced dims (ignoring size-1 dims) form one block [first, last] of a contiguous input?
  int64_t first = -1, last = -1;
  bool block = true;
  for (int64_t i = 0; i < nd; ++i) {
    if (!p.reduced[i] || x.size(i) == 1) continue;
    if (first < 0)
      first = i;
    else if (last != i - 1) {
      // a kept dim of size > 1 lies between two reduced dims
      for (int64_t j = last + 1; j < i; ++j)
        if (x.size(j) != 1) block = false;
    }
    last = i;
  }
  Tensor src = x;
  int64_t A = 1, B = 1;
  if (block && x.is_contiguous() && first >= 0) {
    for (int64_t i = 0; i < first; ++i) A *= x.size(i);
    for (int64_t i = last + 1; i < nd; ++i) B *= x.size(i);
  } else {
    // Move the reduced dims to the end: [kept..., reduced...] -> [A, R].
    std::vector<int64_t> order;
    for (int64_t i = 0; i < nd; ++i)
      if (!p.reduced[i]) order.push_back(i);
    for (int64_t i = 0; i < nd; ++i)
      if (p.reduced[i]) order.push_back(i);
    src = x.permute(order).contiguous();
    A = out.numel();
  }
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      reduce_arb<T>(k, static_cast<const T*>(src.data_ptr()), static_cast<T*>(out.data_ptr()), A, R, B);
  });
  return out;
}

Tensor finish(const Tensor& kept, const ReducePlan& p, bool keepdim) { return keepdim ? kept : kept.view(p.out_shape); }

Tensor reduce(ReduceKind k, const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype,
              const char* op) {
  check_defined(self, op);
  const ReducePlan p = plan_reduce(self, dims, keepdim, op);
  ScalarType t = dtype ? *dtype : self.dtype();
  if (k == ReduceKind::Sum && !dtype && !isFloatingType(t)) t = kLong;  // sums of ints/bools are int64
  if (k != ReduceKind::Sum && t == kBool) t = kLong;
  Tensor r;
  if (self.is_cpu()) {
    r = reduce_impl(k, self.to(t), p, op);
  } else {
    std::vector<int64_t> reduced;
    for (int64_t d = 0; d < self.dim(); ++d)
      if (p.reduced[d]) {
        if (k != ReduceKind::Sum && self.size(d) == 0)
          fail(op, "cannot reduce over a zero-size dimension (input shape ", self.sizes(), ")");
        reduced.push_back(d);
      }
    r = device_reduce(k, self.to(t), reduced, op).view(p.keep_shape);
  }
  if (k != ReduceKind::Sum && self.dtype() == kBool) r = r.to(kBool);
  return finish(r, p, keepdim);
}

}  // namespace

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return reduce(ReduceKind::Sum, self, {}, false, dtype, "sum");
}
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return reduce(ReduceKind::Sum, self, dim, keepdim, dtype, "sum");
}

Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  check_defined(self, "mean");
  const ScalarType t = dtype ? *dtype : self.dtype();
  if (!isFloatingType(t))
    fail("mean", "could not infer the output dtype: the input must be floating point, got ", t,
         " (pass a floating dtype)");
  const ReducePlan p = plan_reduce(self, dim, keepdim, "mean");
  int64_t count = 1;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (p.reduced[i]) count *= self.size(i);
  Tensor s = reduce(ReduceKind::Sum, self, dim, keepdim, t, "mean");
  return div(s, static_cast<double>(count));
}
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) { return mean(self, {}, false, dtype); }

Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return reduce(ReduceKind::Max, self, dim, keepdim, std::nullopt, "amax");
}
Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return reduce(ReduceKind::Min, self, dim, keepdim, std::nullopt, "amin");
}
Tensor max(const Tensor& self) {
  if (self.defined() && self.numel() == 0)
    fail("max", "cannot compute the max of an empty tensor (shape ", self.sizes(), ")");
  return reduce(ReduceKind::Max, self, {}, false, std::nullopt, "max");
}
Tensor min(const Tensor& self) {
  if (self.defined() && self.numel() == 0)
    fail("min", "cannot compute the min of an empty tensor (shape ", self.sizes(), ")");
  return reduce(ReduceKind::Min, self, {}, false, std::nullopt, "min");
}
Tensor max(const Tensor& self, const Tensor& other) { return maximum(self, other); }
Tensor min(const Tensor& self, const Tensor& other) { return minimum(self, other); }

namespace {

// Values and first indices of the extreme along `dim` (NaN counts as the extreme, as in torch).
std::tuple<Tensor, Tensor> extreme_with_index(const Tensor& self, int64_t dim, bool keepdim, bool is_max,
                                              const char* op) {
  check_defined(self, op);
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  if (n == 0) fail(op, "cannot reduce over a zero-size dimension (input shape ", self.sizes(), ")");
  const ReducePlan p = plan_reduce(self, {d}, keepdim, op);
  if (!self.is_cpu()) {  // from the device's reductions: the extreme, then the first position holding it
    const Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
    const int64_t dd = self.dim() == 0 ? 0 : d;
    const Tensor values = is_max ? amax(x, {dd}, true) : amin(x, {dd}, true);
    const Tensor hit = logical_or(eq(x, values), ne(x, x));  // NaN counts as the extreme
    std::vector<int64_t> along(static_cast<size_t>(x.dim()), 1);
    along[static_cast<size_t>(dd)] = n;
    const Tensor position = arange(n, TensorOptions(kLong).device(self.device())).view(along);
    const Tensor indices = amin(where(hit, position, n), {dd}, true);
    return {finish(values.view(p.keep_shape), p, keepdim), finish(indices.view(p.keep_shape), p, keepdim)};
  }
  Tensor moved = self.dim() == 0 ? self.reshape({1, 1}) : self.movedim(d, -1).contiguous();
  Tensor values = empty(p.keep_shape, self.options());
  Tensor indices = empty(p.keep_shape, TensorOptions(kLong));
  int64_t* idx = indices.data_ptr<int64_t>();
  const int64_t rows = values.numel();
  dispatch_all(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(moved.data_ptr());
    T* v = static_cast<T*>(values.data_ptr());
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * n;
      int64_t best = 0;
      for (int64_t i = 1; i < n; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(row[best])) break;
          if (std::isnan(row[i])) {
            best = i;
            break;
          }
        }
        if (is_max ? row[i] > row[best] : row[i] < row[best]) best = i;
      }
      v[r] = row[best];
      idx[r] = best;
    }
  });
  return {finish(values, p, keepdim), finish(indices, p, keepdim)};
}

}  // namespace

std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim) {
  return extreme_with_index(self, dim, keepdim, true, "max");
}
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim) {
  return extreme_with_index(self, dim, keepdim, false, "min");
}
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) {
    check_defined(self, "argmax");
    if (self.numel() == 0) fail("argmax", "cannot compute the argmax of an empty tensor");
    return std::get<1>(extreme_with_index(self.reshape({-1}), 0, false, true, "argmax"));
  }
  return std::get<1>(extreme_with_index(self, *dim, keepdim, true, "argmax"));
}
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) {
    check_defined(self, "argmin");
    if (self.numel() == 0) fail("argmin", "cannot compute the argmin of an empty tensor");
    return std::get<1>(extreme_with_index(self.reshape({-1}), 0, false, false, "argmin"));
  }
  return std::get<1>(extreme_with_index(self, *dim, keepdim, false, "argmin"));
}

Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) {
  check_defined(self, "logsumexp");
  const Tensor x = isFloatingType(self.dtype()) ? self : self.to(kFloat);
  const ReducePlan p = plan_reduce(x, dim, keepdim, "logsumexp");
  if (x.numel() == 0) return finish(log(sum(exp(x), dim, true)), p, keepdim);
  // Shift by the max so exp cannot overflow; an infinite max shifts by 0 instead.
  Tensor m = amax(x, dim, true);
  m = where(m.abs().eq(std::numeric_limits<double>::infinity()), zeros_like(m), m);
  Tensor r = log(sum(exp(x - m), dim, true)).add_(m);
  return finish(r, p, keepdim);
}

Tensor norm(const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) {
  check_defined(self, "norm");
  if (!isFloatingType(self.dtype())) fail("norm", "expected a floating-point tensor, got ", self.dtype());
  const double order = p ? p->toDouble() : 2.0;
  if (order == 2.0) return sqrt(sum(self * self, dim, keepdim));
  if (order == 1.0) return sum(abs(self), dim, keepdim);
  if (std::isinf(order)) return order > 0 ? amax(abs(self), dim, keepdim) : amin(abs(self), dim, keepdim);
  if (order == 0.0) return sum(ne(self, 0).to(self.dtype()), dim, keepdim);
  return pow(sum(pow(abs(self), order), dim, keepdim), 1.0 / order);
}
Tensor norm(const Tensor& self, const Scalar& p) { return norm(self, std::optional<Scalar>(p), {}, false); }

namespace {
Tensor softmax_impl(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool log, const char* op) {
  check_defined(self, op);
  const Tensor x = dtype ? self.to(*dtype) : self;
  if (!isFloatingType(x.dtype()))
    fail(op, "expected a floating-point tensor, got ", x.dtype(), " (pass a floating dtype to convert)");
  const int64_t d = wrap_dim(dim, x.dim(), op);
  if (x.dim() == 0) return log ? zeros_like(x) : ones_like(x);
  if (!x.is_cpu()) return device_softmax(x, d, log);
  // Work on rows: the softmax dim last and contiguous.
  const Tensor rows = x.movedim(d, -1).contiguous();
  Tensor out = empty(rows.sizes(), rows.options());
  const int64_t n = rows.size(-1);
  if (n > 0) {
    const int64_t count = rows.numel() / n;
    dispatch_floating(x.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      const T* src = static_cast<const T*>(rows.data_ptr());
      T* dst = static_cast<T*>(out.data_ptr());
      const bool threads = rows.numel() >= 2 * kParallelGrain && count > 1 && !omp_in_parallel();
      parallel_for(0, count, threads, [&](int64_t r) { cpu::softmax_rows(src + r * n, dst + r * n, 1, n, log); });
    });
  }
  if (d == x.dim() - 1) return out;
  return out.movedim(x.dim() - 1, d).contiguous();
}
}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(self, dim, dtype, false, "softmax");
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(self, dim, dtype, true, "log_softmax");
}

Tensor& sum_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim) {
  return assign_out(out, sum(self, dim, keepdim), "sum_out");
}
Tensor& mean_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim) {
  return assign_out(out, mean(self, dim, keepdim), "mean_out");
}

}  // namespace fg
