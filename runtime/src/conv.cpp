// Convolutions: conv1d, conv2d and their transposes, and the derivative helpers they share
// (fg::ad::convolution, conv_backward_input, conv_backward_weight). Every one is im2col (or its
// adjoint, col2im) around one batched product per group on the runtime's GEMM: the columns are
// laid out [groups, C/groups * kernel, N * output positions], so the whole batch is one wide
// product per group rather than N narrow ones. A 1-D convolution is a 2-D one of height 1.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "funcgen/runtime/ad.h"
#include "internal.h"

namespace fg {
namespace {

using detail::fail;

// One convolution's geometry (of C(x, w), the forward convolution), 1-D as 2-D of height 1.
struct ConvGeometry {
  const char* op = "conv2d";
  int64_t spatial = 2;   // spatial dims of the user's tensors (1 or 2)
  bool batched = true;   // the input has its batch dim N
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
    fail(op, "expected a weight of 3 dims [out_channels, in_channels / groups, kL] or 4 dims [out_channels, "
         "in_channels / groups, kH, kW], got shape ", weight);
  const int64_t in_dims = static_cast<int64_t>(input.size());
  if (in_dims != g.spatial + 1 && in_dims != g.spatial + 2)
    fail(op, "expected a ", g.spatial + 1, "-D (unbatched) or ", g.spatial + 2, "-D (batched) input for a weight of shape ",
         weight, ", got shape ", input);
  g.batched = in_dims == g.spatial + 2;
  const size_t at = g.batched ? 1 : 0;
  g.n = g.batched ? input[0] : 1;
  g.c = input[at];
  g.o = weight[0];
  if (groups <= 0) fail(op, "groups must be positive, got ", groups);
  g.groups = groups;
  if (g.o % groups != 0)
    fail(op, "the weight's out_channels (", g.o, ", shape ", weight, ") must be divisible by groups (", groups, ")");
  if (weight[1] * groups != g.c)
    fail(op, "given groups=", groups, " and a weight of shape ", weight, ", expected an input with ", weight[1] * groups,
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
        total[d] = g.dilation[d] * (g.kernel[d] - 1);
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
      total[d] = 2 * p[d];
    }
  }
  for (size_t d = 0; d < 2; ++d) {
    const int64_t span = g.dilation[d] * (g.kernel[d] - 1) + 1;
    if (g.in[d] + total[d] < span)
      fail(op, "the padded input (shape ", input, ", padding ", total[d], " in spatial dim ", d + 2 - g.spatial,
           ") is smaller than the dilated kernel (", span, " elements, weight of shape ", weight, ")");
    g.out[d] = (g.in[d] + total[d] - span) / g.stride[d] + 1;
  }
  return g;
}

void check_tensors(const Tensor& input, const Tensor& weight, const char* op, const char* input_name = "input") {
  detail::check_defined(input, op, input_name);
  detail::check_defined(weight, op, "weight");
  detail::check_cpu(input, op);
  detail::check_cpu(weight, op);
  if (input.scalar_type() != weight.scalar_type())
    fail(op, input_name, " (", input.scalar_type(), ") and weight (", weight.scalar_type(), ") must have the same dtype");
  detail::dispatch_floating(input.scalar_type(), op, [](auto) {});
}

// x [N, C, H, W] (contiguous) into columns [groups, C/groups * kH * kW, N * oh * ow]: row
// (c, ki, kj) holds x[n, c, oy * sh - ph + ki * dh, ox * sw - pw + kj * dw], zero outside x.
template <typename T>
void im2col(const T* x, const ConvGeometry& g, T* cols) {
  const int64_t kk = g.kernel[0] * g.kernel[1], L = g.positions(), H = g.in[0], W = g.in[1];
  const int64_t rows = g.c * kk;
#pragma omp parallel for if (rows * g.n * L > (int64_t{1} << 16))
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t c = row / kk, ki = (row % kk) / g.kernel[1], kj = row % g.kernel[1];
    for (int64_t n = 0; n < g.n; ++n) {
      const T* src = x + (n * g.c + c) * H * W;
      T* dst = cols + (row * g.n + n) * L;
      for (int64_t oy = 0; oy < g.out[0]; ++oy, dst += g.out[1]) {
        const int64_t iy = oy * g.stride[0] - g.pad[0] + ki * g.dilation[0];
        if (iy < 0 || iy >= H) {
          std::fill(dst, dst + g.out[1], T(0));
          continue;
        }
        const T* line = src + iy * W;
        for (int64_t ox = 0; ox < g.out[1]; ++ox) {
          const int64_t ix = ox * g.stride[1] - g.pad[1] + kj * g.dilation[1];
          dst[ox] = ix >= 0 && ix < W ? line[ix] : T(0);
        }
      }
    }
  }
}

