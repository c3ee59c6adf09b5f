// Convolutions: conv1d, conv2d and their transposes, and the derivative helpers they share
// (fg::ad::convolution, conv_backward_input, conv_backward_weight). Every one is im2col (or its
// adjoint, col2im) around products on the runtime's GEMM, a chunk of images at a time (see
// kChunkColumns). A 1-D convolution is a 2-D one of height 1.
#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <omp.h>

#include "funcgen/runtime/ad.h"
#include "device.h"
#include "internal.h"

namespace fg {
namespace {

using detail::fail;

// One convolution's geometry (of C(x, w), the forward convolution), 1-D as 2-D of height 1.
struct ConvGeometry {
  const char* op = "conv2d";
  int64_t spatial = 2;  // spatial dims of the user's tensors (1 or 2)
  bool batched = true;  // the input has its batch dim N
  int64_t n = 1, c = 0, o = 0, groups = 1;
  std::array<int64_t, 2> in{1, 1}, kernel{1, 1}, out{1, 1};
  std::array<int64_t, 2> stride{1, 1}, pad{0, 0}, dilation{1, 1};  // pad: before the first element

  int64_t cg() const { return c / groups; }
  int64_t og() const { return o / groups; }
  int64_t rows() const { return cg() * kernel[0] * kernel[1]; }  // of a group's columns
  int64_t positions() const { return out[0] * out[1]; }
  std::vector<int64_t> sizes(int64_t channels, const std::array<int64_t, 2>& s) const {
    std::vector<int64_t> r;
    if (batched) r.push_back(n);
    r.push_back(channels);
    if (spatial == 2) r.push_back(s[0]);
    r.push_back(s[1]);
    return r;
  }
  std::vector<int64_t> input_sizes() const { return sizes(c, in); }
  std::vector<int64_t> output_sizes() const { return sizes(o, out); }
};

// The geometry of C(x, w) from the input's and weight's sizes; padding as numbers (symmetric) or,
// when `mode` is given, "same"/"valid".
ConvGeometry geometry(IntArrayRef input, IntArrayRef weight, IntArrayRef stride, IntArrayRef padding,
                      const PaddingMode* mode, IntArrayRef dilation, int64_t groups, const char* op) {
  ConvGeometry g;
  g.op = op;
  g.spatial = static_cast<int64_t>(weight.size()) - 2;
  if (g.spatial != 1 && g.spatial != 2)
    fail(op,
         "expected a weight of 3 dims [out_channels, in_channels / groups, kL] or 4 dims [out_channels, "
         "in_channels / groups, kH, kW], got shape ",
         weight);
  const int64_t in_dims = static_cast<int64_t>(input.size());
  if (in_dims != g.spatial + 1 && in_dims != g.spatial + 2)
    fail(op, "expected a ", g.spatial + 1, "-D (unbatched) or ", g.spatial + 2,
         "-D (batched) input for a weight of shape ", weight, ", got shape ", input);
  g.batched = in_dims == g.spatial + 2;
  const size_t at = g.batched ? 1 : 0;
  g.n = g.batched ? input[0] : 1;
  g.c = input[at];
  g.o = weight[0];
  if (groups <= 0) fail(op, "groups must be positive, got ", groups);
  g.groups = groups;
  if (g.o % groups != 0)
    fail(op, "the weight's out_channels (", g.o, ", shape ", weight, ") must be divisible by groups (", groups, ")");
  const int64_t channels = detail::checked_mul(weight[1], groups, op);
  if (channels != g.c)
    fail(op, "given groups=", groups, " and a weight of shape ", weight, ", expected an input with ", channels,
         " channels, got shape ", input, " (", g.c, " channels)");
  g.stride = detail::spatial_arg(stride, g.spatial, 1, "stride", op);
  g.dilation = detail::spatial_arg(dilation, g.spatial, 1, "dilation", op);
  for (size_t d = 0; d < 2; ++d) {
    g.in[d] = d == 0 && g.spatial == 1 ? 1 : input[at + 1 + d - (g.spatial == 1 ? 1 : 0)];
    g.kernel[d] = d == 0 && g.spatial == 1 ? 1 : weight[2 + d - (g.spatial == 1 ? 1 : 0)];
    if (g.stride[d] <= 0) fail(op, "stride must be positive, got ", stride);
    if (g.dilation[d] <= 0) fail(op, "dilation must be positive, got ", dilation);
  }
  std::array<int64_t, 2> total{0, 0};  // padding added to each spatial dim, both sides together
  if (mode != nullptr) {
    if (mode->str() == "same") {
      if (g.stride[0] != 1 || g.stride[1] != 1)
        fail(op, "padding=\"same\" is not supported for strided convolutions (stride ", stride, ")");
      for (size_t d = 0; d < 2; ++d) {
        total[d] = detail::checked_mul(g.dilation[d], g.kernel[d] - 1, op);
        g.pad[d] = total[d] / 2;  // as torch: the odd element of the padding goes after
      }
    } else if (mode->str() != "valid") {
      fail(op, "padding must be \"same\", \"valid\" or integers, got \"", mode->str(), "\"");
    }
  } else {
    const std::array<int64_t, 2> p = detail::spatial_arg(padding, g.spatial, 0, "padding", op);
    for (size_t d = 0; d < 2; ++d) {
      if (p[d] < 0) fail(op, "padding must be non-negative, got ", padding);
      g.pad[d] = p[d];
      total[d] = detail::checked_mul(2, p[d], op);
    }
  }
  for (size_t d = 0; d < 2; ++d) {
    // Checked: huge dilations and paddings must not wrap around into a plausible size.
    const int64_t span = detail::checked_add(detail::checked_mul(g.dilation[d], g.kernel[d] - 1, op), 1, op);
    const int64_t padded = detail::checked_add(g.in[d], total[d], op);
    if (padded < span)
      fail(op, "the padded input (shape ", input, ", padding ", total[d], " in spatial dim ", d + 2 - g.spatial,
           ") is smaller than the dilated kernel (", span, " elements, weight of shape ", weight, ")");
    g.out[d] = (padded - span) / g.stride[d] + 1;
  }
  detail::checked_numel(g.output_sizes(), op);
  // The columns of all images (made a chunk at a time, but all at once on other devices).
  const int64_t rows = detail::checked_mul(detail::checked_mul(g.c, g.kernel[0], op), g.kernel[1], op);
  detail::checked_mul(g.n, detail::checked_mul(rows, g.positions(), op), op);
  return g;
}

void check_tensors(const Tensor& input, const Tensor& weight, const char* op, const char* input_name = "input") {
  detail::check_defined(input, op, input_name);
  detail::check_defined(weight, op, "weight");
  detail::common_device({&input, &weight}, op);
  if (input.scalar_type() != weight.scalar_type())
    fail(op, input_name, " (", input.scalar_type(), ") and weight (", weight.scalar_type(),
         ") must have the same dtype");
  detail::dispatch_floating(input.scalar_type(), op, [](auto) {});
}

// The columns of a chunk of images: x [N, C, H, W] (contiguous) images [n0, n0 + nb) as rows
// (c, ki, kj) of nb * positions columns; row (c, ki, kj), column (n, oy, ox) holds
// x[n0 + n, c, oy * sh - ph + ki * dh, ox * sw - pw + kj * dw], zero outside x. The rows of group
// g are rows [g * rows(), (g + 1) * rows()).
//
// The convolutions run chunk by chunk: a chunk's columns stay in cache while its products read
// them, the products write the output in its own layout (no transposes after the GEMM), and the
// chunks run in parallel. A chunk has enough columns (kChunkColumns) for the GEMM to run near
// its peak: one image when an image has that many output positions.
constexpr int64_t kChunkColumns = 256;

// The output positions [lo, hi) along one dim (out of them, input size `size`, stride s) whose
// input index o * s + off lies inside the input.
std::array<int64_t, 2> inside(int64_t out, int64_t size, int64_t s, int64_t off) {
  const int64_t lo = std::min(out, off >= 0 ? 0 : (-off + s - 1) / s);
  const int64_t hi = size - 1 - off < 0 ? 0 : (size - 1 - off) / s + 1;
  return {lo, std::clamp(hi, lo, out)};
}

// Calls f(c, row, n, oy, iy, xs, xoff) for every output row oy of image n (of the chunk) of every
// column row `row` (of input channel c): iy is the input row it reads (-1 when outside x), xs the
// output columns whose input column ox * sw + xoff lies inside x.
template <typename F>
void for_column_rows(const ConvGeometry& g, int64_t nb, F&& f) {
  const int64_t kk = g.kernel[0] * g.kernel[1];
  for (int64_t row = 0; row < g.c * kk; ++row) {
    const int64_t ki = (row % kk) / g.kernel[1], kj = row % g.kernel[1];
    const int64_t xoff = kj * g.dilation[1] - g.pad[1];
    const std::array<int64_t, 2> xs = inside(g.out[1], g.in[1], g.stride[1], xoff);
    for (int64_t n = 0; n < nb; ++n)
      for (int64_t oy = 0; oy < g.out[0]; ++oy) {
        const int64_t iy = oy * g.stride[0] - g.pad[0] + ki * g.dilation[0];
        f(row / kk, row, n, oy, iy >= 0 && iy < g.in[0] ? iy : -1, xs, xoff);
      }
  }
}

template <typename T>
void im2col(const T* x, const ConvGeometry& g, int64_t n0, int64_t nb, T* cols) {
  const int64_t L = g.positions(), ld = nb * L, H = g.in[0], W = g.in[1], ow = g.out[1], sw = g.stride[1];
  for_column_rows(
      g, nb, [&](int64_t c, int64_t row, int64_t n, int64_t oy, int64_t iy, std::array<int64_t, 2> xs, int64_t xoff) {
        T* dst = cols + row * ld + n * L + oy * ow;
        if (iy < 0) {
          std::fill(dst, dst + ow, T(0));
          return;
        }
        const T* line = x + (((n0 + n) * g.c + c) * H + iy) * W;  // input column ox * sw + xoff
        std::fill(dst, dst + xs[0], T(0));
        if (sw == 1)
          std::copy(line + xs[0] + xoff, line + xs[1] + xoff, dst + xs[0]);
        else
          for (int64_t ox = xs[0]; ox < xs[1]; ++ox) dst[ox] = line[ox * sw + xoff];
        std::fill(dst + xs[1], dst + ow, T(0));
      });
}

// The adjoint of im2col: the chunk's columns added into dx's images [n0, n0 + nb), which it zeroes
// first.
template <typename T>
void col2im(const T* cols, const ConvGeometry& g, int64_t n0, int64_t nb, T* dx) {
  const int64_t L = g.positions(), ld = nb * L, H = g.in[0], W = g.in[1], ow = g.out[1], sw = g.stride[1];
  std::fill(dx + n0 * g.c * H * W, dx + (n0 + nb) * g.c * H * W, T(0));
  for_column_rows(
      g, nb, [&](int64_t c, int64_t row, int64_t n, int64_t oy, int64_t iy, std::array<int64_t, 2> xs, int64_t xoff) {
        if (iy < 0) return;
        const T* src = cols + row * ld + n * L + oy * ow;
        T* line = dx + (((n0 + n) * g.c + c) * H + iy) * W;
        for (int64_t ox = xs[0]; ox < xs[1]; ++ox) line[ox * sw + xoff] += src[ox];
      });
}

// [O, P] blocks of nb images of t [N, O, P] (from image n0) as one [O, nb * P] matrix in buf, or,
// for one image, t's own memory.
template <typename T>
const T* group_major(const T* t, const ConvGeometry& g, int64_t channels, int64_t n0, int64_t nb, T* buf) {
  const int64_t L = g.positions();
  if (nb == 1) return t + n0 * channels * L;
  for (int64_t o = 0; o < channels; ++o)
    for (int64_t n = 0; n < nb; ++n) std::copy_n(t + ((n0 + n) * channels + o) * L, L, buf + (o * nb + n) * L);
  return buf;
}

// A scratch buffer of the chunks: `per_image` elements per image of a chunk, plus `fixed`.
struct ScratchSize {
  int64_t per_image = 0, fixed = 0;
  bool zeroed = false;
  bool several = false;  // needed only when a chunk has several images (else left empty)
};

// Runs body(n0, nb, parallel, scratch) over the chunks of g's images, then finish(scratch) for
// each thread that ran chunks, one after the other. Chunks run in parallel when there are enough
// of them to share out, else one after the other with `parallel` set for the work inside a chunk.
// scratch[i]: the thread's buffer of sizes[i], uninitialized unless zeroed (from the runtime's
// block cache: made here, as nothing inside the parallel region may throw).
template <typename T, typename F, typename Finish>
void for_chunks(const ConvGeometry& g, const TensorOptions& options, std::initializer_list<ScratchSize> sizes, F&& body,
                Finish&& finish) {
  if (g.n == 0) return;
  detail::gemm_prepare<T>();
  const int64_t per = std::min(g.n, std::max<int64_t>(1, (kChunkColumns + g.positions() - 1) / g.positions()));
  const int64_t chunks = (g.n + per - 1) / per;
  const int64_t int_max = std::numeric_limits<int>::max();
  if (g.c * g.kernel[0] * g.kernel[1] > int_max || per * g.positions() > int_max || g.o > int_max)
    fail(g.op, "the convolution's products exceed the 32-bit BLAS interface (input ", IntArrayRef(g.input_sizes()),
         ", ", g.o, " output channels)");
  const bool outer = chunks >= 2 * static_cast<int64_t>(omp_get_max_threads()) && !omp_in_parallel();
  const int threads = outer ? omp_get_max_threads() : 1;
  std::vector<std::vector<Tensor>> held(static_cast<size_t>(threads));
  std::vector<std::vector<T*>> scratch(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t)
    for (const ScratchSize& sz : sizes) {
      const int64_t size = sz.several && per == 1 ? 1 : std::max<int64_t>(1, sz.per_image * per + sz.fixed);
      held[t].push_back((sz.zeroed ? zeros : empty)({size}, options));
      scratch[t].push_back(static_cast<T*>(held[t].back().data_ptr()));
    }
  std::vector<char> ran(static_cast<size_t>(threads), 0);
#pragma omp parallel for schedule(static) num_threads(threads) if (outer)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    const int t = omp_in_parallel() ? omp_get_thread_num() : 0;
    body(ch * per, std::min(per, g.n - ch * per), !outer, scratch[static_cast<size_t>(t)].data());
    ran[static_cast<size_t>(t)] = 1;
  }
  for (int t = 0; t < threads; ++t)
    if (ran[static_cast<size_t>(t)]) finish(scratch[static_cast<size_t>(t)].data());
}
template <typename T, typename F>
void for_chunks(const ConvGeometry& g, const TensorOptions& options, std::initializer_list<ScratchSize> sizes,
                F&& body) {
  for_chunks<T>(g, options, sizes, std::forward<F>(body), [](T* const*) {});
}

// C(x, w), no bias: per chunk and group, y_g = w_g [og, rows] @ columns_g [rows, nb * P].
template <typename T>
void conv_forward_t(const T* x, const T* w, const ConvGeometry& g, T* y, const TensorOptions& options) {
  const int64_t L = g.positions(), rows = g.rows(), og = g.og();
  for_chunks<T>(g, options, {{g.c * g.kernel[0] * g.kernel[1] * L}, {g.o * L, 0, false, true}},
                [&](int64_t n0, int64_t nb, bool parallel, T* const* s) {
                  const int64_t ld = nb * L;
                  im2col(x, g, n0, nb, s[0]);
                  T* out = nb == 1 ? y + n0 * g.o * L : s[1];
                  for (int64_t gr = 0; gr < g.groups; ++gr)
                    detail::gemm<T>(og, ld, rows, w + gr * og * rows, rows, 1, s[0] + gr * rows * ld, ld, 1,
                                    out + gr * og * ld, ld, false, parallel);
                  if (nb > 1)  // [O, nb * P] into the images' [O, P] blocks
                    for (int64_t o = 0; o < g.o; ++o)
                      for (int64_t n = 0; n < nb; ++n)
                        std::copy_n(out + (o * nb + n) * L, L, y + ((n0 + n) * g.o + o) * L);
                });
}

// The adjoint of C in x: per chunk and group, columns_g = w_g^T [rows, og] @ dy_g [og, nb * P],
// added back into dx by col2im.
template <typename T>
void conv_input_adjoint_t(const T* dy, const T* w, const ConvGeometry& g, T* dx, const TensorOptions& options) {
  const int64_t L = g.positions(), rows = g.rows(), og = g.og();
  for_chunks<T>(g, options, {{g.c * g.kernel[0] * g.kernel[1] * L}, {g.o * L, 0, false, true}},
                [&](int64_t n0, int64_t nb, bool parallel, T* const* s) {
                  const int64_t ld = nb * L;
                  const T* dyg = group_major(dy, g, g.o, n0, nb, s[1]);
                  for (int64_t gr = 0; gr < g.groups; ++gr)
                    detail::gemm<T>(rows, ld, og, w + gr * og * rows, 1, rows, dyg + gr * og * ld, ld, 1,
                                    s[0] + gr * rows * ld, ld, false, parallel);
                  col2im(s[0], g, n0, nb, dx);
                });
}

// The adjoint of C in w: dw_g [og, rows] = sum over chunks of dy_g [og, nb * P] @ columns_g^T,
// each thread summing its chunks in its own buffer, added into dw when it is done.
template <typename T>
void conv_weight_adjoint_t(const T* dy, const T* x, const ConvGeometry& g, T* dw, const TensorOptions& options) {
  const int64_t L = g.positions(), rows = g.rows(), og = g.og(), size = g.o * rows;
  std::fill(dw, dw + size, T(0));
  for_chunks<T>(
      g, options, {{g.c * g.kernel[0] * g.kernel[1] * L}, {g.o * L, 0, false, true}, {0, size, true}},
      [&](int64_t n0, int64_t nb, bool parallel, T* const* s) {
        const int64_t ld = nb * L;
        im2col(x, g, n0, nb, s[0]);
        const T* dyg = group_major(dy, g, g.o, n0, nb, s[1]);
        for (int64_t gr = 0; gr < g.groups; ++gr)
          detail::gemm<T>(og, rows, ld, dyg + gr * og * ld, ld, 1, s[0] + gr * rows * ld, 1, ld, s[2] + gr * og * rows,
                          rows, true, parallel);
      },
      [&](T* const* s) {
        for (int64_t i = 0; i < size; ++i) dw[i] += s[2][i];
      });
}

// ---- On other devices: the same im2col formulation from the device's ops. The columns are a
// strided view of the zero-padded input, made dense by the device's copy; the products go to its
// batched GEMM; the adjoint of im2col adds each kernel offset's strided slice of the columns.

// The padded input's spatial extent: pad before, and after as far as the last window reaches.
std::array<int64_t, 2> padded_extent(const ConvGeometry& g) {
  std::array<int64_t, 2> e{};
  for (size_t d = 0; d < 2; ++d)
    e[d] = std::max(g.pad[d] + g.in[d], (g.out[d] - 1) * g.stride[d] + g.dilation[d] * (g.kernel[d] - 1) + 1);
  return e;
}

// x [n, c, in0, in1] zero-padded to padded_extent, contiguous.
Tensor padded_input(const Tensor& x, const ConvGeometry& g) {
  const std::array<int64_t, 2> e = padded_extent(g);
  Tensor padded = zeros({g.n, g.c, e[0], e[1]}, x.options());
  padded.narrow(2, g.pad[0], g.in[0]).narrow(3, g.pad[1], g.in[1]).copy_(x.reshape({g.n, g.c, g.in[0], g.in[1]}));
  return padded;
}

// The columns [n, groups, rows, positions] of x: row (c, ki, kj), column (oy, ox) of group gr is
// padded[n, gr * cg + c, oy * s0 + ki * d0, ox * s1 + kj * d1].
Tensor device_columns(const Tensor& x, const ConvGeometry& g) {
  const Tensor padded = padded_input(x, g);
  const int64_t row = padded.size(3), plane = padded.size(2) * row;
  const Tensor windows = detail::make_view(
      padded, {g.n, g.groups, g.cg(), g.kernel[0], g.kernel[1], g.out[0], g.out[1]},
      {g.c * plane, g.cg() * plane, plane, g.dilation[0] * row, g.dilation[1], g.stride[0] * row, g.stride[1]},
      padded.storage_offset());
  return windows.reshape({g.n, g.groups, g.rows(), g.positions()});
}

Tensor device_forward(const Tensor& x, const Tensor& w, const ConvGeometry& g) {
  return w.reshape({1, g.groups, g.og(), g.rows()}).matmul(device_columns(x, g)).reshape(g.output_sizes());
}

Tensor device_input_adjoint(const Tensor& dy, const Tensor& w, const ConvGeometry& g) {
  const Tensor cols = w.reshape({1, g.groups, g.og(), g.rows()})
                          .transpose(-2, -1)
                          .matmul(dy.reshape({g.n, g.groups, g.og(), g.positions()}));
  const Tensor per_offset = cols.reshape({g.n, g.c, g.kernel[0], g.kernel[1], g.out[0], g.out[1]});
  const std::array<int64_t, 2> e = padded_extent(g);
  Tensor padded = zeros({g.n, g.c, e[0], e[1]}, dy.options());
  for (int64_t ki = 0; ki < g.kernel[0]; ++ki)
    for (int64_t kj = 0; kj < g.kernel[1]; ++kj) {
      const int64_t y0 = ki * g.dilation[0], x0 = kj * g.dilation[1];
      padded.slice(2, y0, y0 + (g.out[0] - 1) * g.stride[0] + 1, g.stride[0])
          .slice(3, x0, x0 + (g.out[1] - 1) * g.stride[1] + 1, g.stride[1])
          .add_(per_offset.select(2, ki).select(2, kj));
    }
  return padded.narrow(2, g.pad[0], g.in[0]).narrow(3, g.pad[1], g.in[1]).reshape(g.input_sizes());
}

Tensor device_weight_adjoint(const Tensor& dy, const Tensor& x, const ConvGeometry& g, IntArrayRef weight_sizes) {
  return dy.reshape({g.n, g.groups, g.og(), g.positions()})
      .matmul(device_columns(x, g).transpose(-2, -1))
      .sum({0})
      .reshape(weight_sizes);
}

// A new tensor of `sizes` filled by kernel(tag, a, b, out) with a and b contiguous (tag: a value
// of the element type, float or double).
template <typename Kernel>
Tensor run_kernel(const Tensor& a_in, const Tensor& b_in, IntArrayRef sizes, const ConvGeometry& g, Kernel kernel) {
  const Tensor a = a_in.contiguous(), b = b_in.contiguous();
  Tensor out = detail::empty(sizes, a.options(), g.op);
  detail::dispatch_floating(a.scalar_type(), g.op, [&](auto tag) {
    using T = decltype(tag);
    kernel(tag, static_cast<const T*>(a.data_ptr()), static_cast<const T*>(b.data_ptr()),
           static_cast<T*>(out.data_ptr()));
  });
  return out;
}

// C(x, w) of the input's sizes, no bias.
Tensor conv_forward(const Tensor& x, const Tensor& w, const ConvGeometry& g) {
  if (!x.is_cpu()) return device_forward(x, w, g);
  return run_kernel(x, w, g.output_sizes(), g,
                    [&](auto, auto* px, auto* pw, auto* y) { conv_forward_t(px, pw, g, y, x.options()); });
}

// The adjoint of C in x: dx of the input's sizes for the output gradient dy.
Tensor conv_input_adjoint(const Tensor& dy, const Tensor& w, const ConvGeometry& g) {
  if (!dy.is_cpu()) return device_input_adjoint(dy, w, g);
  return run_kernel(dy, w, g.input_sizes(), g,
                    [&](auto, auto* pdy, auto* pw, auto* dx) { conv_input_adjoint_t(pdy, pw, g, dx, dy.options()); });
}

// The adjoint of C in w: dw of `weight_sizes` for the output gradient dy.
Tensor conv_weight_adjoint(const Tensor& dy, const Tensor& x, const ConvGeometry& g, IntArrayRef weight_sizes) {
  if (!dy.is_cpu()) return device_weight_adjoint(dy, x, g, weight_sizes);
  return run_kernel(dy, x, weight_sizes, g,
                    [&](auto, auto* pdy, auto* px, auto* dw) { conv_weight_adjoint_t(pdy, px, g, dw, dy.options()); });
}

void check_output(const Tensor& t, const ConvGeometry& g, const char* what) {
  const std::vector<int64_t> want = g.output_sizes();
  if (t.sizes() != IntArrayRef(want))
    fail(g.op, "expected ", what, " of shape ", IntArrayRef(want), " (the convolution's output), got ", t.sizes());
}

Tensor with_bias(Tensor out, const std::optional<Tensor>& bias, int64_t channels, int64_t spatial, const char* op) {
  if (!bias || !bias->defined()) return out;
  if (bias->dim() != 1 || bias->size(0) != channels)
    fail(op, "expected a bias of shape [", channels, "] (one per output channel), got ", bias->sizes());
  if (bias->scalar_type() != out.scalar_type())
    fail(op, "bias (", bias->scalar_type(), ") must have the dtype of the input (", out.scalar_type(), ")");
  return out.add_(ad::conv_bias_expand(*bias, out.sizes(), spatial));
}

Tensor conv(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
            IntArrayRef padding, const PaddingMode* mode, IntArrayRef dilation, int64_t groups, int64_t spatial,
            const char* op) {
  check_tensors(input, weight, op);
  if (weight.dim() != spatial + 2)
    fail(op, "expected a ", spatial + 2, "-D weight [out_channels, in_channels / groups, kernel...], got shape ",
         weight.sizes());
  const ConvGeometry g = geometry(input.sizes(), weight.sizes(), stride, padding, mode, dilation, groups, op);
  return with_bias(conv_forward(input, weight, g), bias, g.o, spatial, op);
}

Tensor conv_transpose(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                      IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation,
                      int64_t spatial, const char* op) {
  check_tensors(input, weight, op);
  if (weight.dim() != spatial + 2)
    fail(op, "expected a ", spatial + 2, "-D weight [in_channels, out_channels / groups, kernel...], got shape ",
         weight.sizes());
  if (input.dim() != spatial + 1 && input.dim() != spatial + 2)
    fail(op, "expected a ", spatial + 1, "-D (unbatched) or ", spatial + 2, "-D (batched) input, got shape ",
         input.sizes());
  if (groups <= 0) fail(op, "groups must be positive, got ", groups);
  // The transposed convolution's output is the input of the convolution it is the adjoint of.
  const std::array<int64_t, 2> s = detail::spatial_arg(stride, spatial, 1, "stride", op),
                               d = detail::spatial_arg(dilation, spatial, 1, "dilation", op),
                               p = detail::spatial_arg(padding, spatial, 0, "padding", op),
                               op_ = detail::spatial_arg(output_padding, spatial, 0, "output_padding", op);
  std::vector<int64_t> out_sizes = input.sizes().vec();
  const int64_t at = input.dim() - spatial - 1;
  out_sizes[static_cast<size_t>(at)] = detail::checked_mul(weight.size(1), groups, op);
  for (int64_t k = 0; k < spatial; ++k) {
    const size_t i = static_cast<size_t>(2 - spatial + k);
    if (s[i] <= 0 || d[i] <= 0 || p[i] < 0) fail(op, "stride and dilation must be positive and padding non-negative");
    if (op_[i] < 0 || op_[i] >= s[i])
      fail(op, "output_padding must be non-negative and smaller than stride, got output_padding ", output_padding,
           " and stride ", stride);
    using detail::checked_add, detail::checked_mul;  // huge strides, paddings, dilations must not wrap
    out_sizes[static_cast<size_t>(at + 1 + k)] = checked_add(
        checked_add(checked_mul(input.size(at + 1 + k) - 1, s[i], op), -checked_mul(2, p[i], op), op),
        checked_add(checked_mul(d[i], weight.size(2 + k) - 1, op), op_[i] + 1, op), op);
    if (out_sizes[static_cast<size_t>(at + 1 + k)] <= 0)
      fail(op, "the output would have no elements in spatial dim ", k, " (input ", input.sizes(), ", weight ",
           weight.sizes(), ", stride ", stride, ", padding ", padding, ")");
  }
  if (input.size(at) != weight.size(0))
    fail(op, "expected an input with ", weight.size(0), " channels (the weight's dim 0, shape ", weight.sizes(),
         "), got shape ", input.sizes());
  const ConvGeometry g = geometry(out_sizes, weight.sizes(), stride, padding, nullptr, dilation, groups, op);
  return with_bias(conv_input_adjoint(input, weight, g), bias, g.c, spatial, op);
}

}  // namespace

