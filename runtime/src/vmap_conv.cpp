// Batching rules of the convolutions, the pools and their derivative helpers. Pools treat every
// dim before the pooled ones as a plane, so the batch dims simply join the planes. Convolutions,
// as functorch's rules: with only the
// feature map batched, the batch dims are folded into the convolution's own batch dim N (one call,
// no copy); with the weight batched too, both are given every level and the batch is folded into
// the channels, with B times the groups, so that each example convolves with its own weight.
#include <vector>

#include "funcgen/runtime/ad.h"
#include "funcgen/runtime/vmap.h"
#include "vmap_internal.h"

namespace fg::vmap {
namespace {

using namespace detail;

// A convolution's padding, as numbers or as "same"/"valid".
struct Padding {
  IntArrayRef ints;
  const PaddingMode* mode = nullptr;
};

Tensor convolve(const Tensor& x, const Tensor& w, IntArrayRef stride, const Padding& p, IntArrayRef dilation,
                int64_t groups) {
  return p.mode ? fg::ad::convolution(x, w, stride, *p.mode, dilation, groups)
                : fg::ad::convolution(x, w, stride, p.ints, dilation, groups);
}

using fg::detail::product;
std::vector<int64_t> cat(IntArrayRef a, IntArrayRef b) {
  std::vector<int64_t> r = a.vec();
  r.insert(r.end(), b.begin(), b.end());
  return r;
}
std::vector<int64_t> last(IntArrayRef v, int64_t n) {
  if (n > static_cast<int64_t>(v.size())) vfail("conv", "internal error: ", v, " has fewer than ", n, " dims");
  return std::vector<int64_t>(v.end() - n, v.end());
}

// A convolution's weight has 1 or 2 spatial dims and its feature map (input or output gradient)
// one or two dims more (unbatched or batched), as the unbatched ops require; checked before any
// folding reads the logical shapes.
int64_t check_conv_ranks(const Batched& map, const char* map_name, const Batched& w, const char* fn) {
  check_operand(map, fn, map_name);
  check_operand(w, fn, "weight");
  const int64_t spatial = lrank(w) - 2;
  if (spatial != 1 && spatial != 2)
    vfail(fn, "expected a weight of 3 or 4 dims, got logical shape ", lshape(w));
  if (lrank(map) != spatial + 1 && lrank(map) != spatial + 2)
    vfail(fn, "expected a ", spatial + 1, "-D (unbatched) or ", spatial + 2, "-D (batched) ", map_name,
          " for a weight of logical shape ", lshape(w), ", got logical shape ", lshape(map));
  return spatial;
}

// The operands of a rule with every level of the union, batch dims expanded (views), and the
// union's batch sizes.
struct Full {
  std::vector<Tensor> values;
  std::vector<int64_t> batch;
};
Full full(std::initializer_list<Batched> ops, const char* fn) {
  const std::vector<Batched> v(ops);
  const Levels all = union_levels(v);
  Full f{{}, level_sizes(v, all, fn)};
  for (const Batched& b : v) f.values.push_back(materialize(b.value, b.levels, all, f.batch));
  return f;
}

// [B..., (N), C, S...] (nb batch dims) with the batch folded into N: [B * N, C, S...]; a feature map
// without N ([B..., C, S...]) becomes a batched one, [B, C, S...]. `tail`: C and the spatial dims.
Tensor fold_into_n(const Tensor& x, int64_t tail) { return x.reshape(cat({-1}, last(x.sizes(), tail))); }
// The inverse for a result y [B * N, O, S'...]: [batch..., (N), O, S'...].
Tensor unfold_n(const Tensor& y, IntArrayRef batch, IntArrayRef logical_lead, int64_t tail) {
  return y.reshape(cat(cat(batch, logical_lead), last(y.sizes(), tail)));
}

// [B..., (N), C, S...] with the batch folded into the channels: [N, B * C, S...], or [B * C, S...].
Tensor fold_into_channels(const Tensor& x, int64_t nb, bool has_n, int64_t tail) {
  const int64_t B = product(IntArrayRef(x.sizes().data(), static_cast<size_t>(nb)));
  const std::vector<int64_t> rest = last(x.sizes(), tail);  // C, S...
  std::vector<int64_t> merged = rest;
  merged[0] *= B;
  if (!has_n) return x.reshape(merged);
  const Tensor t = x.reshape(cat({B, x.size(nb)}, rest)).transpose(0, 1);  // [N, B, C, S...]
  return t.reshape(cat({x.size(nb)}, merged));
}
// The inverse for a result y [N, B * O, S'...] (or [B * O, S'...]): [batch..., (N), O, S'...].
Tensor unfold_channels(const Tensor& y, IntArrayRef batch, bool has_n) {
  const int64_t B = product(batch);
  const int64_t at = has_n ? 1 : 0;
  std::vector<int64_t> split = y.sizes().vec();
  split[static_cast<size_t>(at)] /= B;
  split.insert(split.begin() + at, B);  // [(N), B, O, S'...]
  Tensor t = y.reshape(split);
  if (has_n) t = t.transpose(0, 1);  // [B, N, O, S'...]
  return t.reshape(cat(batch, IntArrayRef(t.sizes().data() + 1, t.sizes().size() - 1)));
}
// A weight [B..., O, Cg, K...] as [B * O, Cg, K...].
Tensor fold_weight(const Tensor& w, int64_t tail) {
  std::vector<int64_t> s = last(w.sizes(), tail);
  s[0] = -1;
  return w.reshape(s);
}

// C(x, w) of batched operands, no bias; `transposed` for conv_transpose (weight [Cin, Cout/g, K]).
template <typename Op>
Batched conv_rule(const Batched& x, const Batched& w, int64_t groups, const char* fn, Op&& op) {
  const int64_t spatial = check_conv_ranks(x, "input", w, fn);
  const int64_t tail = spatial + 1;  // C and the spatial dims
  const bool has_n = lrank(x) == spatial + 2;
  const auto ctx = [&] { return describe({{"input", &x}, {"weight", &w}}); };
  return with_context(fn, ctx, [&]() -> Batched {
    if (w.levels == 0) {
      if (x.levels == 0) return {op(x.value, w.value, groups), 0};
      const int64_t nb = nbatch(x.levels);
      const IntArrayRef batch(x.value.sizes().data(), static_cast<size_t>(nb));
      const Tensor y = op(fold_into_n(x.value, tail), w.value, groups);
      return {unfold_n(y, batch, has_n ? IntArrayRef(x.value.size(nb)) : IntArrayRef(), tail), x.levels};
    }
    const Full f = full({x, w}, fn);
    const int64_t nb = static_cast<int64_t>(f.batch.size());
    const Tensor y = op(fold_into_channels(f.values[0], nb, has_n, tail), fold_weight(f.values[1], spatial + 2),
                        groups * product(f.batch));
    return {unfold_channels(y, f.batch, has_n), x.levels | w.levels};
  });
}

// The result plus a bias [O] at the output's channel dim.
Batched add_bias(const Batched& r, const Batched& bias, int64_t spatial, const char* fn) {
  if (!bias.value.defined()) return r;
  const Batched b = ad::conv_bias_expand(bias, lshape(r), spatial);
  const auto aligned = align({r, b});  // (C++17 lambdas capture no structured binding)
  return with_context(fn, [&] { return describe({{"output", &r}, {"bias", &bias}}); },
                      [&]() -> Batched { return {fg::add(aligned[0], aligned[1]), r.levels | bias.levels}; });
}

Batched conv(const Batched& x, const Batched& w, const Batched& bias, IntArrayRef stride, const Padding& p,
             IntArrayRef dilation, int64_t groups, const char* fn) {
  const Batched r = conv_rule(x, w, groups, fn, [&](const Tensor& a, const Tensor& b, int64_t g) {
    return convolve(a, b, stride, p, dilation, g);
  });
  return add_bias(r, bias, lrank(w) - 2, fn);
}

Batched conv_transpose(const Batched& x, const Batched& w, const Batched& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation,
                       const char* fn) {
  const int64_t spatial = lrank(w) - 2;
  const Batched r = conv_rule(x, w, groups, fn, [&](const Tensor& a, const Tensor& b, int64_t g) {
    return spatial == 1 ? fg::conv_transpose1d(a, b, std::nullopt, stride, padding, output_padding, g, dilation)
                        : fg::conv_transpose2d(a, b, std::nullopt, stride, padding, output_padding, g, dilation);
  });
  return add_bias(r, bias, spatial, fn);
}

Batched backward_input(const Batched& g, IntArrayRef input_sizes, const Batched& w, IntArrayRef stride,
                       const Padding& p, IntArrayRef dilation, int64_t groups) {
  const char* fn = "ad::conv_backward_input";
  const int64_t spatial = check_conv_ranks(g, "gradient", w, fn);
  if (static_cast<int64_t>(input_sizes.size()) != lrank(g))
    vfail(fn, "input sizes ", input_sizes, " do not match the rank of the gradient of logical shape ", lshape(g));
  const bool has_n = static_cast<int64_t>(input_sizes.size()) == spatial + 2;
  // The sizes of the input that a folded gradient is the output of.
  const auto adjoint = [&](const Tensor& gg, const Tensor& ww, int64_t gr, int64_t B, bool into_n) {
    std::vector<int64_t> s = input_sizes.vec();
    if (into_n) {
      if (has_n) s[0] *= B; else s.insert(s.begin(), B);
    } else {
      s[has_n ? 1 : 0] *= B;
    }
    return p.mode ? fg::ad::conv_backward_input(gg, s, ww, stride, *p.mode, dilation, gr)
                  : fg::ad::conv_backward_input(gg, s, ww, stride, p.ints, dilation, gr);
  };
  return with_context(fn, [&] { return describe({{"gradient", &g}, {"weight", &w}}); }, [&]() -> Batched {
    if (w.levels == 0) {
      if (g.levels == 0) return {adjoint(g.value, w.value, groups, 1, false), 0};
      const int64_t nb = nbatch(g.levels);
      const IntArrayRef batch(g.value.sizes().data(), static_cast<size_t>(nb));
      const Tensor y = adjoint(fold_into_n(g.value, spatial + 1), w.value, groups, product(batch), true);
      return {unfold_n(y, batch, has_n ? IntArrayRef(input_sizes[0]) : IntArrayRef(), spatial + 1), g.levels};
    }
    const Full f = full({g, w}, fn);
    const int64_t nb = static_cast<int64_t>(f.batch.size()), B = product(f.batch);
    const Tensor y = adjoint(fold_into_channels(f.values[0], nb, has_n, spatial + 1),
                             fold_weight(f.values[1], spatial + 2), groups * B, B, false);
    return {unfold_channels(y, f.batch, has_n), g.levels | w.levels};
  });
}

Batched backward_weight(const Batched& g, const Batched& x, IntArrayRef weight_sizes, IntArrayRef stride,
                        const Padding& p, IntArrayRef dilation, int64_t groups) {
  const char* fn = "ad::conv_backward_weight";
  const auto adjoint = [&](const Tensor& gg, const Tensor& xx, IntArrayRef ws, int64_t gr) {
    return p.mode ? fg::ad::conv_backward_weight(gg, xx, ws, stride, *p.mode, dilation, gr)
                  : fg::ad::conv_backward_weight(gg, xx, ws, stride, p.ints, dilation, gr);
  };
  return with_context(fn, [&] { return describe({{"gradient", &g}, {"input", &x}}); }, [&]() -> Batched {
    check_operand(g, fn, "gradient");
    check_operand(x, fn, "input");
    if (g.levels == 0 && x.levels == 0) return {adjoint(g.value, x.value, weight_sizes, groups), 0};
    const int64_t spatial = static_cast<int64_t>(weight_sizes.size()) - 2;
    if ((spatial != 1 && spatial != 2) || (lrank(x) != spatial + 1 && lrank(x) != spatial + 2) || lrank(g) != lrank(x))
      vfail(fn, "a gradient of logical shape ", lshape(g), " and an input of logical shape ", lshape(x),
            " do not fit a weight of shape ", weight_sizes);
    const bool has_n = lrank(x) == spatial + 2;
    const Full f = full({g, x}, fn);
    const int64_t nb = static_cast<int64_t>(f.batch.size()), B = product(f.batch);
    std::vector<int64_t> ws = weight_sizes.vec();
    ws[0] *= B;
    const Tensor dw = adjoint(fold_into_channels(f.values[0], nb, has_n, spatial + 1),
                              fold_into_channels(f.values[1], nb, has_n, spatial + 1), ws, groups * B);
    return {dw.reshape(cat(f.batch, weight_sizes)), g.levels | x.levels};
  });
}

// A pool of x's planes: x [batch..., lead..., S...] as [planes, S...], op, and back.
template <typename Op>
Tensor on_planes(const Tensor& x, int64_t spatial, Op&& op) {
  const Tensor y = op(x.reshape(cat({-1}, last(x.sizes(), spatial))));
  return y.reshape(cat(IntArrayRef(x.sizes().data(), x.sizes().size() - static_cast<size_t>(spatial)),
                       last(y.sizes(), spatial)));
}

void check_pool_rank(const Batched& x, int64_t spatial, const char* fn) {
  check_operand(x, fn, "input");
  if (lrank(x) != spatial + 1 && lrank(x) != spatial + 2)
    vfail(fn, "expected a ", spatial + 1, "-D (unbatched) or ", spatial + 2, "-D (batched) input, got logical shape ",
          lshape(x));
}

// A pool of one batched operand.
template <typename Op>
Batched pool_rule(const Batched& x, int64_t spatial, const char* fn, Op&& op) {
  check_pool_rank(x, spatial, fn);
  return with_context(fn, [&] { return describe({{"input", &x}}); },
                      [&]() -> Batched { return {on_planes(x.value, spatial, op), x.levels}; });
}

// max pooling's gather/scatter: both operands at every level of the union, then by planes.
template <typename Op>
Batched max_pool_pair(const Batched& a, const Batched& self, int64_t spatial, const char* fn, Op&& op) {
  check_pool_rank(self, spatial, fn);
  check_operand(a, fn, "gradient");
  return with_context(fn, [&] { return describe({{"gradient", &a}, {"self", &self}}); }, [&]() -> Batched {
    const Full f = full({a, self}, fn);
    const Tensor s = f.values[1].reshape(cat({-1}, last(f.values[1].sizes(), spatial)));
    const Tensor r = on_planes(f.values[0], spatial, [&](const Tensor& planes) { return op(planes, s); });
    return {r, a.levels | self.levels};
  });
}

// The adjoint of an average pool: g [batch..., lead..., S'] as planes, the input's sizes as
// [planes, H, W], op, and back to [batch..., self_sizes].
template <typename Op>
Batched pool_adjoint_rule(const Batched& g, IntArrayRef self_sizes, const char* fn, Op&& op) {
  check_operand(g, fn, "gradient");
  if (self_sizes.size() < 3 || lrank(g) != static_cast<int64_t>(self_sizes.size()))
    vfail(fn, "a gradient of logical shape ", lshape(g), " does not fit an input of shape ", self_sizes);
  return with_context(fn, [&] { return describe({{"gradient", &g}}); }, [&]() -> Batched {
    const Tensor planes = g.value.reshape(cat({-1}, last(g.value.sizes(), 2)));
    const Tensor r = op(planes, cat({planes.size(0)}, last(self_sizes, 2)));
    return {r.reshape(cat(IntArrayRef(g.value.sizes().data(), static_cast<size_t>(nbatch(g.levels))), self_sizes)),
            g.levels};
  });
}

const Batched kNoBias{};

}  // namespace

#define FG_CONV_RULES(name)                                                                              \
  Batched name(const Batched& input, const Batched& weight, const Batched& bias, IntArrayRef stride,            \
               IntArrayRef padding, IntArrayRef dilation, int64_t groups) {                                     \
    return conv(input, weight, bias, stride, {padding}, dilation, groups, #name);                               \
  }                                                                                                              \
  Batched name(const Batched& input, const Batched& weight, const Batched& bias, IntArrayRef stride,            \
               const PaddingMode& padding, IntArrayRef dilation, int64_t groups) {                              \
    return conv(input, weight, bias, stride, {{}, &padding}, dilation, groups, #name);                          \
  }
FG_CONV_RULES(conv1d)
FG_CONV_RULES(conv2d)
#undef FG_CONV_RULES

#define FG_CONV_TRANSPOSE_RULES(name)                                                                            \
  Batched name(const Batched& input, const Batched& weight, const Batched& bias, IntArrayRef stride,            \
               IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {         \
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, #name);       \
  }
FG_CONV_TRANSPOSE_RULES(conv_transpose1d)
FG_CONV_TRANSPOSE_RULES(conv_transpose2d)
#undef FG_CONV_TRANSPOSE_RULES

Batched max_pool1d(const Batched& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef dilation, bool ceil_mode) {
  return pool_rule(self, 1, "max_pool1d", [&](const Tensor& x) {
    return fg::max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode);
  });
}
Batched max_pool2d(const Batched& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef dilation, bool ceil_mode) {
  return pool_rule(self, 2, "max_pool2d", [&](const Tensor& x) {
    return fg::max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode);
  });
}
Batched avg_pool2d(const Batched& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                   bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  return pool_rule(self, 2, "avg_pool2d", [&](const Tensor& x) {
    return fg::avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  });
}
Batched adaptive_avg_pool2d(const Batched& self, IntArrayRef output_size) {
  return pool_rule(self, 2, "adaptive_avg_pool2d",
                   [&](const Tensor& x) { return fg::adaptive_avg_pool2d(x, output_size); });
}

namespace ad {

Batched max_pool_gather(const Batched& t, const Batched& self, IntArrayRef kernel_size, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, int64_t spatial) {
  return max_pool_pair(t, self, spatial, "ad::max_pool_gather", [&](const Tensor& a, const Tensor& s) {
    return fg::ad::max_pool_gather(a, s, kernel_size, stride, padding, dilation, ceil_mode, spatial);
  });
}
Batched max_pool_scatter(const Batched& g, const Batched& self, IntArrayRef kernel_size, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, int64_t spatial) {
  return max_pool_pair(g, self, spatial, "ad::max_pool_scatter", [&](const Tensor& a, const Tensor& s) {
    return fg::ad::max_pool_scatter(a, s, kernel_size, stride, padding, dilation, ceil_mode, spatial);
  });
}
Batched avg_pool2d_backward(const Batched& g, IntArrayRef self_sizes, IntArrayRef kernel_size, IntArrayRef stride,
                            IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                            std::optional<int64_t> divisor_override) {
  return pool_adjoint_rule(g, self_sizes, "ad::avg_pool2d_backward", [&](const Tensor& planes, IntArrayRef sizes) {
    return fg::ad::avg_pool2d_backward(planes, sizes, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                       divisor_override);
  });
}
Batched adaptive_avg_pool2d_backward(const Batched& g, IntArrayRef self_sizes) {
  return pool_adjoint_rule(g, self_sizes, "ad::adaptive_avg_pool2d_backward",
                           [&](const Tensor& planes, IntArrayRef sizes) {
                             return fg::ad::adaptive_avg_pool2d_backward(planes, sizes);
                           });
}

Batched convolution(const Batched& input, const Batched& weight, IntArrayRef stride, IntArrayRef padding,
                    IntArrayRef dilation, int64_t groups) {
  return conv(input, weight, kNoBias, stride, {padding}, dilation, groups, "ad::convolution");
}
Batched convolution(const Batched& input, const Batched& weight, IntArrayRef stride, const PaddingMode& padding,
                    IntArrayRef dilation, int64_t groups) {
  return conv(input, weight, kNoBias, stride, {{}, &padding}, dilation, groups, "ad::convolution");
}
Batched conv_backward_input(const Batched& g, IntArrayRef input_sizes, const Batched& weight, IntArrayRef stride,
                            IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return backward_input(g, input_sizes, weight, stride, {padding}, dilation, groups);
}
Batched conv_backward_input(const Batched& g, IntArrayRef input_sizes, const Batched& weight, IntArrayRef stride,
                            const PaddingMode& padding, IntArrayRef dilation, int64_t groups) {
  return backward_input(g, input_sizes, weight, stride, {{}, &padding}, dilation, groups);
}
Batched conv_backward_weight(const Batched& g, const Batched& input, IntArrayRef weight_sizes, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return backward_weight(g, input, weight_sizes, stride, {padding}, dilation, groups);
}
Batched conv_backward_weight(const Batched& g, const Batched& input, IntArrayRef weight_sizes, IntArrayRef stride,
                             const PaddingMode& padding, IntArrayRef dilation, int64_t groups) {
  return backward_weight(g, input, weight_sizes, stride, {{}, &padding}, dilation, groups);
}

Batched conv_bias_expand(const Batched& bias, IntArrayRef sizes, int64_t spatial) {
  check_operand(bias, "ad::conv_bias_expand", "bias");
  const int64_t nb = nbatch(bias.levels);
  const IntArrayRef batch(bias.value.sizes().data(), static_cast<size_t>(nb));
  const int64_t at = static_cast<int64_t>(sizes.size()) - spatial - 1;
  if (lrank(bias) != 1 || at < 0 || sizes[static_cast<size_t>(at)] != bias.value.size(nb))
    vfail("ad::conv_bias_expand", "a bias of logical shape ", lshape(bias),
          " does not match the channels of an output of logical shape ", sizes);
  std::vector<int64_t> view(sizes.size(), 1);
  view[static_cast<size_t>(at)] = sizes[static_cast<size_t>(at)];
  return {bias.value.reshape(cat(batch, view)).expand(cat(batch, sizes)), bias.levels};
}

Batched conv_bias_backward(const Batched& g, int64_t spatial) {
  check_operand(g, "ad::conv_bias_backward", "gradient");
  const int64_t nb = nbatch(g.levels), at = g.value.dim() - spatial - 1;
  if (at < nb) vfail("ad::conv_bias_backward", "a gradient of logical shape ", lshape(g), " has no channel dim");
  std::vector<int64_t> dims;
  for (int64_t d = nb; d < g.value.dim(); ++d)
    if (d != at) dims.push_back(d);
  return {dims.empty() ? g.value.clone() : g.value.sum(dims), g.levels};
}

}  // namespace ad
}  // namespace fg::vmap