// The adjoint of im2col: each column entry added back into dx [N, C, H, W] (zeroed, contiguous).
// Parallel over channels: the rows of one channel write the same elements.
template <typename T>
void col2im(const T* cols, const ConvGeometry& g, T* dx) {
  const int64_t kk = g.kernel[0] * g.kernel[1], L = g.positions(), H = g.in[0], W = g.in[1];
#pragma omp parallel for if (g.c * kk * g.n * L > (int64_t{1} << 16))
  for (int64_t c = 0; c < g.c; ++c) {
    for (int64_t k = 0; k < kk; ++k) {
      const int64_t row = c * kk + k, ki = k / g.kernel[1], kj = k % g.kernel[1];
      for (int64_t n = 0; n < g.n; ++n) {
        T* dst = dx + (n * g.c + c) * H * W;
        const T* src = cols + (row * g.n + n) * L;
        for (int64_t oy = 0; oy < g.out[0]; ++oy, src += g.out[1]) {
          const int64_t iy = oy * g.stride[0] - g.pad[0] + ki * g.dilation[0];
          if (iy < 0 || iy >= H) continue;
          T* line = dst + iy * W;
          for (int64_t ox = 0; ox < g.out[1]; ++ox) {
            const int64_t ix = ox * g.stride[1] - g.pad[1] + kj * g.dilation[1];
            if (ix >= 0 && ix < W) line[ix] += src[ox];
          }
        }
      }
    }
  }
}

// The columns of x: [groups, rows, N * positions].
Tensor columns(const Tensor& x, const ConvGeometry& g) {
  const Tensor xc = x.contiguous();
  Tensor cols = empty({g.groups, g.rows(), g.n * g.positions()}, x.options());
  detail::dispatch_floating(x.scalar_type(), g.op, [&](auto t) {
    using T = decltype(t);
    im2col(static_cast<const T*>(xc.data_ptr()), g, static_cast<T*>(cols.data_ptr()));
  });
  return cols;
}

// [N, groups * m, positions] (N = 1 when unbatched) as [groups, m, N * positions], and back.
Tensor to_group_major(const Tensor& t, const ConvGeometry& g, int64_t m) {
  const Tensor v = t.reshape({g.n, g.groups, m, g.positions()});
  return g.n == 1 ? v.reshape({g.groups, m, g.positions()})
                  : v.permute({1, 2, 0, 3}).contiguous().reshape({g.groups, m, g.n * g.positions()});
}
Tensor from_group_major(const Tensor& t, const ConvGeometry& g, const std::vector<int64_t>& sizes) {
  if (g.n == 1) return t.reshape(sizes);
  return t.reshape({g.groups * t.size(1), g.n, g.positions()}).transpose(0, 1).contiguous().reshape(sizes);
}

// C(x, w), no bias.
Tensor conv_forward(const Tensor& x, const Tensor& w, const ConvGeometry& g) {
  const Tensor y = matmul(w.contiguous().reshape({g.groups, g.og(), g.rows()}), columns(x, g));
  return from_group_major(y, g, g.output_sizes());
}

// The adjoint of C in x: dx of the input's sizes for the output gradient dy.
Tensor conv_input_adjoint(const Tensor& dy, const Tensor& w, const ConvGeometry& g) {
  const Tensor wt = w.contiguous().reshape({g.groups, g.og(), g.rows()}).transpose(1, 2);
  const Tensor cols = matmul(wt, to_group_major(dy, g, g.og())).contiguous();
  Tensor dx = zeros(g.input_sizes(), dy.options());
  detail::dispatch_floating(dy.scalar_type(), g.op, [&](auto t) {
    using T = decltype(t);
    col2im(static_cast<const T*>(cols.data_ptr()), g, static_cast<T*>(dx.data_ptr()));
  });
  return dx;
}

