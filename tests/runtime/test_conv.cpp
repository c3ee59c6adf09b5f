// Convolutions: conv1d, conv2d, conv_transpose1d/2d and the derivative helpers (convolution,
// conv_backward_input, conv_backward_weight, the bias pair) against direct loops over the output
// (a scalar reference that shares nothing with im2col), for strides, paddings ("same" with even
// kernels, whose padding is uneven), dilations, groups, unbatched inputs, strided views, float32
// and float64; the batching rules against loops of the unbatched op; the errors.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "funcgen/runtime/vmap.h"
#include "reference.h"

namespace {

using fg::Tensor;
using ref::Array;
using ref::Layout;
using ref::Shape;

// One case: a batched input [N, C, S...] and weight [O, C/groups, K...]; 1 or 2 spatial dims.
struct Case {
  Shape input, weight;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  const char* mode = nullptr;  // "same" / "valid" instead of padding
};

// The reference geometry per spatial dim (a 1-D case as 2-D of height 1).
struct Geo {
  int64_t n, c, o, groups;
  std::array<int64_t, 2> in, k, out, s, pb, d;
};

Geo geo(const Case& cs) {
  const size_t sp = cs.weight.size() - 2;
  Geo g{cs.input[0], cs.input[1], cs.weight[0], cs.groups, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {1, 1}};
  for (size_t i = 0; i < sp; ++i) {
    const size_t j = 2 - sp + i;
    const auto pick = [&](const std::vector<int64_t>& v) { return v.size() == 1 ? v[0] : v[i]; };
    g.in[j] = cs.input[2 + i];
    g.k[j] = cs.weight[2 + i];
    g.s[j] = pick(cs.stride);
    g.d[j] = pick(cs.dilation);
    int64_t total = 2 * pick(cs.padding);
    if (cs.mode && std::string(cs.mode) == "same") total = g.d[j] * (g.k[j] - 1);
    if (cs.mode && std::string(cs.mode) == "valid") total = 0;
    g.pb[j] = total / 2;
    g.out[j] = (g.in[j] + total - g.d[j] * (g.k[j] - 1) - 1) / g.s[j] + 1;
  }
  return g;
}

Shape output_shape(const Case& cs, const Geo& g) {
  Shape s{g.n, g.o};
  if (cs.weight.size() == 4) s.push_back(g.out[0]);
  s.push_back(g.out[1]);
  return s;
}

// Calls f(n, o, c, oy, ox, iy, ix, ky, kx) for every product term of the convolution.
template <typename F>
void for_each_term(const Geo& g, F&& f) {
  const int64_t cg = g.c / g.groups, og = g.o / g.groups;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t cc = 0; cc < cg; ++cc)
        for (int64_t oy = 0; oy < g.out[0]; ++oy)
          for (int64_t ox = 0; ox < g.out[1]; ++ox)
            for (int64_t ky = 0; ky < g.k[0]; ++ky)
              for (int64_t kx = 0; kx < g.k[1]; ++kx) {
                const int64_t iy = oy * g.s[0] - g.pb[0] + ky * g.d[0], ix = ox * g.s[1] - g.pb[1] + kx * g.d[1];
                if (iy < 0 || iy >= g.in[0] || ix < 0 || ix >= g.in[1]) continue;
                f(n, o, (o / og) * cg + cc, cc, oy, ox, iy, ix, ky, kx);
              }
}

// Flat offsets of [N, C, H, W] / [O, Cg, KH, KW] arrays (1-D arrays have H = 1).
int64_t at4(int64_t a, int64_t b, int64_t y, int64_t x, int64_t B, int64_t Y, int64_t X) {
  return ((a * B + b) * Y + y) * X + x;
}

Array conv_ref(const Array& x, const Array& w, const Case& cs, const Geo& g) {
  Array out(output_shape(cs, g));
  for_each_term(g, [&](int64_t n, int64_t o, int64_t c, int64_t cc, int64_t oy, int64_t ox, int64_t iy, int64_t ix,
                       int64_t ky, int64_t kx) {
    out.data[at4(n, o, oy, ox, g.o, g.out[0], g.out[1])] +=
        x.data[at4(n, c, iy, ix, g.c, g.in[0], g.in[1])] * w.data[at4(o, cc, ky, kx, g.c / g.groups, g.k[0], g.k[1])];
  });
  return out;
}
Array input_grad_ref(const Array& dy, const Array& w, const Case& cs, const Geo& g) {
  Array dx(cs.input);
  for_each_term(g, [&](int64_t n, int64_t o, int64_t c, int64_t cc, int64_t oy, int64_t ox, int64_t iy, int64_t ix,
                       int64_t ky, int64_t kx) {
    dx.data[at4(n, c, iy, ix, g.c, g.in[0], g.in[1])] +=
        dy.data[at4(n, o, oy, ox, g.o, g.out[0], g.out[1])] * w.data[at4(o, cc, ky, kx, g.c / g.groups, g.k[0], g.k[1])];
  });
  return dx;
}
Array weight_grad_ref(const Array& dy, const Array& x, const Case& cs, const Geo& g) {
  Array dw(cs.weight);
  for_each_term(g, [&](int64_t n, int64_t o, int64_t c, int64_t cc, int64_t oy, int64_t ox, int64_t iy, int64_t ix,
                       int64_t ky, int64_t kx) {
    dw.data[at4(o, cc, ky, kx, g.c / g.groups, g.k[0], g.k[1])] +=
        dy.data[at4(n, o, oy, ox, g.o, g.out[0], g.out[1])] * x.data[at4(n, c, iy, ix, g.c, g.in[0], g.in[1])];
  });
  return dw;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> v = {
      {{2, 3, 6, 5}, {4, 3, 3, 3}, {1}, {0}, {1}},
      {{1, 1, 28, 28}, {8, 1, 3, 3}, {1}, {0}, {1}},  // the tutorial CNN's first layer
      {{2, 4, 7, 6}, {6, 2, 3, 2}, {2, 1}, {1, 0}, {1}, 2},
      {{2, 3, 9, 8}, {2, 3, 3, 3}, {2}, {2}, {2}},
      {{1, 6, 5, 5}, {6, 1, 3, 3}, {1}, {1}, {1}, 6},  // depthwise
      {{2, 2, 6, 7}, {3, 2, 2, 4}, {1}, {0}, {1, 2}, 1, "same"},
      {{2, 2, 5, 4}, {3, 2, 2, 2}, {1}, {0}, {1}, 1, "valid"},
      {{3, 2, 4, 4}, {5, 2, 1, 1}, {1}, {0}, {1}},
      {{2, 3, 11}, {4, 3, 3}, {2}, {1}, {1}},
      {{2, 4, 10}, {4, 2, 4}, {1}, {0}, {2}, 2, "same"},
      {{1, 2, 9}, {3, 2, 5}, {3}, {2}, {1}},
  };
  return v;
}

