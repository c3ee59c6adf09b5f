// Pooling: max_pool1d/2d, avg_pool2d, adaptive_avg_pool2d, and their derivative helpers. Every
// op reads its input as planes (all dims before the pooled ones) of a 1-D or 2-D image, 1-D as
// 2-D of height 1. Max pooling finds each window's maximum once (the first one, NaN winning, as
// torch) and the forward, its JVP (gather) and its VJP (scatter) all go through those positions.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <vector>

#include "funcgen/runtime/ad.h"
#include "device.h"
#include "internal.h"

namespace fg {
namespace {

using detail::fail;

struct PoolGeometry {
  const char* op = "max_pool2d";
  int64_t spatial = 2;
  std::vector<int64_t> lead;  // the dims before the pooled ones
  int64_t planes = 1;
  std::array<int64_t, 2> in{1, 1}, out{1, 1}, k{1, 1}, s{1, 1}, p{0, 0}, d{1, 1};

  int64_t in_plane() const { return in[0] * in[1]; }
  int64_t out_plane() const { return out[0] * out[1]; }
  std::vector<int64_t> sizes(const std::array<int64_t, 2>& v) const {
    std::vector<int64_t> r = lead;
    if (spatial == 2) r.push_back(v[0]);
    r.push_back(v[1]);
    return r;
  }
};

// The planes and spatial sizes of an input of `sizes` ([N, C, S...] or [C, S...]).
PoolGeometry planes_of(IntArrayRef sizes, int64_t spatial, const char* op) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (nd != spatial + 1 && nd != spatial + 2)
    fail(op, "expected a ", spatial + 1, "-D (unbatched) or ", spatial + 2, "-D (batched) input, got shape ", sizes);
  PoolGeometry g;
  g.op = op;
  g.spatial = spatial;
  g.lead.assign(sizes.begin(), sizes.end() - spatial);
  g.planes = detail::product(g.lead);
  for (int64_t i = 0; i < spatial; ++i) {
    g.in[static_cast<size_t>(2 - spatial + i)] = sizes[static_cast<size_t>(nd - spatial + i)];
    if (sizes[static_cast<size_t>(nd - spatial + i)] == 0)
      fail(op, "expected non-empty spatial dims, got shape ", sizes);
  }
  return g;
}

// torch's pooling_output_shape, checked: huge arguments must not wrap around into a plausible size.
int64_t pooled_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode, const char* op) {
  using detail::checked_add, detail::checked_mul;
  const int64_t padded = checked_add(in, checked_mul(2, p, op), op);
  const int64_t span = checked_add(padded - checked_mul(d, k - 1, op) - 1, ceil_mode ? s - 1 : 0, op);
  int64_t out = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

PoolGeometry window_geometry(IntArrayRef sizes, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding,
                             IntArrayRef dilation, bool ceil_mode, int64_t spatial, const char* op) {
  PoolGeometry g = planes_of(sizes, spatial, op);
  g.k = detail::spatial_arg(kernel, spatial, 1, "kernel_size", op);
  g.s = stride.empty() ? g.k : detail::spatial_arg(stride, spatial, 1, "stride", op);
  g.p = detail::spatial_arg(padding, spatial, 0, "padding", op);
  g.d = detail::spatial_arg(dilation, spatial, 1, "dilation", op);
  for (size_t i = 2 - static_cast<size_t>(spatial); i < 2; ++i) {
    if (g.k[i] <= 0 || g.s[i] <= 0 || g.d[i] <= 0)
      fail(op, "kernel_size, stride and dilation must be positive, got kernel_size ", kernel, ", stride ", stride,
           ", dilation ", dilation);
    if (g.p[i] < 0 || detail::checked_mul(2, g.p[i], op) >
                          detail::checked_add(detail::checked_mul(g.d[i], g.k[i] - 1, op), 1, op))
      fail(op, "padding must be non-negative and at most half of the dilated kernel (dilation * (kernel_size - 1) + ",
           "1), got padding ", padding, ", kernel_size ", kernel, " and dilation ", dilation);
    g.out[i] = pooled_size(g.in[i], g.k[i], g.s[i], g.p[i], g.d[i], ceil_mode, op);
    if (g.out[i] <= 0)
      fail(op, "the output would be empty: input of shape ", sizes, " with kernel_size ", kernel, ", stride ", stride,
           ", padding ", padding, " and dilation ", dilation);
  }
  detail::checked_numel(g.sizes(g.out), op);
  return g;
}

// Calls f(plane, l, at) for each window l of each plane of x [planes, H, W] (contiguous) with the
// in-plane index `at` of its maximum (-1 for a window wholly in the padding). Windows inside the
// input (all of them without padding) run a loop without bounds checks over the window's offsets.
// Planes run in parallel: f may write anything of its own plane.
template <typename T, typename F>
void for_each_maximum(const T* x, const PoolGeometry& g, F&& f) {
  const int64_t H = g.in[0], W = g.in[1], last_y = (g.k[0] - 1) * g.d[0], last_x = (g.k[1] - 1) * g.d[1];
  // The window's in-plane offsets from its first element, when a window fits inside the plane (else
  // no window takes the fast path below, and a kernel far larger than the input costs nothing).
  std::vector<int64_t> window;
  if (last_y < H && last_x < W)
    for (int64_t ky = 0; ky < g.k[0]; ++ky)
      for (int64_t kx = 0; kx < g.k[1]; ++kx) window.push_back(ky * g.d[0] * W + kx * g.d[1]);
  const int64_t* offsets = window.data();
  const int64_t kk = static_cast<int64_t>(window.size());
  // The taps iy = i0 + j * d (j = 0 .. n - 1) of a window starting at y0 that lie in [0, size).
  const auto taps = [](int64_t y0, int64_t last, int64_t d, int64_t size) -> std::array<int64_t, 2> {
    const int64_t i0 = y0 >= 0 ? y0 : ((y0 % d) + d) % d, hi = std::min(y0 + last, size - 1);
    return {i0, i0 > hi ? 0 : (hi - i0) / d + 1};
  };
  auto better = [](T v, T best) { return (v > best) | (v != v); };  // NaN wins, the last one as in torch
  // The output columns whose windows lie inside the input's columns.
  const int64_t x_lo = std::min(g.out[1], (g.p[1] + g.s[1] - 1) / g.s[1]);
  const int64_t x_hi =
      std::clamp(W - 1 - last_x + g.p[1] < 0 ? 0 : (W - 1 - last_x + g.p[1]) / g.s[1] + 1, x_lo, g.out[1]);
#pragma omp parallel for if (static_cast<double>(g.planes * g.out_plane()) * std::max<int64_t>(kk, 1) > (1 << 16))
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    const T* plane = x + pl * g.in_plane();
    for (int64_t oy = 0; oy < g.out[0]; ++oy) {
      const int64_t y0 = oy * g.s[0] - g.p[0];
      const bool rows_inside = y0 >= 0 && y0 + last_y < H;
      for (int64_t ox = 0; ox < g.out[1]; ++ox) {
        const int64_t x0 = ox * g.s[1] - g.p[1];
        int64_t at = -1;
        if (rows_inside && kk > 0 && ox >= x_lo && ox < x_hi) {
          // Branch-free (masks, not jumps): which element wins is data, and unpredictable.
          const T* w0 = plane + y0 * W + x0;
          T best = w0[0];
          int64_t best_at = 0;
          for (int64_t i = 1; i < kk; ++i) {
            const T v = w0[offsets[i]];
            const int64_t wins = -static_cast<int64_t>(better(v, best));  // all ones or zero: a mask
            best_at = (offsets[i] & wins) | (best_at & ~wins);
            best = w0[best_at];
          }
          at = y0 * W + x0 + best_at;
        } else {
          const std::array<int64_t, 2> ys = taps(y0, last_y, g.d[0], H), xs = taps(x0, last_x, g.d[1], W);
          for (int64_t jy = 0; jy < ys[1]; ++jy) {
            const int64_t iy = ys[0] + jy * g.d[0];
            for (int64_t jx = 0; jx < xs[1]; ++jx) {
              const int64_t ix = xs[0] + jx * g.d[1];
              if (at < 0 || better(plane[iy * W + ix], plane[at])) at = iy * W + ix;
            }
          }
        }
        f(pl, oy * g.out[1] + ox, at);
      }
    }
  }
}

