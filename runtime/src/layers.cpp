// The layers of models beyond convolution and pooling: var/std, the normalizations (layer, group,
// batch), attention, embedding, masks and rearrangements (triu/tril, masked_fill, flip, roll,
// repeat, split/chunk). layer_norm and group_norm normalize rows in one pass over memory each
// (statistics in double, then the normalized row); the others are compositions of the runtime's
// kernels. Their derivatives are decompositions into these ops (templates/derivatives.def).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <omp.h>

#include "cpu/kernels.h"
#include "funcgen/runtime/ad.h"
#include "funcgen/runtime/random.h"
#include "device.h"
#include "internal.h"

namespace fg {
namespace {

using detail::fail;

// Dims of `self` reduced by var/std: `dim` wrapped, or all of them.
std::vector<int64_t> reduced_dims(const Tensor& self, IntArrayRef dim, const char* op) {
  std::vector<int64_t> out;
  if (dim.empty()) {
    for (int64_t d = 0; d < self.dim(); ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dim) out.push_back(detail::wrap_dim(d, std::max<int64_t>(self.dim(), 1), op));
  return out;
}

Tensor variance(const Tensor& self, IntArrayRef dim, bool unbiased, bool keepdim, const char* op) {
  detail::check_defined(self, op);
  if (!isFloatingType(self.dtype())) fail(op, "expected a floating-point input, got ", self.dtype());
  const std::vector<int64_t> dims = reduced_dims(self, dim, op);
  const double n = ad::reduced_numel(self.sizes(), dims);
  const Tensor centered = self - self.mean(dims, true);
  // torch: n - correction <= 0 gives inf (0 / 0: nan), not an error.
  return (centered * centered).sum(dims, keepdim) / std::max(n - (unbiased ? 1.0 : 0.0), 0.0);
}

// The sum of f(r[k]) over a row, in double, in 8 independent partial sums: one running sum is a
// chain of dependent adds (4 cycles each) that the compiler may not reorder; 8 lanes keep the adder
// busy and vectorize.
template <typename T, typename F>
double lane_sum(const T* r, int64_t K, F f) {
  constexpr int64_t kLanes = 8;
  double part[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= K; k += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) part[j] += f(static_cast<double>(r[k + j]));
  double s = 0;
  for (int64_t j = 0; j < kLanes; ++j) s += part[j];
  for (; k < K; ++k) s += f(static_cast<double>(r[k]));
  return s;
}

// An affine map after a normalization, per element of a row: weight and bias (either may be null)
// of `per_row` entries, entry k / unit for element k of row m, starting at (m % rows) * per_row.
// layer_norm: one entry per element of every row (unit 1, rows 1); group_norm: one per channel,
// `unit` elements each, a group's channels in each of `rows` (the groups) rows.
template <typename T>
struct RowAffine {
  const T* weight = nullptr;
  const T* bias = nullptr;
  int64_t unit = 1, rows = 1;
};

// Normalizes each row of x ([M, K], contiguous) to mean 0 and variance 1 (biased) into y, then
// applies `affine`, with statistics accumulated in double: one read of the row from memory (it
// stays in cache for the three passes) and one write.
template <typename T>
void normalize_rows(const T* x, T* y, int64_t M, int64_t K, double eps, const RowAffine<T>& affine) {
#pragma omp parallel for if (M * K > (1 << 16))
  for (int64_t m = 0; m < M; ++m) {
    const T* r = x + m * K;
    const double mean = lane_sum(r, K, [](double v) { return v; }) / static_cast<double>(K);
    const double var = lane_sum(r, K, [mean](double v) { return (v - mean) * (v - mean); });
    const double rstd = 1.0 / std::sqrt(var / static_cast<double>(K) + eps);
    T* o = y + m * K;
    const int64_t first = (m % affine.rows) * (K / affine.unit);
    if (affine.unit == 1 && affine.weight != nullptr && affine.bias != nullptr) {  // layer_norm's usual case
      const T* w = affine.weight + first;
      const T* b = affine.bias + first;
      for (int64_t k = 0; k < K; ++k)
        o[k] = static_cast<T>((static_cast<double>(r[k]) - mean) * rstd * static_cast<double>(w[k]) +
                              static_cast<double>(b[k]));
      continue;
    }
    for (int64_t c = 0; c * affine.unit < K; ++c) {
      const double w = affine.weight != nullptr ? static_cast<double>(affine.weight[first + c]) : 1.0;
      const double b = affine.bias != nullptr ? static_cast<double>(affine.bias[first + c]) : 0.0;
      const double scale = rstd * w, shift = b - mean * scale;
      for (int64_t k = c * affine.unit; k < std::min(K, (c + 1) * affine.unit); ++k)
        o[k] = static_cast<T>(static_cast<double>(r[k]) * scale + shift);
    }
  }
}

// Whether weight and bias (either may be absent) can be applied inside normalized_rows: of x's
// dtype, on the CPU. (Others are applied after, by ops that promote dtypes.)
bool fusable_affine(const Tensor& x, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias) {
  if (!x.is_cpu()) return false;
  auto same = [&](const std::optional<Tensor>& t) { return !t || !t->defined() || t->dtype() == x.dtype(); };
  return same(weight) && same(bias);
}

// x reshaped to rows of K elements, each normalized, then weight and bias (fusable_affine) applied
// as `unit` and `rows` say (RowAffine); the result has x's shape.
Tensor normalized_rows(const Tensor& x, int64_t K, double eps, const std::optional<Tensor>& weight,
                       const std::optional<Tensor>& bias, int64_t unit, int64_t rows, const char* op) {
  if (!x.is_cpu()) {  // from the device's ops (callers apply weight and bias after: see fusable_affine)
    if (x.numel() == 0) return x.clone();
    const Tensor r = x.reshape({-1, K});
    const Tensor centered = r - r.mean({1}, true);
    return (centered * ((centered * centered).mean({1}, true) + eps).rsqrt()).view(x.sizes());
  }
  const Tensor c = x.contiguous();
  Tensor out = empty(x.sizes(), x.options());
  const int64_t M = K == 0 ? 0 : c.numel() / K;
  const Tensor w = weight && weight->defined() ? weight->contiguous() : Tensor();
  const Tensor b = bias && bias->defined() ? bias->contiguous() : Tensor();
  detail::dispatch_floating(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    RowAffine<T> affine;
    affine.weight = w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr;
    affine.bias = b.defined() ? static_cast<const T*>(b.data_ptr()) : nullptr;
    affine.unit = std::max<int64_t>(unit, 1);
    affine.rows = std::max<int64_t>(rows, 1);
    normalize_rows(static_cast<const T*>(c.data_ptr()), static_cast<T*>(out.data_ptr()), M, K, eps, affine);
  });
  return out;
}

// An optional weight, bias or statistic of the op: of shape `want` (the checks the decompositions
// of derivatives.def run too: fg::ad::check_sizes); the ops that apply it check its device.
void check_optional(const std::optional<Tensor>& t, const char* op, const char* name, IntArrayRef want) {
  if (!t || !t->defined()) return;
  ad::check_sizes(op, name, t->sizes(), want);
}

// weight and bias ([C]) applied along dim 1 of y ([N, C, *]).
Tensor channel_affine(Tensor y, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias) {
  if (weight && weight->defined()) y = y * weight->reshape(ad::channel_shape(y.sizes()));
  if (bias && bias->defined()) y = y + bias->reshape(ad::channel_shape(y.sizes()));
  return y;
}

void check_channels(const Tensor& input, const char* op) {
  detail::check_defined(input, op);
  if (input.dim() < 2) fail(op, "expected an input of shape [N, C, *], got ", input.sizes());
  if (!isFloatingType(input.dtype())) fail(op, "expected a floating-point input, got ", input.dtype());
}

}  // namespace

Tensor var(const Tensor& self) { return variance(self, {}, true, false, "var"); }
Tensor var(const Tensor& self, IntArrayRef dim, bool unbiased, bool keepdim) {
  return variance(self, dim, unbiased, keepdim, "var");
}
Tensor std(const Tensor& self) { return variance(self, {}, true, false, "std").sqrt(); }
Tensor std(const Tensor& self, IntArrayRef dim, bool unbiased, bool keepdim) {
  return variance(self, dim, unbiased, keepdim, "std").sqrt();
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  detail::check_defined(input, "layer_norm");
  detail::common_device({&input, weight ? &*weight : &input, bias ? &*bias : &input}, "layer_norm");
  ad::layer_norm_dims(input.sizes(), normalized_shape);  // (checks the shapes)
  check_optional(weight, "layer_norm", "a weight", normalized_shape);
  check_optional(bias, "layer_norm", "a bias", normalized_shape);
  const int64_t K = detail::product(normalized_shape);
  if (fusable_affine(input, weight, bias)) return normalized_rows(input, K, eps, weight, bias, 1, 1, "layer_norm");
  Tensor y = normalized_rows(input, K, eps, {}, {}, 1, 1, "layer_norm");
  if (weight && weight->defined()) y = y * *weight;
  if (bias && bias->defined()) y = y + *bias;
  return y;
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  check_channels(input, "group_norm");
  detail::common_device({&input, weight ? &*weight : &input, bias ? &*bias : &input}, "group_norm");
  ad::group_norm_shape(input.sizes(), num_groups);  // (checks the groups)
  check_optional(weight, "group_norm", "a weight", input.size(1));
  check_optional(bias, "group_norm", "a bias", input.size(1));
  const int64_t K = input.numel() == 0 ? 0 : input.numel() / (input.size(0) * num_groups);
  const int64_t spatial = input.numel() == 0 ? 1 : input.numel() / (input.size(0) * input.size(1));
  if (fusable_affine(input, weight, bias))
    return normalized_rows(input, K, eps, weight, bias, spatial, num_groups, "group_norm");
  return channel_affine(normalized_rows(input, K, eps, {}, {}, 1, 1, "group_norm"), weight, bias);
}

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps) {
  check_channels(input, "batch_norm");
  detail::common_device({&input, weight ? &*weight : &input, bias ? &*bias : &input,
                         running_mean ? &*running_mean : &input, running_var ? &*running_var : &input},
                        "batch_norm");
  const int64_t C = input.size(1);
  check_optional(weight, "batch_norm", "a weight", C);
  check_optional(bias, "batch_norm", "a bias", C);
  check_optional(running_mean, "batch_norm", "running_mean", C);
  check_optional(running_var, "batch_norm", "running_var", C);
  const bool have_mean = running_mean && running_mean->defined(), have_var = running_var && running_var->defined();
  if (have_mean != have_var) fail("batch_norm", "expected both running_mean and running_var, or neither");
  const std::vector<int64_t> shape = ad::channel_shape(input.sizes());
  Tensor y;
  if (training || !have_mean) {
    const std::vector<int64_t> dims = ad::batch_norm_dims(input.sizes());
    const double n = ad::reduced_numel(input.sizes(), dims);
    ad::check_batch_statistics(input.sizes(), training);
    const Tensor mean = input.mean(dims, true);
    const Tensor centered = input - mean;
    const Tensor var = (centered * centered).mean(dims, true);
    y = centered * (var + eps).rsqrt();
    if (training && have_mean) {  // torch keeps the unbiased variance
      running_mean->mul_(1 - momentum).add_(mean.reshape({C}).to(running_mean->dtype()) * momentum);
      running_var->mul_(1 - momentum).add_((var * (n / (n - 1))).reshape({C}).to(running_var->dtype()) * momentum);
    }
  } else {
    y = (input - running_mean->reshape(shape)) * (running_var->reshape(shape) + eps).rsqrt();
  }
  return channel_affine(y, weight, bias);
}