namespace detail {
std::array<int64_t, 2> spatial_arg(IntArrayRef v, int64_t spatial, int64_t unit, const char* name, const char* op) {
  if (v.size() != 1 && static_cast<int64_t>(v.size()) != spatial)
    fail(op, "expected ", name, " to be one integer or a list of ", spatial, ", got ", v);
  std::array<int64_t, 2> r{unit, unit};
  for (int64_t d = 0; d < spatial; ++d)
    r[static_cast<size_t>(2 - spatial + d)] = v[v.size() == 1 ? 0 : static_cast<size_t>(d)];
  return r;
}
}  // namespace detail

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv(input, weight, bias, stride, padding, nullptr, dilation, groups, 1, "conv1d");
}
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              const PaddingMode& padding, IntArrayRef dilation, int64_t groups) {
  return conv(input, weight, bias, stride, {}, &padding, dilation, groups, 1, "conv1d");
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv(input, weight, bias, stride, padding, nullptr, dilation, groups, 2, "conv2d");
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              const PaddingMode& padding, IntArrayRef dilation, int64_t groups) {
  return conv(input, weight, bias, stride, {}, &padding, dilation, groups, 2, "conv2d");
}
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d");
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d");
}

namespace ad {
namespace {

ConvGeometry checked(const Tensor& input_like, IntArrayRef input_sizes, const Tensor& weight_like,
                     IntArrayRef weight_sizes, IntArrayRef stride, IntArrayRef padding, const PaddingMode* mode,
                     IntArrayRef dilation, int64_t groups, const char* op) {
  check_tensors(input_like, weight_like, op, "gradient");
  return geometry(input_sizes, weight_sizes, stride, padding, mode, dilation, groups, op);
}

Tensor backward_input(const Tensor& g, IntArrayRef input_sizes, const Tensor& weight, IntArrayRef stride,
                      IntArrayRef padding, const PaddingMode* mode, IntArrayRef dilation, int64_t groups) {
  const char* op = "ad::conv_backward_input";
  const ConvGeometry geo = checked(g, input_sizes, weight, weight.sizes(), stride, padding, mode, dilation, groups, op);
  check_output(g, geo, "a gradient");
  return conv_input_adjoint(g, weight, geo);
}

Tensor backward_weight(const Tensor& g, const Tensor& input, IntArrayRef weight_sizes, IntArrayRef stride,
                       IntArrayRef padding, const PaddingMode* mode, IntArrayRef dilation, int64_t groups) {
  const char* op = "ad::conv_backward_weight";
  const ConvGeometry geo = checked(g, input.sizes(), input, weight_sizes, stride, padding, mode, dilation, groups, op);
  check_output(g, geo, "a gradient");
  return conv_weight_adjoint(g, input, geo, weight_sizes);
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef dilation, int64_t groups) {
  return conv(input, weight, std::nullopt, stride, padding, nullptr, dilation, groups, weight.dim() - 2,
              "ad::convolution");
}
Tensor convolution(const Tensor& input, const Tensor& weight, IntArrayRef stride, const PaddingMode& padding,
                   IntArrayRef dilation, int64_t groups) {
  return conv(input, weight, std::nullopt, stride, {}, &padding, dilation, groups, weight.dim() - 2, "ad::convolution");
}
Tensor conv_backward_input(const Tensor& g, IntArrayRef input_sizes, const Tensor& weight, IntArrayRef stride,
                           IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return backward_input(g, input_sizes, weight, stride, padding, nullptr, dilation, groups);
}
Tensor conv_backward_input(const Tensor& g, IntArrayRef input_sizes, const Tensor& weight, IntArrayRef stride,
                           const PaddingMode& padding, IntArrayRef dilation, int64_t groups) {
  return backward_input(g, input_sizes, weight, stride, {}, &padding, dilation, groups);
}
Tensor conv_backward_weight(const Tensor& g, const Tensor& input, IntArrayRef weight_sizes, IntArrayRef stride,
                            IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return backward_weight(g, input, weight_sizes, stride, padding, nullptr, dilation, groups);
}
Tensor conv_backward_weight(const Tensor& g, const Tensor& input, IntArrayRef weight_sizes, IntArrayRef stride,
                            const PaddingMode& padding, IntArrayRef dilation, int64_t groups) {
  return backward_weight(g, input, weight_sizes, stride, {}, &padding, dilation, groups);
}

Tensor conv_bias_expand(const Tensor& bias, IntArrayRef sizes, int64_t spatial) {
  const int64_t at = static_cast<int64_t>(sizes.size()) - spatial - 1;
  if (bias.dim() != 1 || at < 0 || sizes[static_cast<size_t>(at)] != bias.size(0))
    fail("ad::conv_bias_expand", "a bias of shape ", bias.sizes(),
         " does not match the channels of an output of shape ", sizes);
  std::vector<int64_t> view(sizes.size(), 1);
  view[static_cast<size_t>(at)] = bias.size(0);
  return bias.reshape(view).expand(sizes);
}

Tensor conv_bias_backward(const Tensor& g, int64_t spatial) {
  const int64_t at = g.dim() - spatial - 1;
  if (at < 0) fail("ad::conv_bias_backward", "a gradient of shape ", g.sizes(), " has no channel dim");
  // The spatial dims first (each row's sum, in place in memory), then the batch dims.
  std::vector<int64_t> trailing, leading;
  for (int64_t d = 0; d < g.dim(); ++d) (d < at ? leading : trailing).push_back(d);
  trailing.erase(trailing.begin());  // the channel dim
  const Tensor per_channel = trailing.empty() ? g.clone() : g.sum(trailing);
  return leading.empty() ? per_channel : per_channel.sum(leading);
}

}  // namespace ad
}  // namespace fg