// ---- On other devices, from the device's ops.

// The in-plane index of each window's maximum, [planes, oh * ow] int64 (-1: a window wholly in the
// padding), chosen as for_each_maximum does: the first maximum, or the last NaN. The windows are
// strided views of the input padded with -inf and of a map of in-plane indices (-1 in the padding).
Tensor device_maxima(const Tensor& self, const PoolGeometry& g) {
  std::array<int64_t, 2> e{};
  for (size_t d = 0; d < 2; ++d) e[d] = std::max(g.p[d] + g.in[d], (g.out[d] - 1) * g.s[d] + g.d[d] * (g.k[d] - 1) + 1);
  const TensorOptions on = self.options();
  Tensor values = full({g.planes, e[0], e[1]}, -std::numeric_limits<double>::infinity(), on);
  values.narrow(1, g.p[0], g.in[0]).narrow(2, g.p[1], g.in[1]).copy_(self.reshape({g.planes, g.in[0], g.in[1]}));
  Tensor where_in = full({e[0], e[1]}, int64_t{-1}, on.dtype(kLong));
  where_in.narrow(0, g.p[0], g.in[0])
      .narrow(1, g.p[1], g.in[1])
      .copy_(arange(g.in_plane(), on.dtype(kLong)).view({g.in[0], g.in[1]}));
  auto windows = [&](const Tensor& t, int64_t plane_stride) {
    return detail::make_view(t, {plane_stride ? g.planes : 1, g.out[0], g.out[1], g.k[0], g.k[1]},
                             {plane_stride, g.s[0] * e[1], g.s[1], g.d[0] * e[1], g.d[1]}, t.storage_offset())
        .reshape({plane_stride ? g.planes : 1, g.out_plane(), g.k[0] * g.k[1]});
  };
  const int64_t kk = g.k[0] * g.k[1];
  const Tensor v = windows(values, e[0] * e[1]), at = windows(where_in, 0).expand({g.planes, g.out_plane(), kk});
  const Tensor nan = v.ne(v), valid = at.ge(0);
  const Tensor hit = logical_and(valid, logical_or(v.eq(amax(v, {2}, true)), nan));
  const Tensor j = arange(kk, on.dtype(kLong));
  const Tensor first = amin(where(hit, j, kk), {2}, true), last = amax(where(hit, j, int64_t{-1}), {2}, true);
  const Tensor chosen = where(amax(logical_and(nan, valid).to(kLong), {2}, true).gt(0), last, first);
  // A window with no candidate chose kk: its index is -1.
  return where(chosen.lt(kk), gather(at, 2, chosen.clamp_max(kk - 1)), int64_t{-1}).view({g.planes, g.out_plane()});
}