namespace {
// [R, C] int64 on `device`: column index minus row index (the diagonal each element is on).
Tensor diagonal_index(int64_t R, int64_t C, Device device) {
  const TensorOptions options = TensorOptions(kLong).device(device);
  return arange(C, options).unsqueeze(0) - arange(R, options).unsqueeze(1);
}
}  // namespace

// An attn_mask for scores of `sizes` and `dtype`: it broadcasts to them, and is bool or of their
// dtype (as torch: a float mask is added, not promoted).
void check_attention_mask(IntArrayRef sizes, ScalarType dtype, const Tensor& attn_mask) {
  const char* op = "scaled_dot_product_attention";
  infer_size(sizes, attn_mask.sizes(), op);
  if (attn_mask.dtype() != kBool && attn_mask.scalar_type() != dtype)
    fail(op, "expected a bool attn_mask or one of the query's dtype (", dtype, "), got ", attn_mask.dtype());
}

// softmax(scores * scale, masked) over the last dim, a row at a time: each row is scaled and
// masked into a row buffer of the thread (the causal mask by index, attn_mask read through its
// broadcast strides) and the softmax reads it from there into the output while it is in cache, so
// scores and the mask are read once and the weights written once. The same arithmetic as the ops it fuses (mul,
// masked_fill or add, softmax).
Tensor attention_weights(const Tensor& scores_in, double scale, const Tensor* attn_mask, bool is_causal) {
  const Tensor scores = scores_in.contiguous();
  const int64_t S = scores.size(-1), L = scores.size(-2), rows = S == 0 ? 0 : scores.numel() / S;
  Tensor out = empty(scores.sizes(), scores.options());
  Tensor mask;
  if (attn_mask != nullptr) {
    check_attention_mask(scores.sizes(), scores.scalar_type(), *attn_mask);
    mask = attn_mask->expand(scores.sizes());
  }
  // Each thread's row of scaled and masked scores, which the softmax reads (into `out`).
  const int threads = rows * S > (int64_t{1} << 16) && !omp_in_parallel() ? omp_get_max_threads() : 1;
  const Tensor row_buffers = empty({threads, std::max<int64_t>(S, 1)}, scores.options());
  const std::vector<int64_t> sizes = scores.sizes().vec();
  const std::vector<int64_t> mstrides = mask.defined() ? mask.strides().vec() : std::vector<int64_t>();
  auto mask_row = [&](int64_t r) {  // the element offset of row r of the expanded mask
    int64_t offset = 0;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d) {
      offset += (r % sizes[static_cast<size_t>(d)]) * mstrides[static_cast<size_t>(d)];
      r /= sizes[static_cast<size_t>(d)];
    }
    return offset;
  };
  detail::dispatch_floating(scores.scalar_type(), "scaled_dot_product_attention", [&](auto t) {
    using T = decltype(t);
    const T* s = scores.data_ptr<T>();
    T* y = out.data_ptr<T>();
    const T sc = static_cast<T>(scale), ninf = -std::numeric_limits<T>::infinity();
    const int64_t ms = mask.defined() ? mask.stride(-1) : 0;
    const bool* bool_mask = mask.defined() && mask.dtype() == kBool ? mask.data_ptr<bool>() : nullptr;
    const T* float_mask = mask.defined() && mask.dtype() != kBool ? mask.data_ptr<T>() : nullptr;
    T* buffers = row_buffers.data_ptr<T>();
#pragma omp parallel for num_threads(threads) if (threads > 1)
    for (int64_t r = 0; r < rows; ++r) {
      const T* sr = s + r * S;
      T* yr = buffers + (threads > 1 ? omp_get_thread_num() : 0) * std::max<int64_t>(S, 1);
      for (int64_t j = 0; j < S; ++j) yr[j] = sr[j] * sc;
      if (bool_mask != nullptr) {
        const bool* m = bool_mask + mask_row(r);
        for (int64_t j = 0; j < S; ++j) yr[j] = m[j * ms] ? yr[j] : ninf;
      } else if (float_mask != nullptr) {
        const T* m = float_mask + mask_row(r);
        for (int64_t j = 0; j < S; ++j) yr[j] += m[j * ms];
      }
      if (is_causal) std::fill(yr + std::min(S, r % L + 1), yr + S, ninf);
      cpu::softmax_rows(yr, y + r * S, 1, S, false);
    }
  });
  return out;
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  for (const Tensor* t : {&query, &key, &value}) {
    detail::check_defined(*t, op);
    if (t->dim() < 2)
      fail(op, "expected query, key and value of at least 2 dims, got shapes ", query.sizes(), ", ", key.sizes(),
           " and ", value.sizes());
  }
  if (query.size(-1) != key.size(-1) || key.size(-2) != value.size(-2))
    fail(op, "expected query [..., L, E], key [..., S, E] and value [..., S, Ev], got shapes ", query.sizes(), ", ",
         key.sizes(), " and ", value.sizes());
  ad::check_not_causal_and_masked(is_causal, attn_mask && attn_mask->defined());
  const Device device = detail::common_device({&query, &key, &value, attn_mask ? &*attn_mask : &query}, op);
  if (!device.is_cpu()) {  // the fused CPU row pass as the ops it fuses, on the device
    Tensor scores = query.matmul(key.transpose(-2, -1)) * ad::attention_scale(query.size(-1), scale);
    if (is_causal)
      scores = scores.masked_fill(diagonal_index(scores.size(-2), scores.size(-1), device) > 0, ad::neg_infinity());
    if (attn_mask && attn_mask->defined()) scores = ad::apply_attention_mask(scores, *attn_mask);
    Tensor weights = scores.softmax(-1);
    if (dropout_p > 0) weights = dropout(weights, dropout_p, true);
    return weights.matmul(value);
  }
  Tensor weights = attention_weights(query.matmul(key.transpose(-2, -1)), ad::attention_scale(query.size(-1), scale),
                                     attn_mask && attn_mask->defined() ? &*attn_mask : nullptr, is_causal);
  if (dropout_p > 0) weights = dropout(weights, dropout_p, true);
  return weights.matmul(value);
}