// The adjoint of C in w: dw of `weight_sizes` for the output gradient dy.
Tensor conv_weight_adjoint(const Tensor& dy, const Tensor& x, const ConvGeometry& g, IntArrayRef weight_sizes) {
  return matmul(to_group_major(dy, g, g.og()), columns(x, g).transpose(1, 2)).reshape(weight_sizes);
}

void check_output(const Tensor& t, const ConvGeometry& g, const char* what) {
  const std::vector<int64_t> want = g.output_sizes();
  if (t.sizes() != IntArrayRef(want))
    fail(g.op, "expected ", what, " of shape ", IntArrayRef(want), " (the convolution's output), got ", t.sizes());
}

Tensor with_bias(Tensor out, const std::optional<Tensor>& bias, int64_t channels, int64_t spatial, const char* op) {
  if (!bias || !bias->defined()) return out;
  detail::check_cpu(*bias, op);
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

Tensor conv_transpose(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                      IntArrayRef dilation, int64_t spatial, const char* op) {
  check_tensors(input, weight, op);
  if (weight.dim() != spatial + 2)
    fail(op, "expected a ", spatial + 2, "-D weight [in_channels, out_channels / groups, kernel...], got shape ",
         weight.sizes());
  if (input.dim() != spatial + 1 && input.dim() != spatial + 2)
    fail(op, "expected a ", spatial + 1, "-D (unbatched) or ", spatial + 2, "-D (batched) input, got shape ",
         input.sizes());
  if (groups <= 0) fail(op, "groups must be positive, got ", groups);
  // The transposed convolution's output is the input of the convolution it is the adjoint of.
  const std::array<int64_t, 2> s = detail::spatial_arg(stride, spatial, 1, "stride", op), d = detail::spatial_arg(dilation, spatial, 1, "dilation", op),
                               p = detail::spatial_arg(padding, spatial, 0, "padding", op),
                               op_ = detail::spatial_arg(output_padding, spatial, 0, "output_padding", op);
  std::vector<int64_t> out_sizes = input.sizes().vec();
  const int64_t at = input.dim() - spatial - 1;
  out_sizes[static_cast<size_t>(at)] = weight.size(1) * groups;
  for (int64_t k = 0; k < spatial; ++k) {
    const size_t i = static_cast<size_t>(2 - spatial + k);
    if (s[i] <= 0 || d[i] <= 0 || p[i] < 0) fail(op, "stride and dilation must be positive and padding non-negative");
    if (op_[i] < 0 || op_[i] >= s[i])
      fail(op, "output_padding must be non-negative and smaller than stride, got output_padding ", output_padding,
           " and stride ", stride);
    out_sizes[static_cast<size_t>(at + 1 + k)] =
        (input.size(at + 1 + k) - 1) * s[i] - 2 * p[i] + d[i] * (weight.size(2 + k) - 1) + op_[i] + 1;
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
  return conv(input, weight, std::nullopt, stride, {}, &padding, dilation, groups, weight.dim() - 2,
              "ad::convolution");
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
    fail("ad::conv_bias_expand", "a bias of shape ", bias.sizes(), " does not match the channels of an output of shape ",
         sizes);
  std::vector<int64_t> view(sizes.size(), 1);
  view[static_cast<size_t>(at)] = bias.size(0);
  return bias.reshape(view).expand(sizes);
}

Tensor conv_bias_backward(const Tensor& g, int64_t spatial) {
  const int64_t at = g.dim() - spatial - 1;
  if (at < 0) fail("ad::conv_bias_backward", "a gradient of shape ", g.sizes(), " has no channel dim");
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < g.dim(); ++d)
    if (d != at) dims.push_back(d);
  return dims.empty() ? g.clone() : g.sum(dims);
}

}  // namespace ad
}  // namespace fg