std::string describe(const Case& cs) {
  auto list = [](const std::vector<int64_t>& v) { return ref::shape_str(v); };
  return "input " + ref::shape_str(cs.input) + " weight " + ref::shape_str(cs.weight) + " stride " + list(cs.stride) +
         " padding " + (cs.mode ? cs.mode : list(cs.padding)) + " dilation " + list(cs.dilation) + " groups " +
         std::to_string(cs.groups);
}

Tensor run_conv(const Case& cs, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
  const bool two = cs.weight.size() == 4;
  if (cs.mode)
    return two ? fg::conv2d(x, w, b, cs.stride, std::string(cs.mode), cs.dilation, cs.groups)
               : fg::conv1d(x, w, b, cs.stride, std::string(cs.mode), cs.dilation, cs.groups);
  return two ? fg::conv2d(x, w, b, cs.stride, cs.padding, cs.dilation, cs.groups)
             : fg::conv1d(x, w, b, cs.stride, cs.padding, cs.dilation, cs.groups);
}

ref::Tol conv_tol(fg::ScalarType dt) { return dt == fg::kFloat ? ref::Tol{1e-4, 1e-4} : ref::Tol{1e-11, 1e-11}; }

TEST(Conv, ForwardMatchesDirectLoops) {
  ref::Rng rng(7);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble})
    for (Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Strided})
      for (const Case& cs : cases()) {
        SCOPED_TRACE(describe(cs) + " " + fg::toString(dt) + " " + ref::layout_name(layout));
        const Geo g = geo(cs);
        const ref::Input x = ref::make_input(cs.input, dt, layout, rng);
        const ref::Input w = ref::make_input(cs.weight, dt, Layout::Contiguous, rng);
        const ref::Input b = ref::make_input({cs.weight[0]}, dt, Layout::Strided, rng);
        Array want = conv_ref(ref::from_tensor(x.view), ref::from_tensor(w.view), cs, g);
        EXPECT_TRUE(ref::tensor_matches(run_conv(cs, x.view, w.view, std::nullopt), want, dt, conv_tol(dt)));
        const Array bias = ref::from_tensor(b.view);
        for (size_t i = 0; i < want.data.size(); ++i)
          want.data[i] += bias.data[(i / (want.data.size() / g.n / g.o)) % g.o];
        EXPECT_TRUE(ref::tensor_matches(run_conv(cs, x.view, w.view, b.view), want, dt, conv_tol(dt)));
        // Unbatched: the first example without its batch dim.
        const Tensor one = run_conv(cs, x.view.select(0, 0), w.view, b.view);
        EXPECT_TRUE(ref::tensor_matches(one, ref::from_tensor(run_conv(cs, x.view, w.view, b.view).select(0, 0)), dt,
                                        conv_tol(dt)));
      }
}

TEST(Conv, AdjointsMatchDirectLoops) {
  ref::Rng rng(8);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble})
    for (const Case& cs : cases()) {
      SCOPED_TRACE(describe(cs) + " " + fg::toString(dt));
      const Geo g = geo(cs);
      const ref::Input x = ref::make_input(cs.input, dt, Layout::Transposed, rng);
      const ref::Input w = ref::make_input(cs.weight, dt, Layout::Strided, rng);
      const ref::Input dy = ref::make_input(output_shape(cs, g), dt, Layout::Transposed, rng);
      const Array dyr = ref::from_tensor(dy.view);
      const Tensor dx = cs.mode ? fg::ad::conv_backward_input(dy.view, cs.input, w.view, cs.stride, std::string(cs.mode),
                                                              cs.dilation, cs.groups)
                                : fg::ad::conv_backward_input(dy.view, cs.input, w.view, cs.stride, cs.padding,
                                                              cs.dilation, cs.groups);
      EXPECT_TRUE(ref::tensor_matches(dx, input_grad_ref(dyr, ref::from_tensor(w.view), cs, g), dt, conv_tol(dt)));
      const Tensor dw = cs.mode ? fg::ad::conv_backward_weight(dy.view, x.view, cs.weight, cs.stride,
                                                               std::string(cs.mode), cs.dilation, cs.groups)
                                : fg::ad::conv_backward_weight(dy.view, x.view, cs.weight, cs.stride, cs.padding,
                                                               cs.dilation, cs.groups);
      EXPECT_TRUE(ref::tensor_matches(dw, weight_grad_ref(dyr, ref::from_tensor(x.view), cs, g), dt, conv_tol(dt)));
      // The bias pair: expand and its adjoint, the sum over every dim but the channels.
      const Tensor db = fg::ad::conv_bias_backward(dy.view, static_cast<int64_t>(cs.weight.size()) - 2);
      const Tensor dy_c = fg::movedim(dy.view, 1, -1).reshape({-1, g.o});
      EXPECT_TRUE(ref::tensor_matches(db, ref::from_tensor(dy_c.sum({0})), dt, conv_tol(dt)));
    }
}