namespace {
// The smallest and largest of int64 values ((0, -1) when there are none), read back from a device.
std::pair<int64_t, int64_t> value_range(const Tensor& self) {
  if (self.numel() == 0) return {0, -1};
  if (!self.is_cpu()) return detail::device_index_range(self);
  const Tensor c = self.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  int64_t lo = p[0], hi = p[0];
  for (int64_t i = 1; i < c.numel(); ++i) {
    lo = std::min(lo, p[i]);
    hi = std::max(hi, p[i]);
  }
  return {lo, hi};
}
}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  detail::check_defined(weight, "embedding", "weight");
  detail::check_defined(indices, "embedding", "indices");
  const std::vector<int64_t> shape = ad::embedding_shape(indices.sizes(), weight.sizes());
  if (indices.dtype() != kLong) fail("embedding", "expected int64 indices, got ", indices.dtype());
  ad::check_padding_idx(padding_idx, weight.size(0));
  detail::checked_numel(shape, "embedding");
  // Checked here, so that a bad index is embedding's error rather than index_select's.
  const auto [lo, hi] = value_range(indices);
  if (lo < 0 || hi >= weight.size(0))
    fail("embedding", "index ", lo < 0 ? lo : hi, " is out of range for ", weight.size(0),
         " embeddings (weight of shape ", weight.sizes(), ")");
  return weight.index_select(0, indices.reshape({-1})).reshape(shape);
}