Tensor device_gather_maxima(const Tensor& src, const Tensor& self, const PoolGeometry& g) {
  const Tensor at = device_maxima(self, g);
  const Tensor picked = gather(src.reshape({g.planes, g.in_plane()}), 1, at.clamp_min(0));
  return where(at.ge(0), picked, -std::numeric_limits<double>::infinity()).view(g.sizes(g.out));
}

Tensor device_scatter_maxima(const Tensor& gr, const Tensor& self, const PoolGeometry& g) {
  const Tensor at = device_maxima(self, g);
  const Tensor contribution = where(at.ge(0), gr.reshape({g.planes, g.out_plane()}), 0.0);
  return zeros({g.planes, g.in_plane()}, gr.options()).scatter_add(1, at.clamp_min(0), contribution).view(self.sizes());
}

// Averaging pools are separable: each output averages a box that is a product of 1-D ranges, and
// its divisor is a product of 1-D lengths (or one constant), so the device sums one axis, then the
// other, through index_select of each range's positions (and back through scatter_add).
struct AxisBoxes {
  std::vector<std::array<int64_t, 2>> ranges;  // [begin, end) per output index
  std::vector<double> lengths;                 // the divisor's factor per output index
};

AxisBoxes pool_axis(const PoolGeometry& g, size_t d, bool count_include_pad) {
  AxisBoxes a;
  for (int64_t o = 0; o < g.out[d]; ++o) {
    const int64_t b = o * g.s[d] - g.p[d], e = std::min(b + g.k[d], g.in[d] + g.p[d]);
    const int64_t cb = std::max<int64_t>(b, 0), ce = std::min(e, g.in[d]);
    a.ranges.push_back({cb, ce});
    a.lengths.push_back(static_cast<double>(count_include_pad ? e - b : ce - cb));
  }
  return a;
}