// An empty batch and no input channels: empty or zero results, as torch (no division by a chunk
// count of zero, no product of an empty inner dimension reaching BLAS).
TEST(Conv, EmptyBatchAndNoInputChannels) {
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble}) {
    const Tensor w = fg::ones({4, 2, 3, 3}, dt);
    EXPECT_EQ(fg::conv2d(fg::zeros({0, 2, 6, 6}, dt), w).sizes(), fg::IntArrayRef({0, 4, 4, 4}));
    EXPECT_EQ(fg::ad::conv_backward_input(fg::zeros({0, 4, 4, 4}, dt), {0, 2, 6, 6}, w, 1, 0, 1, 1).sizes(),
              fg::IntArrayRef({0, 2, 6, 6}));
    const Tensor dw = fg::ad::conv_backward_weight(fg::zeros({0, 4, 4, 4}, dt), fg::zeros({0, 2, 6, 6}, dt),
                                                   {4, 2, 3, 3}, 1, 0, 1, 1);
    EXPECT_EQ(dw.sizes(), fg::IntArrayRef({4, 2, 3, 3}));
    EXPECT_EQ(dw.abs().sum().item<double>(), 0.0);
    const Tensor y = fg::conv2d(fg::ones({2, 0, 6, 6}, dt), fg::ones({4, 0, 3, 3}, dt), fg::ones({4}, dt));
    EXPECT_EQ(y.sizes(), fg::IntArrayRef({2, 4, 4, 4}));
    EXPECT_EQ(y.sum().item<double>(), 2.0 * 4 * 16);  // the bias alone
  }
}

TEST(ConvTranspose, IsTheAdjointWithOutputPaddingAndBias) {
  ref::Rng rng(9);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble})
    for (const Case& cs : cases()) {
      if (cs.mode) continue;
      for (int64_t out_pad : {0, 1}) {
        SCOPED_TRACE(describe(cs) + " output_padding " + std::to_string(out_pad) + " " + fg::toString(dt));
        if (out_pad >= cs.stride[0] || (cs.stride.size() > 1 && out_pad >= cs.stride[1])) continue;
        // The transposed convolution maps the convolution's output [N, O, S'] back to an input
        // grown by output_padding at the end of each spatial dim.
        const Geo g0 = geo(cs);
        Case grown = cs;
        for (size_t i = 2; i < grown.input.size(); ++i) {
          const size_t j = 4 - grown.input.size() + i - 2;  // the Geo entry of spatial dim i
          grown.input[i] = (g0.out[j] - 1) * g0.s[j] - 2 * g0.pb[j] + g0.d[j] * (g0.k[j] - 1) + out_pad + 1;
        }
        const Geo g = geo(grown);
        if (output_shape(grown, g) != output_shape(cs, geo(cs))) continue;  // the extra row changes the output
        const ref::Input y = ref::make_input(output_shape(cs, g), dt, Layout::Contiguous, rng);
        const ref::Input w = ref::make_input(cs.weight, dt, Layout::Contiguous, rng);
        const ref::Input b = ref::make_input({cs.weight[1] * cs.groups}, dt, Layout::Contiguous, rng);
        const bool two = cs.weight.size() == 4;
        const Tensor got = two ? fg::conv_transpose2d(y.view, w.view, b.view, cs.stride, cs.padding, out_pad,
                                                      cs.groups, cs.dilation)
                               : fg::conv_transpose1d(y.view, w.view, b.view, cs.stride, cs.padding, out_pad,
                                                      cs.groups, cs.dilation);
        Array want = input_grad_ref(ref::from_tensor(y.view), ref::from_tensor(w.view), grown, g);
        const Array bias = ref::from_tensor(b.view);
        const int64_t per_channel = want.numel() / g.n / g.c;
        for (int64_t i = 0; i < want.numel(); ++i) want.data[i] += bias.data[(i / per_channel) % g.c];
        EXPECT_TRUE(ref::tensor_matches(got, want, dt, conv_tol(dt)));
      }
    }
}