namespace {
// one_hot's number of classes, checked against the indices' range [lo, hi] ((0, -1) when empty).
int64_t one_hot_classes(int64_t lo, int64_t hi, int64_t numel, int64_t num_classes) {
  if (lo < 0) fail("one_hot", "expected non-negative class indices, got ", lo);
  if (num_classes == -1) {
    if (numel == 0) fail("one_hot", "cannot infer the number of classes of an empty tensor; give num_classes");
    num_classes = hi + 1;
  }
  if (num_classes < 0) fail("one_hot", "expected num_classes -1 or non-negative, got ", num_classes);
  if (hi >= num_classes) fail("one_hot", "class index ", hi, " is out of range for ", num_classes, " classes");
  return num_classes;
}
}  // namespace

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  detail::check_defined(self, "one_hot");
  if (self.dtype() != kLong) fail("one_hot", "expected an int64 tensor of class indices, got ", self.dtype());
  const auto [lo, hi] = value_range(self);
  num_classes = one_hot_classes(lo, hi, self.numel(), num_classes);
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  sizes.push_back(num_classes);
  detail::checked_numel(sizes, "one_hot");
  if (!self.is_cpu()) return eq(self.unsqueeze(-1), arange(num_classes, self.options())).to(kLong);
  const Tensor c = self.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  Tensor out = detail::zeros(sizes, TensorOptions().dtype(kLong), "one_hot");
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < c.numel(); ++i) o[i * num_classes + p[i]] = 1;
  return out;
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  detail::check_defined(self, "masked_fill");
  detail::check_defined(mask, "masked_fill", "mask");
  if (mask.dtype() != kBool) fail("masked_fill", "expected a bool mask, got ", mask.dtype());
  infer_size(self.sizes(), mask.sizes(), "masked_fill");
  return where(mask, full({}, value, self.options()), self);
}