AxisBoxes adaptive_axis(const PoolGeometry& g, size_t d) {
  AxisBoxes a;
  for (int64_t o = 0; o < g.out[d]; ++o) {
    const int64_t b = (o * g.in[d]) / g.out[d], e = ((o + 1) * g.in[d] + g.out[d] - 1) / g.out[d];
    a.ranges.push_back({b, e});
    a.lengths.push_back(static_cast<double>(e - b));
  }
  return a;
}

// Each output index's range along one axis as int64 [out, widest] positions and a bool mask of
// those inside the range (the rest repeat the range's start), on `options`' device.
std::pair<Tensor, Tensor> axis_table(const AxisBoxes& a, const TensorOptions& options) {
  int64_t widest = 1;
  for (const auto& r : a.ranges) widest = std::max(widest, r[1] - r[0]);
  const int64_t n = static_cast<int64_t>(a.ranges.size());
  Tensor at = empty({n, widest}, TensorOptions(kLong)), in = empty({n, widest}, TensorOptions(kBool));
  int64_t* pa = at.data_ptr<int64_t>();
  bool* pi = in.data_ptr<bool>();
  for (int64_t o = 0; o < n; ++o)
    for (int64_t j = 0; j < widest; ++j) {
      const auto& r = a.ranges[static_cast<size_t>(o)];
      pi[o * widest + j] = r[0] + j < r[1];
      pa[o * widest + j] = pi[o * widest + j] ? r[0] + j : std::min(r[0], std::max<int64_t>(r[1] - 1, 0));
    }
  return {at.to(options.device()), in.to(options.device())};
}

// The shape of t ([planes, a, b]) with dim `d` (1 or 2) split into [n, w] and the others 1.
std::vector<int64_t> split_shape(int64_t d, int64_t n, int64_t w) {
  return d == 1 ? std::vector<int64_t>{1, n, w, 1} : std::vector<int64_t>{1, 1, n, w};
}

// Sums of t ([planes, a, b]) over each range of `a` along dim d: entries outside a range are
// selected away (never multiplied by 0, so an inf elsewhere stays out, as on the CPU).
Tensor box_sums(const Tensor& t, int64_t d, const AxisBoxes& a) {
  const auto [at, in] = axis_table(a, t.options());
  const int64_t n = at.size(0), w = at.size(1);
  std::vector<int64_t> split = t.sizes().vec();
  split[static_cast<size_t>(d)] = n;
  split.insert(split.begin() + d + 1, w);
  const Tensor picked = t.index_select(d, at.reshape({-1})).view(split);
  return where(in.view(split_shape(d, n, w)), picked, 0.0).sum({d + 1});
}

// The adjoint of box_sums: each output's value added to every position of its range.
Tensor box_spread(const Tensor& t, int64_t d, const AxisBoxes& a, int64_t size) {
  const auto [at, in] = axis_table(a, t.options());
  const int64_t n = at.size(0), w = at.size(1);
  std::vector<int64_t> split = t.sizes().vec();
  split.insert(split.begin() + d + 1, w);
  std::vector<int64_t> flat = t.sizes().vec(), out = t.sizes().vec();
  flat[static_cast<size_t>(d)] = n * w;
  out[static_cast<size_t>(d)] = size;
  const Tensor src = where(in.view(split_shape(d, n, w)), t.unsqueeze(d + 1).expand(split), 0.0).reshape(flat);
  const Tensor index = at.view(split_shape(d, n, w)).expand(split).reshape(flat);
  return zeros(out, t.options()).scatter_add(d, index, src);
}

// [oh, ow] divisors on t's device: the product of the axes' lengths, or the override.
Tensor divisors(const AxisBoxes& ay, const AxisBoxes& ax, std::optional<int64_t> divisor_override,
                const TensorOptions& options) {
  Tensor m =
      empty({static_cast<int64_t>(ay.lengths.size()), static_cast<int64_t>(ax.lengths.size())}, TensorOptions(kDouble));
  double* p = m.data_ptr<double>();
  for (size_t y = 0; y < ay.lengths.size(); ++y)
    for (size_t x = 0; x < ax.lengths.size(); ++x)
      p[y * ax.lengths.size() + x] =
          divisor_override ? static_cast<double>(*divisor_override) : ay.lengths[y] * ax.lengths[x];
  return m.to(options.device(), options.dtype());
}