// vmap's rules equal a loop over the examples of the unbatched op, for the input batched alone,
// the weight alone, both (at one level and at two), and a batched bias.
TEST(ConvBatchingRules, EqualTheLoopOfUnbatchedCalls) {
  using fg::vmap::Batched;
  ref::Rng rng(10);
  const fg::ScalarType dt = fg::kDouble;
  for (const Case& cs : cases()) {
    if (cs.mode) continue;
    SCOPED_TRACE(describe(cs));
    const bool two = cs.weight.size() == 4;
    const auto op = [&](const Tensor& x, const Tensor& w, const Tensor& b) {
      return two ? fg::conv2d(x, w, b, cs.stride, cs.padding, cs.dilation, cs.groups)
                 : fg::conv1d(x, w, b, cs.stride, cs.padding, cs.dilation, cs.groups);
    };
    const auto rule = [&](const Batched& x, const Batched& w, const Batched& b) {
      return two ? fg::vmap::conv2d(x, w, b, cs.stride, cs.padding, cs.dilation, cs.groups)
                 : fg::vmap::conv1d(x, w, b, cs.stride, cs.padding, cs.dilation, cs.groups);
    };
    const int64_t B = 3;
    const auto with_batch = [&](const Shape& s) {
      Shape r{B};
      r.insert(r.end(), s.begin(), s.end());
      return ref::make_input(r, dt, Layout::Contiguous, rng).view;
    };
    const Tensor xs = with_batch(cs.input), ws = with_batch(cs.weight), bs = with_batch({cs.weight[0]});
    const Tensor x0 = xs.select(0, 0), w0 = ws.select(0, 0), b0 = bs.select(0, 0);
    for (int which = 0; which < 4; ++which) {
      SCOPED_TRACE("batched: " + std::string(which == 0 ? "input" : which == 1 ? "weight" : which == 2 ? "both" : "bias"));
      const bool bx = which == 0 || which == 2, bw = which == 1 || which == 2, bb = which == 3;
      const Batched r = rule({bx ? xs : x0, bx ? 1u : 0u}, {bw ? ws : w0, bw ? 1u : 0u}, {bb ? bs : b0, bb ? 1u : 0u});
      std::vector<Tensor> loop;
      for (int64_t i = 0; i < B; ++i)
        loop.push_back(op(bx ? xs.select(0, i) : x0, bw ? ws.select(0, i) : w0, bb ? bs.select(0, i) : b0));
      EXPECT_EQ(r.levels, 1u);
      EXPECT_TRUE(ref::tensor_matches(r.value, ref::from_tensor(fg::stack(loop)), dt, conv_tol(dt)));
    }
    // Two levels: the input at level 0 (size 2), the weight at level 1 (size 3), unbatched input.
    const Tensor x2 = ref::make_input({2, cs.input[1], cs.input[2], cs.weight.size() == 4 ? cs.input[3] : 1}, dt,
                                      Layout::Contiguous, rng)
                          .view;
    const Tensor xin = two ? x2 : x2.select(-1, 0);
    const Batched r = rule({xin, 1u}, {ws, 2u}, Batched{});
    std::vector<Tensor> outer;
    for (int64_t i = 0; i < 2; ++i) {
      std::vector<Tensor> inner;
      for (int64_t j = 0; j < B; ++j) inner.push_back(op(xin.select(0, i), ws.select(0, j), Tensor()));
      outer.push_back(fg::stack(inner));
    }
    EXPECT_EQ(r.levels, 3u);
    EXPECT_TRUE(ref::tensor_matches(r.value, ref::from_tensor(fg::stack(outer)), dt, conv_tol(dt)));
  }
}

TEST(ConvBatchingRules, AdjointsEqualTheLoop) {
  using fg::vmap::Batched;
  ref::Rng rng(11);
  const fg::ScalarType dt = fg::kDouble;
  for (const Case& cs : cases()) {
    if (cs.mode) continue;
    SCOPED_TRACE(describe(cs));
    const Geo g = geo(cs);
    const int64_t B = 2;
    const auto with_batch = [&](const Shape& s) {
      Shape r{B};
      r.insert(r.end(), s.begin(), s.end());
      return ref::make_input(r, dt, Layout::Contiguous, rng).view;
    };
    const Tensor gs = with_batch(output_shape(cs, g)), xs = with_batch(cs.input), ws = with_batch(cs.weight);
    for (int which = 0; which < 3; ++which) {
      const bool b1 = which != 1, b2 = which != 0;  // the gradient batched, the other operand batched
      SCOPED_TRACE("case " + std::to_string(which));
      const Tensor g0 = gs.select(0, 0), x0 = xs.select(0, 0), w0 = ws.select(0, 0);
      const Batched di = fg::vmap::ad::conv_backward_input({b1 ? gs : g0, b1 ? 1u : 0u}, cs.input,
                                                           {b2 ? ws : w0, b2 ? 1u : 0u}, cs.stride, cs.padding,
                                                           cs.dilation, cs.groups);
      const Batched dw = fg::vmap::ad::conv_backward_weight({b1 ? gs : g0, b1 ? 1u : 0u},
                                                            {b2 ? xs : x0, b2 ? 1u : 0u}, cs.weight, cs.stride,
                                                            cs.padding, cs.dilation, cs.groups);
      std::vector<Tensor> li, lw;
      for (int64_t i = 0; i < B; ++i) {
        const Tensor gi = b1 ? gs.select(0, i) : g0;
        li.push_back(fg::ad::conv_backward_input(gi, cs.input, b2 ? ws.select(0, i) : w0, cs.stride, cs.padding,
                                                 cs.dilation, cs.groups));
        lw.push_back(fg::ad::conv_backward_weight(gi, b2 ? xs.select(0, i) : x0, cs.weight, cs.stride, cs.padding,
                                                  cs.dilation, cs.groups));
      }
      EXPECT_TRUE(ref::tensor_matches(di.value, ref::from_tensor(fg::stack(li)), dt, conv_tol(dt)));
      EXPECT_TRUE(ref::tensor_matches(dw.value, ref::from_tensor(fg::stack(lw)), dt, conv_tol(dt)));
    }
  }
}