namespace {

Tensor triangle(const Tensor& self, int64_t diagonal, bool upper) {
  const char* op = upper ? "triu" : "tril";
  detail::check_defined(self, op);
  if (self.dim() < 2) fail(op, "expected a tensor of at least 2 dims, got shape ", self.sizes());
  const Tensor d = diagonal_index(self.size(-2), self.size(-1), self.device());
  const Tensor keep = upper ? d >= diagonal : d <= diagonal;
  return where(keep, self, zeros({}, self.options()));
}
}  // namespace

Tensor triu(const Tensor& self, int64_t diagonal) { return triangle(self, diagonal, true); }
Tensor tril(const Tensor& self, int64_t diagonal) { return triangle(self, diagonal, false); }

Tensor flip(const Tensor& self, IntArrayRef dims) {
  detail::check_defined(self, "flip");
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  Tensor out = self;
  for (int64_t d : dims) {
    const int64_t w = detail::wrap_dim(d, self.dim(), "flip");
    if (seen[static_cast<size_t>(w)]) fail("flip", "dim ", w, " appears more than once in dims ", dims);
    seen[static_cast<size_t>(w)] = true;
    const int64_t n = self.dim() == 0 ? 1 : self.size(w);  // a 0-d tensor flips to itself, as torch
    if (n > 1) out = out.index_select(w, arange(n - 1, -1, -1, self.options().dtype(kLong)));
  }
  return out.clone();
}

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  detail::check_defined(self, "roll");
  if (dims.empty()) {
    if (shifts.size() != 1) fail("roll", "expected one shift without dims, got ", shifts);
    return roll(self.reshape({-1}), shifts, 0).reshape(self.sizes());
  }
  if (shifts.size() != dims.size())
    fail("roll", "expected as many shifts as dims, got shifts ", shifts, " and dims ", dims);
  Tensor out = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = detail::wrap_dim(dims[i], self.dim(), "roll");
    const int64_t n = self.size(d);
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s != 0) out = cat({out.narrow(d, n - s, s), out.narrow(d, 0, n - s)}, d);
  }
  return out.clone();
}

Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  detail::check_defined(self, "repeat");
  const std::vector<int64_t> view = ad::repeat_view(self.sizes(), repeats);  // (checks)
  return self.reshape(view)
      .expand(ad::repeat_expand(self.sizes(), repeats))
      .reshape(ad::repeat_result(self.sizes(), repeats));
}