// forward: the box sums over both axes / divisor; adjoint (of g): g / divisor spread over each box.
Tensor device_average(const Tensor& t, const PoolGeometry& g, const AxisBoxes& ay, const AxisBoxes& ax,
                      std::optional<int64_t> divisor_override, bool adjoint) {
  const Tensor div = divisors(ay, ax, divisor_override, t.options());
  if (!adjoint) {
    const Tensor x = t.reshape({g.planes, g.in[0], g.in[1]});
    return (box_sums(box_sums(x, 1, ay), 2, ax) / div).view(g.sizes(g.out));
  }
  const Tensor scaled = t.reshape({g.planes, g.out[0], g.out[1]}) / div;
  return box_spread(box_spread(scaled, 1, ay, g.in[0]), 2, ax, g.in[1]).view(g.sizes(g.in));
}

// Reads src (shaped as self: [planes, H, W]) at the maxima of self: [planes, oh, ow].
Tensor gather_maxima(const Tensor& src, const Tensor& self, const PoolGeometry& g) {
  if (!self.is_cpu()) return device_gather_maxima(src, self, g);
  const Tensor x = self.contiguous(), v = src.contiguous();
  Tensor out = detail::empty(g.sizes(g.out), src.options(), g.op);
  detail::dispatch_floating(self.scalar_type(), g.op, [&](auto t) {
    using T = decltype(t);
    const T* pv = static_cast<const T*>(v.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    for_each_maximum(static_cast<const T*>(x.data_ptr()), g, [&](int64_t pl, int64_t l, int64_t at) {
      po[pl * g.out_plane() + l] = at < 0 ? -std::numeric_limits<T>::infinity() : pv[pl * g.in_plane() + at];
    });
  });
  return out;
}

// Adds gr ([planes, oh, ow]) at the maxima of self into zeros shaped as self.
Tensor scatter_maxima(const Tensor& gr, const Tensor& self, const PoolGeometry& g) {
  if (!self.is_cpu()) return device_scatter_maxima(gr, self, g);
  const Tensor x = self.contiguous(), gc = gr.contiguous();
  Tensor out = zeros(self.sizes(), gr.options());
  detail::dispatch_floating(self.scalar_type(), g.op, [&](auto t) {
    using T = decltype(t);
    const T* pg = static_cast<const T*>(gc.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    for_each_maximum(static_cast<const T*>(x.data_ptr()), g, [&](int64_t pl, int64_t l, int64_t at) {
      if (at >= 0) po[pl * g.in_plane() + at] += pg[pl * g.out_plane() + l];
    });
  });
  return out;
}

void check_floating(const Tensor& t, const char* op, const char* arg = "input") {
  detail::check_defined(t, op, arg);
  detail::dispatch_floating(t.scalar_type(), op, [](auto) {});
}

Tensor max_pool(const Tensor& self, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                bool ceil_mode, int64_t spatial, const char* op) {
  check_floating(self, op);
  const PoolGeometry g = window_geometry(self.sizes(), kernel, stride, padding, dilation, ceil_mode, spatial, op);
  return gather_maxima(self, self, g);
}

// An averaging pool as a list of windows: for output element l of a plane, the input positions
// [begin, end) of each spatial dim and the divisor. The forward and the adjoint share it.
struct AvgWindows {
  std::vector<std::array<int64_t, 4>> boxes;  // y0, y1, x0, x1
  std::vector<double> divisors;
};

// Room for a window per output position of a plane; no room is the op's error, not std::bad_alloc.
AvgWindows reserved_windows(const PoolGeometry& g) {
  AvgWindows w;
  try {
    w.boxes.reserve(static_cast<size_t>(g.out_plane()));
    w.divisors.reserve(static_cast<size_t>(g.out_plane()));
  } catch (const std::bad_alloc&) {
    fail(g.op, "out of memory for the ", g.out_plane(), " windows of an output of shape ", IntArrayRef(g.sizes(g.out)));
  } catch (const std::length_error&) {
    fail(g.op, "out of memory for the ", g.out_plane(), " windows of an output of shape ", IntArrayRef(g.sizes(g.out)));
  }
  return w;
}

AvgWindows avg_windows(const PoolGeometry& g, bool count_include_pad, std::optional<int64_t> divisor_override) {
  AvgWindows w = reserved_windows(g);
  for (int64_t oy = 0; oy < g.out[0]; ++oy)
    for (int64_t ox = 0; ox < g.out[1]; ++ox) {
      int64_t y0 = oy * g.s[0] - g.p[0], x0 = ox * g.s[1] - g.p[1];
      int64_t y1 = std::min(y0 + g.k[0], g.in[0] + g.p[0]), x1 = std::min(x0 + g.k[1], g.in[1] + g.p[1]);
      const double padded = static_cast<double>(y1 - y0) * static_cast<double>(x1 - x0);  // (may pass int64)
      y0 = std::max<int64_t>(y0, 0);
      x0 = std::max<int64_t>(x0, 0);
      y1 = std::min(y1, g.in[0]);
      x1 = std::min(x1, g.in[1]);
      w.boxes.push_back({y0, y1, x0, x1});
      w.divisors.push_back(divisor_override    ? static_cast<double>(*divisor_override)
                           : count_include_pad ? padded
                                               : static_cast<double>((y1 - y0) * (x1 - x0)));
    }
  return w;
}

AvgWindows adaptive_windows(const PoolGeometry& g) {
  AvgWindows w = reserved_windows(g);
  const auto start = [](int64_t i, int64_t in, int64_t out) { return (i * in) / out; };
  const auto end = [](int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; };
  for (int64_t oy = 0; oy < g.out[0]; ++oy)
    for (int64_t ox = 0; ox < g.out[1]; ++ox) {
      const std::array<int64_t, 4> b{start(oy, g.in[0], g.out[0]), end(oy, g.in[0], g.out[0]),
                                     start(ox, g.in[1], g.out[1]), end(ox, g.in[1], g.out[1])};
      w.boxes.push_back(b);
      w.divisors.push_back(static_cast<double>((b[1] - b[0]) * (b[3] - b[2])));
    }
  return w;
}

// forward: out[l] = sum of x over box l / divisor; adjoint: dx[box l] += g[l] / divisor.
Tensor average(const Tensor& x_in, const PoolGeometry& g, const AvgWindows& w) {
  const Tensor x = x_in.contiguous();
  Tensor out = detail::empty(g.sizes(g.out), x.options(), g.op);
  detail::dispatch_floating(x.scalar_type(), g.op, [&](auto t) {
    using T = decltype(t);
    const T* px = static_cast<const T*>(x.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    for (int64_t pl = 0; pl < g.planes; ++pl)
      for (size_t l = 0; l < w.boxes.size(); ++l) {
        const auto& b = w.boxes[l];
        T sum = 0;
        for (int64_t y = b[0]; y < b[1]; ++y)
          for (int64_t xx = b[2]; xx < b[3]; ++xx) sum += px[pl * g.in_plane() + y * g.in[1] + xx];
        po[pl * g.out_plane() + static_cast<int64_t>(l)] = sum / static_cast<T>(w.divisors[l]);
      }
  });
  return out;
}
Tensor average_adjoint(const Tensor& g_in, const PoolGeometry& g, const AvgWindows& w) {
  const Tensor gc = g_in.contiguous();
  Tensor out = zeros(g.sizes(g.in), gc.options());
  detail::dispatch_floating(gc.scalar_type(), g.op, [&](auto t) {
    using T = decltype(t);
    const T* pg = static_cast<const T*>(gc.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    for (int64_t pl = 0; pl < g.planes; ++pl)
      for (size_t l = 0; l < w.boxes.size(); ++l) {
        const auto& b = w.boxes[l];
        const T v = pg[pl * g.out_plane() + static_cast<int64_t>(l)] / static_cast<T>(w.divisors[l]);
        for (int64_t y = b[0]; y < b[1]; ++y)
          for (int64_t xx = b[2]; xx < b[3]; ++xx) po[pl * g.in_plane() + y * g.in[1] + xx] += v;
      }
  });
  return out;
}

void check_divisor(std::optional<int64_t> divisor_override, const char* op) {
  if (divisor_override && *divisor_override == 0) fail(op, "divisor_override must be non-zero");
}

PoolGeometry adaptive_geometry(IntArrayRef sizes, IntArrayRef output_size, const char* op) {
  PoolGeometry g = planes_of(sizes, 2, op);
  g.out = detail::spatial_arg(output_size, 2, 1, "output_size", op);
  if (g.out[0] <= 0 || g.out[1] <= 0) fail(op, "output_size must be positive, got ", output_size);
  detail::checked_numel(g.sizes(g.out), op);
  for (size_t d = 0; d < 2; ++d) detail::checked_mul(g.out[d] + 1, g.in[d], op);  // (the windows' bounds)
  return g;
}

void check_same_dtype(const Tensor& a, const char* what, const Tensor& self, const char* op) {
  if (a.scalar_type() != self.scalar_type())
    fail(op, what, " (", a.scalar_type(), ") and self (", self.scalar_type(), ") must have the same dtype");
}

void check_shape(const Tensor& t, const std::vector<int64_t>& want, const char* what, const char* op) {
  if (t.sizes() != IntArrayRef(want)) fail(op, "expected ", what, " of shape ", IntArrayRef(want), ", got ", t.sizes());
}

}  // namespace

Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, 1, "max_pool1d");
}
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, 2, "max_pool2d");
}

Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  check_floating(self, op);
  check_divisor(divisor_override, op);
  const PoolGeometry g = window_geometry(self.sizes(), kernel_size, stride, padding, 1, ceil_mode, 2, op);
  if (!self.is_cpu())
    return device_average(self, g, pool_axis(g, 0, count_include_pad), pool_axis(g, 1, count_include_pad),
                          divisor_override, false);
  return average(self, g, avg_windows(g, count_include_pad, divisor_override));
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d";
  check_floating(self, op);
  const PoolGeometry g = adaptive_geometry(self.sizes(), output_size, op);
  if (!self.is_cpu()) return device_average(self, g, adaptive_axis(g, 0), adaptive_axis(g, 1), std::nullopt, false);
  return average(self, g, adaptive_windows(g));
}