TEST(ConvErrors, NameTheOpAndTheOperands) {
  const Tensor x = fg::zeros({64, 3, 28, 28}), w = fg::zeros({32, 1, 3, 3});
  EXPECT_FG_ERROR(fg::conv2d(x, w),
                  "fg::conv2d: given groups=1 and a weight of shape [32, 1, 3, 3], expected an input with 1 channels, "
                  "got shape [64, 3, 28, 28] (3 channels)");
  EXPECT_FG_ERROR(fg::conv2d(fg::zeros({28, 28}), w),
                  "fg::conv2d: expected a 3-D (unbatched) or 4-D (batched) input for a weight of shape [32, 1, 3, 3], "
                  "got shape [28, 28]");
  EXPECT_FG_ERROR(fg::conv2d(x, fg::zeros({32, 3, 3})),
                  "fg::conv2d: expected a 4-D weight [out_channels, in_channels / groups, kernel...], got shape [32, 3, 3]");
  EXPECT_FG_ERROR(fg::conv2d(fg::zeros({1, 1, 2, 2}), w),
                  "fg::conv2d: the padded input (shape [1, 1, 2, 2], padding 0 in spatial dim 0) is smaller than the "
                  "dilated kernel (3 elements, weight of shape [32, 1, 3, 3])");
  EXPECT_FG_ERROR(fg::conv2d(fg::zeros({1, 1, 5, 5}), w, fg::zeros({31})),
                  "fg::conv2d: expected a bias of shape [32] (one per output channel), got [31]");
  EXPECT_FG_ERROR(fg::conv2d(fg::zeros({1, 1, 5, 5}), w, std::nullopt, {1, 1, 1}),
                  "fg::conv2d: expected stride to be one integer or a list of 2, got [1, 1, 1]");
  EXPECT_FG_ERROR(fg::conv2d(fg::zeros({1, 1, 5, 5}), w, std::nullopt, 0), "fg::conv2d: stride must be positive, got [0]");
  EXPECT_FG_ERROR(fg::conv2d(fg::zeros({1, 1, 5, 5}), w, std::nullopt, 1, -1),
                  "fg::conv2d: padding must be non-negative, got [-1]");
  EXPECT_FG_ERROR(fg::conv2d(fg::zeros({1, 1, 5, 5}), w, std::nullopt, 2, "same"),
                  "fg::conv2d: padding=\"same\" is not supported for strided convolutions (stride [2])");
  EXPECT_FG_ERROR(fg::conv2d(fg::zeros({1, 1, 5, 5}), w, std::nullopt, 1, "full"),
                  "fg::conv2d: padding must be \"same\", \"valid\" or integers, got \"full\"");
  EXPECT_FG_ERROR(fg::conv2d(fg::zeros({1, 4, 5, 5}), fg::zeros({6, 2, 3, 3}), std::nullopt, 1, 0, 1, 4),
                  "fg::conv2d: the weight's out_channels (6, shape [6, 2, 3, 3]) must be divisible by groups (4)");
  EXPECT_FG_ERROR(fg::conv2d(fg::zeros({1, 1, 5, 5}), fg::zeros({2, 1, 3, 3}, fg::kDouble)),
                  "fg::conv2d: input (float32) and weight (float64) must have the same dtype");
  EXPECT_FG_ERROR(fg::conv1d(fg::zeros({1, 1, 5}, fg::kLong), fg::zeros({2, 1, 3}, fg::kLong)),
                  "fg::conv1d: expected a floating-point tensor (float32 or float64), got int64");
  EXPECT_FG_ERROR(fg::conv_transpose2d(fg::zeros({1, 2, 4, 4}), fg::zeros({2, 3, 3, 3}), std::nullopt, 2, 0, 2),
                  "fg::conv_transpose2d: output_padding must be non-negative and smaller than stride, got "
                  "output_padding [2] and stride [2]");
  EXPECT_FG_ERROR(fg::conv_transpose2d(fg::zeros({1, 3, 4, 4}), fg::zeros({2, 3, 3, 3})),
                  "fg::conv_transpose2d: expected an input with 2 channels (the weight's dim 0, shape [2, 3, 3, 3]), "
                  "got shape [1, 3, 4, 4]");
  EXPECT_FG_ERROR(fg::ad::conv_backward_input(fg::zeros({1, 2, 3, 3}), {1, 1, 5, 5}, fg::zeros({2, 1, 2, 2}), 1, 0, 1, 1),
                  "fg::ad::conv_backward_input: expected a gradient of shape [1, 2, 4, 4] (the convolution's output), "
                  "got [1, 2, 3, 3]");
}

}  // namespace

// ------------------------------------------------------------------ pooling