namespace {

// The dim that split or chunk (`op`) cuts (wrapped), after their checks.
int64_t piece_dim(const Tensor& self, int64_t dim, const char* op) {
  detail::check_defined(self, op);
  if (self.dim() == 0) fail(op, "cannot ", op, " a 0-d tensor");
  return detail::wrap_dim(dim, self.dim(), op);
}

void check_piece(int64_t index, int64_t count, const char* op) {
  if (index < 0 || index >= count)
    fail(op, "piece ", index, " does not exist: there ", count == 1 ? "is " : "are ", count, " piece",
         count == 1 ? "" : "s");
}

// Piece `index` of pieces of piece_size along dim d.
Tensor piece(const Tensor& self, int64_t d, int64_t piece_size, int64_t index) {
  const int64_t n = self.size(d);
  return self.narrow(d, ad::piece_start(n, piece_size, index), ad::piece_length(n, piece_size, index));
}

}  // namespace

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  const int64_t d = piece_dim(self, dim, "split");
  std::vector<Tensor> out;
  for (int64_t i = 0, count = ad::split_count(self.size(d), split_size); i < count; ++i)
    out.push_back(piece(self, d, split_size, i));
  return out;
}

std::vector<Tensor> split(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  std::vector<Tensor> out;
  for (int64_t i = 0; i < static_cast<int64_t>(split_sizes.size()); ++i)
    out.push_back(ad::split_with_sizes_piece(self, split_sizes, dim, i));
  return out;
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  const int64_t d = piece_dim(self, dim, "chunk");
  const int64_t n = self.size(d), size = ad::chunk_size(n, chunks);
  std::vector<Tensor> out;
  for (int64_t i = 0, count = ad::chunk_count(n, chunks); i < count; ++i) out.push_back(piece(self, d, size, i));
  return out;
}

Tensor detach(const Tensor& self) { return self; }

// ---------------------------------------------------------------- the decompositions' helpers
namespace ad {

Tensor split_piece(const Tensor& self, int64_t split_size, int64_t dim, int64_t index) {
  const int64_t d = piece_dim(self, dim, "split");  // named as the user wrote it
  check_piece(index, split_count(self.size(d), split_size), "split");
  return piece(self, d, split_size, index);
}
Tensor chunk_piece(const Tensor& self, int64_t chunks, int64_t dim, int64_t index) {
  const int64_t d = piece_dim(self, dim, "chunk");
  check_piece(index, chunk_count(self.size(d), chunks), "chunk");
  return piece(self, d, chunk_size(self.size(d), chunks), index);
}
Tensor split_with_sizes_piece(const Tensor& self, IntArrayRef split_sizes, int64_t dim, int64_t index) {
  const int64_t d = piece_dim(self, dim, "split");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    if (s < 0) fail("split", "expected non-negative split sizes, got ", split_sizes);
    total += s;
  }
  if (total != self.size(d))
    fail("split", "split sizes ", split_sizes, " add up to ", total, ", not to the size ", self.size(d), " of dim ", d,
         " of a tensor of shape ", self.sizes());
  return self.narrow(d, split_with_sizes_start(split_sizes, index), split_with_sizes_length(split_sizes, index));
}
int64_t split_with_sizes_count(IntArrayRef split_sizes) { return static_cast<int64_t>(split_sizes.size()); }
int64_t split_with_sizes_start(IntArrayRef split_sizes, int64_t index) {
  check_piece(index, split_with_sizes_count(split_sizes), "split");
  int64_t start = 0;
  for (int64_t i = 0; i < index; ++i) start += split_sizes[static_cast<size_t>(i)];
  return start;
}
int64_t split_with_sizes_length(IntArrayRef split_sizes, int64_t index) {
  check_piece(index, split_with_sizes_count(split_sizes), "split");
  return split_sizes[static_cast<size_t>(index)];
}
int64_t split_count(int64_t size, int64_t split_size) {
  if (split_size < 0 || (split_size == 0 && size != 0))
    fail("split", "expected a positive split_size, got ", split_size);
  return size == 0 ? 1 : (size + split_size - 1) / split_size;  // an empty dim: one empty piece, as torch
}
int64_t chunk_size(int64_t size, int64_t chunks) {
  if (chunks <= 0) fail("chunk", "expected a positive number of chunks, got ", chunks);
  return (size + chunks - 1) / chunks;
}
int64_t chunk_count(int64_t size, int64_t chunks) {
  const int64_t piece_size = chunk_size(size, chunks);
  return size == 0 ? chunks : (size + piece_size - 1) / piece_size;  // an empty dim: `chunks` empty pieces, as torch
}
int64_t piece_start(int64_t size, int64_t piece_size, int64_t index) {
  const int64_t count = size == 0 ? 1 : piece_size <= 0 ? 0 : (size + piece_size - 1) / piece_size;
  if (index < 0 || (index >= count && size != 0))
    fail("split", "piece ", index, " does not exist: a dim of ", size, " elements in pieces of ", piece_size, " has ",
         count, " piece", count == 1 ? "" : "s");
  return std::min(size, index * piece_size);
}
int64_t piece_length(int64_t size, int64_t piece_size, int64_t index) {
  return std::max<int64_t>(0, std::min(piece_size, size - piece_start(size, piece_size, index)));
}