namespace ad {

Tensor max_pool_gather(const Tensor& t, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, int64_t spatial) {
  const char* op = "ad::max_pool_gather";
  check_floating(self, op, "self");
  check_floating(t, op, "tangent");
  detail::common_device({&t, &self}, op);
  check_same_dtype(t, "tangent", self, op);
  check_shape(t, self.sizes().vec(), "a tangent", op);
  return gather_maxima(t, self,
                       window_geometry(self.sizes(), kernel_size, stride, padding, dilation, ceil_mode, spatial, op));
}

Tensor max_pool_scatter(const Tensor& g, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, int64_t spatial) {
  const char* op = "ad::max_pool_scatter";
  check_floating(self, op, "self");
  check_floating(g, op, "gradient");
  detail::common_device({&g, &self}, op);
  check_same_dtype(g, "gradient", self, op);
  const PoolGeometry geo =
      window_geometry(self.sizes(), kernel_size, stride, padding, dilation, ceil_mode, spatial, op);
  check_shape(g, geo.sizes(geo.out), "a gradient", op);
  return scatter_maxima(g, self, geo);
}

Tensor avg_pool2d_backward(const Tensor& g, IntArrayRef self_sizes, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const char* op = "ad::avg_pool2d_backward";
  check_floating(g, op, "gradient");
  check_divisor(divisor_override, op);
  const PoolGeometry geo = window_geometry(self_sizes, kernel_size, stride, padding, 1, ceil_mode, 2, op);
  check_shape(g, geo.sizes(geo.out), "a gradient", op);
  if (!g.is_cpu())
    return device_average(g, geo, pool_axis(geo, 0, count_include_pad), pool_axis(geo, 1, count_include_pad),
                          divisor_override, true);
  return average_adjoint(g, geo, avg_windows(geo, count_include_pad, divisor_override));
}

Tensor adaptive_avg_pool2d_backward(const Tensor& g, IntArrayRef self_sizes) {
  const char* op = "ad::adaptive_avg_pool2d_backward";
  check_floating(g, op, "gradient");
  if (g.dim() < 2) fail(op, "expected a gradient of at least 2 dims, got shape ", g.sizes());
  const PoolGeometry geo = adaptive_geometry(self_sizes, {g.size(-2), g.size(-1)}, op);
  check_shape(g, geo.sizes(geo.out), "a gradient", op);
  if (!g.is_cpu()) return device_average(g, geo, adaptive_axis(geo, 0), adaptive_axis(geo, 1), std::nullopt, true);
  return average_adjoint(g, geo, adaptive_windows(geo));
}

}  // namespace ad
}  // namespace fg