namespace {

// The reference windows of one output position along one dim: [start, end) of the input with the
// padding and dilation, as torch documents them.
struct PoolCase {
  size_t spatial;
  Shape input;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

int64_t ref_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const double span = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// max_pool over the last 1 or 2 dims by direct loops; `arg` gets each output's flat input index.
Array max_pool_ref(const Array& x, const PoolCase& pc, std::vector<int64_t>* arg) {
  const size_t sp = pc.spatial, nd = x.shape.size();
  const auto pick = [](const std::vector<int64_t>& v, size_t i, int64_t dflt) {
    return v.empty() ? dflt : v.size() == 1 ? v[0] : v[i];
  };
  const int64_t H = sp == 2 ? x.shape[nd - 2] : 1, W = x.shape[nd - 1];
  std::array<int64_t, 2> k{1, 1}, s{1, 1}, p{0, 0}, d{1, 1}, in{H, W}, out{1, 1};
  for (size_t i = 0; i < sp; ++i) {
    const size_t j = 2 - sp + i;
    k[j] = pick(pc.kernel, i, 1);
    s[j] = pick(pc.stride, i, k[j]);
    p[j] = pick(pc.padding, i, 0);
    d[j] = pick(pc.dilation, i, 1);
    out[j] = ref_out(in[j], k[j], s[j], p[j], d[j], pc.ceil_mode);
  }
  Shape os(x.shape.begin(), x.shape.end() - static_cast<int64_t>(sp));
  if (sp == 2) os.push_back(out[0]);
  os.push_back(out[1]);
  Array r(os);
  const int64_t planes = x.numel() / (H * W);
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t oy = 0; oy < out[0]; ++oy)
      for (int64_t ox = 0; ox < out[1]; ++ox) {
        double best = -INFINITY;
        int64_t at = -1;
        for (int64_t ky = 0; ky < k[0]; ++ky)
          for (int64_t kx = 0; kx < k[1]; ++kx) {
            const int64_t iy = oy * s[0] - p[0] + ky * d[0], ix = ox * s[1] - p[1] + kx * d[1];
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            const double v = x.data[pl * H * W + iy * W + ix];
            if (v > best) {
              best = v;
              at = pl * H * W + iy * W + ix;
            }
          }
        r.data[(pl * out[0] + oy) * out[1] + ox] = best;
        if (arg) arg->push_back(at);
      }
  return r;
}

Tensor run_max_pool(const PoolCase& pc, const Tensor& x) {
  return pc.spatial == 2 ? fg::max_pool2d(x, pc.kernel, pc.stride, pc.padding, pc.dilation, pc.ceil_mode)
                               : fg::max_pool1d(x, pc.kernel, pc.stride, pc.padding, pc.dilation, pc.ceil_mode);
}

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> v = {
      {2, {2, 3, 6, 6}, {2}, {}, {0}, {1}},  // the tutorial CNN's max_pool2d(x, 2)
      {2, {2, 5, 7}, {3, 2}, {2, 1}, {1, 0}, {1}, true},
      {2, {1, 2, 9, 8}, {3}, {2}, {1}, {2}, true},
      {1, {3, 10}, {4}, {3}, {2}, {1}, true},
      {1, {2, 2, 9}, {2}, {}, {1}, {3}},
  };
  return v;
}

}  // namespace

TEST(MaxPool, MatchesDirectLoopsAndItsDerivativesUseTheSameMaxima) {
  ref::Rng rng(21);
  for (fg::ScalarType dt : {fg::kFloat, fg::kDouble})
    for (Layout layout : {Layout::Contiguous, Layout::Transposed})
      for (const PoolCase& pc : pool_cases()) {
        SCOPED_TRACE(ref::shape_str(pc.input) + " kernel " + ref::shape_str(pc.kernel) + " " + fg::toString(dt));
        const ref::Input x = ref::make_input(pc.input, dt, layout, rng);
        std::vector<int64_t> arg;
        const Array want = max_pool_ref(ref::from_tensor(x.view), pc, &arg);
        EXPECT_TRUE(ref::tensor_matches(run_max_pool(pc, x.view), want, dt, ref::exact()));
        const int64_t sp = static_cast<int64_t>(pc.spatial);
        const ref::Input t = ref::make_input(pc.input, dt, Layout::Strided, rng);
        const Array tv = ref::from_tensor(t.view);
        Array gathered(want.shape);
        for (size_t i = 0; i < arg.size(); ++i) gathered.data[i] = tv.data[static_cast<size_t>(arg[i])];
        EXPECT_TRUE(ref::tensor_matches(fg::ad::max_pool_gather(t.view, x.view, pc.kernel, pc.stride, pc.padding,
                                                                pc.dilation, pc.ceil_mode, sp),
                                        gathered, dt, ref::exact()));
        const ref::Input g = ref::make_input(want.shape, dt, Layout::Contiguous, rng);
        const Array gv = ref::from_tensor(g.view);
        Array scattered(pc.input);
        for (size_t i = 0; i < arg.size(); ++i) scattered.data[static_cast<size_t>(arg[i])] += gv.data[i];
        EXPECT_TRUE(ref::tensor_matches(fg::ad::max_pool_scatter(g.view, x.view, pc.kernel, pc.stride, pc.padding,
                                                                 pc.dilation, pc.ceil_mode, sp),
                                        scattered, dt, ref::tol_for(dt)));
      }
  // NaN is every window's maximum, as in torch
  const Tensor x = fg::tensor({1.0, NAN, 3.0, 0.0}).reshape({1, 1, 4});
  EXPECT_TRUE(std::isnan(fg::max_pool1d(x, 2).select(-1, 0).item<double>()));
  EXPECT_EQ(fg::max_pool1d(x, 2).select(-1, 1).item<double>(), 3.0);
  // the gradient goes to the last NaN of a window, as torch's index does
  const Tensor nans = fg::tensor({1.0, NAN, 2.0, NAN}, fg::kDouble).reshape({1, 1, 4});
  EXPECT_TRUE(ref::arrays_equal(
      ref::from_tensor(fg::ad::max_pool_scatter(fg::ones({1, 1, 1}, fg::kDouble), nans, 4, {}, 0, 1, false, 1)),
      Array({1, 1, 4}, {0, 0, 0, 1})));
}