std::vector<int64_t> layer_norm_dims(IntArrayRef input_sizes, IntArrayRef normalized_shape) {
  const size_t k = normalized_shape.size(), n = input_sizes.size();
  bool ok = k >= 1 && k <= n;
  for (size_t i = 0; ok && i < k; ++i) ok = input_sizes[n - k + i] == normalized_shape[i];
  if (!ok)
    fail("layer_norm", "expected an input whose last dims are normalized_shape ", normalized_shape, ", got shape ",
         input_sizes);
  std::vector<int64_t> dims;
  for (int64_t i = -static_cast<int64_t>(k); i < 0; ++i) dims.push_back(i);
  return dims;
}

std::vector<int64_t> group_norm_shape(IntArrayRef input_sizes, int64_t num_groups) {
  if (input_sizes.size() < 2) fail("group_norm", "expected an input of shape [N, C, *], got ", input_sizes);
  if (num_groups <= 0 || input_sizes[1] % num_groups != 0)
    fail("group_norm", "expected num_groups to divide the ", input_sizes[1], " channels, got ", num_groups);
  return {input_sizes[0], num_groups, -1};
}

std::vector<int64_t> channel_shape(IntArrayRef input_sizes) {
  if (input_sizes.size() < 2) fail("batch_norm", "expected an input of shape [N, C, *], got ", input_sizes);
  std::vector<int64_t> shape(input_sizes.size() - 1, 1);
  shape[0] = input_sizes[1];
  return shape;
}

std::vector<int64_t> batch_norm_dims(IntArrayRef input_sizes) {
  if (input_sizes.size() < 2) fail("batch_norm", "expected an input of shape [N, C, *], got ", input_sizes);
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < static_cast<int64_t>(input_sizes.size()); ++d) dims.push_back(d);
  return dims;
}

double var_denominator(IntArrayRef sizes, IntArrayRef dim, bool unbiased) {
  return std::max(reduced_numel(sizes, dim) - (unbiased ? 1.0 : 0.0), 0.0);
}

double attention_scale(int64_t embed, std::optional<double> scale) {
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(embed));
}

double neg_infinity() { return -std::numeric_limits<double>::infinity(); }

Tensor causal_mask(int64_t L, int64_t S, TensorOptions options) { return diagonal_index(L, S, options.device()) > 0; }

Tensor apply_attention_mask(const Tensor& self, const Tensor& attn_mask) {
  check_attention_mask(self.sizes(), self.scalar_type(), attn_mask);
  if (attn_mask.dtype() == kBool) return self.masked_fill(attention_dropped(attn_mask), neg_infinity());
  return self + attn_mask;
}

Tensor attention_dropped(const Tensor& attn_mask) {
  return attn_mask.dtype() == kBool ? logical_not(attn_mask)
                                    : zeros(attn_mask.sizes(), attn_mask.options().dtype(kBool));
}