TEST(AvgPool, MatchesDirectLoopsAndTheAdjointIsItsTranspose) {
  ref::Rng rng(22);
  const Tensor x = ref::make_input({2, 3, 7, 6}, fg::kDouble, Layout::Transposed, rng).view;
  const Array xv = ref::from_tensor(x);
  struct C {
    int64_t k, s, p;
    bool ceil, include_pad;
    std::optional<int64_t> divisor;
  };
  for (const C& c : {C{2, 2, 0, false, true, {}}, C{3, 2, 1, true, false, {}}, C{3, 2, 1, true, true, {}},
                     C{2, 1, 1, false, true, 5}}) {
    SCOPED_TRACE("kernel " + std::to_string(c.k) + " stride " + std::to_string(c.s) + " padding " + std::to_string(c.p));
    const Tensor got = fg::avg_pool2d(x, c.k, c.s, c.p, c.ceil, c.include_pad, c.divisor);
    const int64_t oh = ref_out(7, c.k, c.s, c.p, 1, c.ceil), ow = ref_out(6, c.k, c.s, c.p, 1, c.ceil);
    Array want({2, 3, oh, ow});
    for (int64_t pl = 0; pl < 6; ++pl)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t y0 = oy * c.s - c.p, x0 = ox * c.s - c.p;
          const int64_t y1 = std::min(y0 + c.k, 7 + c.p), x1 = std::min(x0 + c.k, 6 + c.p);
          double sum = 0;
          int64_t inside = 0;
          for (int64_t y = std::max<int64_t>(y0, 0); y < std::min<int64_t>(y1, 7); ++y)
            for (int64_t xx = std::max<int64_t>(x0, 0); xx < std::min<int64_t>(x1, 6); ++xx, ++inside)
              sum += xv.data[pl * 42 + y * 6 + xx];
          const double div = c.divisor ? *c.divisor : c.include_pad ? (y1 - y0) * (x1 - x0) : inside;
          want.data[(pl * oh + oy) * ow + ox] = sum / div;
        }
    EXPECT_TRUE(ref::tensor_matches(got, want, fg::kDouble, ref::tol_for(fg::kDouble)));
    // <avg_pool(x), g> == <x, avg_pool_backward(g)>
    const Tensor g = ref::make_input({2, 3, oh, ow}, fg::kDouble, Layout::Contiguous, rng).view;
    const Tensor back = fg::ad::avg_pool2d_backward(g, x.sizes(), c.k, c.s, c.p, c.ceil, c.include_pad, c.divisor);
    EXPECT_NEAR((got * g).sum().item<double>(), (x * back).sum().item<double>(), 1e-10);
  }
}

TEST(AdaptiveAvgPool, MatchesDirectLoopsAndTheAdjointIsItsTranspose) {
  ref::Rng rng(23);
  const Tensor x = ref::make_input({3, 7, 5}, fg::kDouble, Layout::Strided, rng).view;
  const Array xv = ref::from_tensor(x);
  for (const std::vector<int64_t>& os : {std::vector<int64_t>{3, 2}, {1, 1}, {7, 5}, {4, 4}}) {
    const Tensor got = fg::adaptive_avg_pool2d(x, os);
    Array want({3, os[0], os[1]});
    for (int64_t pl = 0; pl < 3; ++pl)
      for (int64_t i = 0; i < os[0]; ++i)
        for (int64_t j = 0; j < os[1]; ++j) {
          const int64_t y0 = i * 7 / os[0], y1 = ((i + 1) * 7 + os[0] - 1) / os[0];
          const int64_t x0 = j * 5 / os[1], x1 = ((j + 1) * 5 + os[1] - 1) / os[1];
          double sum = 0;
          for (int64_t y = y0; y < y1; ++y)
            for (int64_t xx = x0; xx < x1; ++xx) sum += xv.data[pl * 35 + y * 5 + xx];
          want.data[(pl * os[0] + i) * os[1] + j] = sum / static_cast<double>((y1 - y0) * (x1 - x0));
        }
    EXPECT_TRUE(ref::tensor_matches(got, want, fg::kDouble, ref::tol_for(fg::kDouble)));
    const Tensor g = ref::make_input({3, os[0], os[1]}, fg::kDouble, Layout::Contiguous, rng).view;
    EXPECT_NEAR((got * g).sum().item<double>(), (x * fg::ad::adaptive_avg_pool2d_backward(g, x.sizes())).sum().item<double>(),
                1e-10);
  }
}

TEST(PoolBatchingRules, EqualTheLoop) {
  using fg::vmap::Batched;
  ref::Rng rng(24);
  const Tensor xs = ref::make_input({3, 2, 2, 6, 5}, fg::kDouble, Layout::Contiguous, rng).view;
  std::vector<Tensor> mp, ap, aap, gath;
  const Tensor ts = ref::make_input({3, 2, 2, 6, 5}, fg::kDouble, Layout::Contiguous, rng).view;
  for (int64_t i = 0; i < 3; ++i) {
    mp.push_back(fg::max_pool2d(xs.select(0, i), 2, 1, 1, 1, true));
    ap.push_back(fg::avg_pool2d(xs.select(0, i), 3, 2, 1, true, false));
    aap.push_back(fg::adaptive_avg_pool2d(xs.select(0, i), {2, 3}));
    gath.push_back(fg::ad::max_pool_gather(ts.select(0, i), xs.select(0, 0), 2, {}, 0, 1, false, 2));
  }
  EXPECT_TRUE(ref::arrays_equal(ref::from_tensor(fg::vmap::max_pool2d({xs, 1u}, 2, 1, 1, 1, true).value),
                                ref::from_tensor(fg::stack(mp))));
  EXPECT_TRUE(ref::arrays_equal(ref::from_tensor(fg::vmap::avg_pool2d({xs, 1u}, 3, 2, 1, true, false, {}).value),
                                ref::from_tensor(fg::stack(ap))));
  EXPECT_TRUE(ref::tensor_matches(fg::vmap::adaptive_avg_pool2d({xs, 1u}, {2, 3}).value, ref::from_tensor(fg::stack(aap)),
                                  fg::kDouble, ref::tol_for(fg::kDouble)));
  // the tangent batched, self not: every example reads at self's maxima
  EXPECT_TRUE(ref::arrays_equal(
      ref::from_tensor(fg::vmap::ad::max_pool_gather({ts, 1u}, {xs.select(0, 0), 0u}, 2, {}, 0, 1, false, 2).value),
      ref::from_tensor(fg::stack(gath))));
}

TEST(ConvBatchingRules, RankErrorsAreFgErrors) {
  using fg::vmap::Batched;
  EXPECT_FG_ERROR(fg::vmap::conv2d(Batched{fg::zeros({3, 5}), 1u}, Batched{fg::zeros({2, 1, 3, 3}), 0u}, Batched{}, 1,
                                   0, 1, 1),
                  "fg::vmap: conv2d: expected a 3-D (unbatched) or 4-D (batched) input for a weight of logical shape "
                  "[2, 1, 3, 3], got logical shape [5]");
  EXPECT_FG_ERROR(fg::vmap::conv2d(Batched{fg::zeros({3, 1, 5, 5}), 1u}, Batched{fg::zeros({}), 0u}, Batched{}, 1, 0,
                                   1, 1),
                  "fg::vmap: conv2d: expected a weight of 3 or 4 dims, got logical shape []");
  EXPECT_FG_ERROR(fg::vmap::conv2d(Batched{fg::zeros({3, 1, 1, 1, 5, 5}), 1u}, Batched{fg::zeros({2, 1, 3, 3}), 0u},
                                   Batched{}, 1, 0, 1, 1),
                  "fg::vmap: conv2d: expected a 3-D (unbatched) or 4-D (batched) input for a weight of logical shape "
                  "[2, 1, 3, 3], got logical shape [1, 1, 1, 5, 5]");
}

TEST(PoolErrors, NameTheOpAndTheOperands) {
  EXPECT_FG_ERROR(fg::max_pool2d(fg::zeros({5}), 2),
                  "fg::max_pool2d: expected a 3-D (unbatched) or 4-D (batched) input, got shape [5]");
  EXPECT_FG_ERROR(fg::max_pool2d(fg::zeros({1, 4, 4}), 2, 1, 2),
                  "fg::max_pool2d: padding must be non-negative and at most half of the dilated kernel (dilation * "
                  "(kernel_size - 1) + 1), got padding [2], kernel_size [2] and dilation [1]");
  EXPECT_EQ(fg::max_pool2d(fg::zeros({1, 8, 8}), 2, 1, 2, 3).sizes(), fg::IntArrayRef({1, 9, 9}));  // as torch
  EXPECT_FG_ERROR(fg::max_pool2d(fg::zeros({1, 4, 4}), {2, 2, 2}),
                  "fg::max_pool2d: expected kernel_size to be one integer or a list of 2, got [2, 2, 2]");
  EXPECT_FG_ERROR(fg::max_pool2d(fg::zeros({1, 1, 1}), 3),
                  "fg::max_pool2d: the output would be empty: input of shape [1, 1, 1] with kernel_size [3], stride [], "
                  "padding [0] and dilation [1]");
  EXPECT_FG_ERROR(fg::avg_pool2d(fg::zeros({1, 4, 4}), 2, {}, 0, false, true, 0),
                  "fg::avg_pool2d: divisor_override must be non-zero");
  EXPECT_FG_ERROR(fg::adaptive_avg_pool2d(fg::zeros({1, 4, 4}, fg::kLong), 2),
                  "fg::adaptive_avg_pool2d: expected a floating-point tensor (float32 or float64), got int64");
  EXPECT_FG_ERROR(fg::ad::max_pool_scatter(fg::zeros({1, 2, 2}, fg::kDouble), fg::zeros({1, 4, 4}), 2, {}, 0, 1, false, 2),
                  "fg::ad::max_pool_scatter: gradient (float64) and self (float32) must have the same dtype");
  EXPECT_FG_ERROR(fg::ad::max_pool_scatter(fg::zeros({1, 3, 3}), fg::zeros({1, 4, 4}), 2, {}, 0, 1, false, 2),
                  "fg::ad::max_pool_scatter: expected a gradient of shape [1, 2, 2], got [1, 3, 3]");
}