std::vector<int64_t> embedding_shape(IntArrayRef indices_sizes, IntArrayRef weight_sizes) {
  if (weight_sizes.size() != 2)
    fail("embedding", "expected a weight of shape [num_embeddings, embedding_dim], got ", weight_sizes);
  std::vector<int64_t> shape(indices_sizes.begin(), indices_sizes.end());
  shape.push_back(weight_sizes[1]);
  return shape;
}

Tensor padding_row_mask(int64_t num_embeddings, int64_t padding_idx, TensorOptions options) {
  return (arange(num_embeddings, options.dtype(kLong)) == padding_idx).unsqueeze(1);
}

std::vector<int64_t> repeat_view(IntArrayRef sizes, IntArrayRef repeats) {
  if (repeats.size() < sizes.size())
    fail("repeat", "expected at least as many repeats as dims, got repeats ", repeats, " for a tensor of shape ",
         sizes);
  for (int64_t r : repeats)
    if (r < 0) fail("repeat", "expected non-negative repeats, got ", repeats);
  std::vector<int64_t> view, result;
  const size_t lead = repeats.size() - sizes.size();
  for (size_t i = 0; i < repeats.size(); ++i) {
    view.push_back(1);
    view.push_back(i < lead ? 1 : sizes[i - lead]);
    result.push_back(detail::checked_mul(repeats[i], view.back(), "repeat"));
  }
  detail::checked_numel(result, "repeat");  // (the expanded [r0, s0, r1, s1, ...] has as many elements)
  return view;
}

std::vector<int64_t> repeat_expand(IntArrayRef sizes, IntArrayRef repeats) {
  std::vector<int64_t> view = repeat_view(sizes, repeats);
  for (size_t i = 0; i < repeats.size(); ++i) view[2 * i] = repeats[i];
  return view;
}

std::vector<int64_t> repeat_result(IntArrayRef sizes, IntArrayRef repeats) {
  const std::vector<int64_t> view = repeat_view(sizes, repeats);
  std::vector<int64_t> out;
  for (size_t i = 0; i < repeats.size(); ++i) out.push_back(repeats[i] * view[2 * i + 1]);
  return out;
}

std::vector<int64_t> negated(IntArrayRef values) {
  std::vector<int64_t> out;
  for (int64_t v : values) out.push_back(-v);
  return out;
}

double positive_or_one(double beta) { return beta > 0 ? beta : 1.0; }

Tensor checked(const Tensor& self, bool /*ok*/) { return self; }

bool check_sizes(const std::string& op, const std::string& what, IntArrayRef got, IntArrayRef want) {
  if (got != want) fail(op.c_str(), "expected ", what, " of shape ", want, ", got ", got);
  return true;
}

bool check_channels(const std::string& op, const std::string& what, IntArrayRef got, IntArrayRef input_sizes) {
  if (input_sizes.size() < 2) fail(op.c_str(), "expected an input of shape [N, C, *], got ", input_sizes);
  return check_sizes(op, what, got, IntArrayRef(input_sizes[1]));
}

bool check_broadcasts_to(const std::string& op, const std::string& what, IntArrayRef got, IntArrayRef input_sizes) {
  if (infer_size(got, input_sizes, op.c_str()) != std::vector<int64_t>(input_sizes.begin(), input_sizes.end()))
    fail(op.c_str(), "expected ", what, " to broadcast to the input's shape ", input_sizes, ", got ", got);
  return true;
}

bool check_at_least(const std::string& op, const std::string& what, double value, double bound, bool strict) {
  if (strict ? !(value > bound) : !(value >= bound))
    fail(op.c_str(), "expected ", what, strict ? " above " : " of at least ", bound, ", got ", value);
  return true;
}

bool check_batch_statistics(IntArrayRef input_sizes, bool training) {
  if (training && reduced_numel(input_sizes, batch_norm_dims(input_sizes)) <= 1)
    fail("batch_norm", "expected more than 1 value per channel when training, got input of shape ", input_sizes);
  return true;
}

bool check_not_causal_and_masked(bool is_causal, bool masked) {
  if (is_causal && masked)
    fail("scaled_dot_product_attention", "expected either attn_mask or is_causal, not both (as torch)");
  return true;
}

bool check_padding_idx(int64_t padding_idx, int64_t num_embeddings) {
  if (padding_idx < -1 || padding_idx >= num_embeddings)
    fail("embedding", "padding_idx ", padding_idx, " is out of range for ", num_embeddings, " embeddings");
  return true;
}

}  // namespace ad
}  // namespace fg
