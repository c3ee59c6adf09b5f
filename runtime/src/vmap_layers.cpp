// Batching rules of the layers of runtime/src/layers.cpp. With the batch dims in front, most of
// them act on trailing dims and run once on the physical tensor; a batched weight or bias is
// applied afterwards with the operands aligned; group_norm folds the batch into N and batch_norm
// into the channels (each example keeps its own statistics), as functorch's rules do.
#include <optional>
#include <vector>

#include "funcgen/runtime/ad.h"
#include "funcgen/runtime/vmap.h"
#include "vmap_internal.h"

namespace fg::vmap {
namespace {

using namespace detail;

bool given(const Batched& b) { return b.value.defined(); }
std::optional<Tensor> unbatched_or_none(const Batched& b) {
  return given(b) && b.levels == 0 ? std::optional<Tensor>(b.value) : std::nullopt;
}
// A per-channel tensor ([C], logically) as [C, 1, ...] against an input of logical rank `rank`.
Batched per_channel(const Batched& t, int64_t rank) {
  const int64_t nb = nbatch(t.levels);
  std::vector<int64_t> shape(t.value.sizes().begin(), t.value.sizes().begin() + nb);
  shape.push_back(t.value.size(nb));
  for (int64_t i = 2; i < rank; ++i) shape.push_back(1);
  return {t.value.reshape(shape), t.levels};
}
// x [B..., N, rest...] with its nb batch dims folded into N: [B... * N, rest...].
Tensor fold_into_first(const Tensor& x, int64_t nb) {
  std::vector<int64_t> shape{-1};
  shape.insert(shape.end(), x.sizes().begin() + nb + 1, x.sizes().end());
  return x.reshape(shape);
}
// The batch sizes (x's first nb dims) followed by `rest`.
std::vector<int64_t> batch_then(const Tensor& x, int64_t nb, IntArrayRef rest) {
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + nb);
  shape.insert(shape.end(), rest.begin(), rest.end());
  return shape;
}
void check_logical_rank(const Batched& x, int64_t at_least, const char* fn, const char* what) {
  check_operand(x, fn, "input");
  if (lrank(x) < at_least) vfail(fn, "expected ", what, ", got logical shape ", lshape(x));
}
// An element-wise loss of operands aligned to one batch and one logical rank, reduced per example.
template <typename Loss>
Batched aligned_loss(const std::vector<Batched>& ops, Reduction reduction, const char* fn, Loss&& loss) {
  const Levels all = union_levels(ops);
  if (all == 0) return {loss(ops, reduction), 0};
  if (lshape(ops[0]) != lshape(ops[1]))
    vfail(fn, "expected a target of the input's logical shape ", lshape(ops[0]), ", got ", lshape(ops[1]));
  const std::vector<Tensor> full = align_full(ops);
  std::vector<Batched> aligned;
  for (const Tensor& t : full) aligned.push_back({t, 0});
  return with_context(fn, [&] { return describe({{"input", &ops[0]}, {"target", &ops[1]}}); }, [&]() -> Batched {
    return {reduce_logical(loss(aligned, Reduction::None), nbatch(all), reduction), all};
  });
}
}  // namespace

Batched layer_norm(const Batched& input, IntArrayRef normalized_shape, const Batched& weight, const Batched& bias,
                   double eps) {
  check_operand(input, "layer_norm", "input");
  // (the normalized dims must be logical ones: with fewer, the physical op would take batch dims)
  with_context("layer_norm", [&] { return describe({{"input", &input}}); },
               [&] { return fg::ad::layer_norm_dims(lshape(input), normalized_shape); });
  const auto ctx = [&] { return describe({{"input", &input}, {"weight", &weight}, {"bias", &bias}}); };
  // The normalized dims are trailing ones: the batch dims in front are more rows.
  const bool shared = weight.levels == 0 && bias.levels == 0;
  Batched y = with_context("layer_norm", ctx, [&]() -> Batched {
    return {fg::layer_norm(input.value, normalized_shape, shared ? unbatched_or_none(weight) : std::nullopt,
                           shared ? unbatched_or_none(bias) : std::nullopt, eps),
            input.levels};
  });
  if (shared) return y;
  if (given(weight)) y = mul_aligned(y, weight, "layer_norm");
  if (given(bias)) y = add_aligned(y, bias, "layer_norm");
  return y;
}

Batched group_norm(const Batched& input, int64_t num_groups, const Batched& weight, const Batched& bias, double eps) {
  check_logical_rank(input, 2, "group_norm", "an input of shape [N, C, *]");
  const auto ctx = [&] { return describe({{"input", &input}, {"weight", &weight}, {"bias", &bias}}); };
  const int64_t nb = nbatch(input.levels);
  const bool shared = weight.levels == 0 && bias.levels == 0;
  Batched y = with_context("group_norm", ctx, [&]() -> Batched {
    const Tensor folded = fold_into_first(input.value, nb);  // each example's N rows are more rows
    const Tensor r = fg::group_norm(folded, num_groups, shared ? unbatched_or_none(weight) : std::nullopt,
                                    shared ? unbatched_or_none(bias) : std::nullopt, eps);
    return {r.reshape(input.value.sizes()), input.levels};
  });
  if (shared) return y;
  if (given(weight)) y = mul_aligned(y, per_channel(weight, lrank(input)), "group_norm");
  if (given(bias)) y = add_aligned(y, per_channel(bias, lrank(input)), "group_norm");
  return y;
}

Batched batch_norm(const Batched& input, const Batched& weight, const Batched& bias, const Batched& running_mean,
                   const Batched& running_var, bool training, double momentum, double eps) {
  check_logical_rank(input, 2, "batch_norm", "an input of shape [N, C, *]");
  const bool stats = given(running_mean) || given(running_var);
  if (stats && (running_mean.levels != 0 || running_var.levels != 0))
    vfail("batch_norm", "batched running statistics are not supported; pass them unbatched, or {}");
  if (stats && training && input.levels != 0)
    vfail("batch_norm", "cannot update the unbatched running statistics in place with batched values; pass {} for "
                        "running_mean and running_var (torch.func: replace_all_batch_norm_modules_), or training=false");
  const auto ctx = [&] { return describe({{"input", &input}, {"weight", &weight}, {"bias", &bias}}); };
  const int64_t nb = nbatch(input.levels);
  Batched y = with_context("batch_norm", ctx, [&]() -> Batched {
    if (nb == 0)
      return {fg::batch_norm(input.value, std::nullopt, std::nullopt, unbatched_or_none(running_mean),
                             unbatched_or_none(running_var), training, momentum, eps),
              0};
    // [B..., N, C, *] -> [N, B... * C, *]: each example's channels are channels of their own.
    const Tensor& x = input.value;
    std::vector<int64_t> perm{nb};
    for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
    for (int64_t i = nb + 1; i < x.dim(); ++i) perm.push_back(i);
    const Tensor moved = x.permute(perm);
    std::vector<int64_t> folded{x.size(nb), -1};
    folded.insert(folded.end(), x.sizes().begin() + nb + 2, x.sizes().end());
    const int64_t copies = fg::detail::product(IntArrayRef(x.sizes().data(), static_cast<size_t>(nb)));
    const auto repeated = [&](const Batched& s) {
      return given(s) ? std::optional<Tensor>(s.value.repeat({copies})) : std::nullopt;
    };
    const Tensor r = fg::batch_norm(moved.reshape(folded), std::nullopt, std::nullopt, repeated(running_mean),
                                    repeated(running_var), training, momentum, eps);
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    return {r.reshape(moved.sizes()).permute(inverse), input.levels};
  });
  if (given(weight)) y = mul_aligned(y, per_channel(weight, lrank(input)), "batch_norm");
  if (given(bias)) y = add_aligned(y, per_channel(bias, lrank(input)), "batch_norm");
  return y;
}

Batched scaled_dot_product_attention(const Batched& query, const Batched& key, const Batched& value,
                                     const Batched& attn_mask, double dropout_p, bool is_causal,
                                     std::optional<double> scale) {
  const char* fn = "scaled_dot_product_attention";
  check_logical_rank(query, 2, fn, "a query of shape [..., L, E]");
  check_logical_rank(key, 2, fn, "a key of shape [..., S, E]");
  check_logical_rank(value, 2, fn, "a value of shape [..., S, Ev]");
  if (dropout_p > 0)
    vfail(fn, "dropout_p > 0 draws random numbers, which vmap does not batch here yet; apply fg::dropout to the "
              "result's inputs instead, or use dropout_p = 0");
  std::vector<Batched> ops{query, key, value};
  if (given(attn_mask)) ops.push_back(attn_mask);
  const Levels all = union_levels(ops);
  const auto ctx = [&] {
    return describe({{"query", &query}, {"key", &key}, {"value", &value}, {"attn_mask", &attn_mask}});
  };
  return with_context(fn, ctx, [&]() -> Batched {
    // Leading dims broadcast in the op: with every operand at every level, the batch is more of them.
    const std::vector<Tensor> full = align_full(ops);
    return {fg::scaled_dot_product_attention(full[0], full[1], full[2],
                                             full.size() > 3 ? std::optional<Tensor>(full[3]) : std::nullopt, 0.0,
                                             is_causal, scale),
            all};
  });
}

Batched embedding(const Batched& weight, const Batched& indices, int64_t padding_idx) {
  check_operand(weight, "embedding", "weight");
  check_operand(indices, "embedding", "indices");
  if (lrank(weight) != 2)
    vfail("embedding", "expected a weight of shape [num_embeddings, embedding_dim], got logical shape ", lshape(weight));
  const auto ctx = [&] { return describe({{"weight", &weight}, {"indices", &indices}}); };
  if (weight.levels == 0)  // batched indices are more indices
    return with_context("embedding", ctx, [&]() -> Batched {
      return {fg::embedding(weight.value, indices.value, padding_idx), indices.levels};
    });
  if (indices.value.dtype() != kLong) vfail("embedding", "expected int64 indices, got ", indices.value.dtype());
  // Each example's table stacked into one: example b's row i is row b * V + i.
  const Levels all = weight.levels | indices.levels;
  const std::vector<int64_t> sizes = level_sizes(std::vector<Batched>{weight, indices}, all, "embedding");
  return with_context("embedding", ctx, [&]() -> Batched {
    const int64_t nb = nbatch(all), copies = fg::detail::product(sizes);
    const Tensor w = materialize(weight.value, weight.levels, all, sizes);
    const int64_t V = w.size(nb);
    const Tensor table = w.reshape({-1, w.size(nb + 1)});
    const Tensor idx = materialize(indices.value, indices.levels, all, sizes).reshape({copies, -1});
    // (an index outside an example's table would read another example's rows)
    if (idx.numel() > 0 && (idx.amin().item<int64_t>() < 0 || idx.amax().item<int64_t>() >= V))
      vfail("embedding", "index out of range for ", V, " embeddings: indices range over [",
            idx.amin().item<int64_t>(), ", ", idx.amax().item<int64_t>(), "]");
    fg::ad::check_padding_idx(padding_idx, V);
    const Tensor offsets = (arange(copies, idx.options()) * V).unsqueeze(1);
    // (padding_idx only stops gradients, which the derivative's own ops handle: the values are the same)
    const Tensor rows = fg::embedding(table, idx + offsets);
    std::vector<int64_t> shape = sizes;
    const IntArrayRef li = lshape(indices);
    shape.insert(shape.end(), li.begin(), li.end());
    shape.push_back(table.size(1));
    return {rows.reshape(shape), all};
  });
}

Batched one_hot(const Batched& self, int64_t num_classes) {
  check_operand(self, "one_hot", "self");
  if (num_classes < 0)
    vfail("one_hot", "num_classes -1 infers the classes from the values, which differ per example; give num_classes");
  return with_context("one_hot", [&] { return describe({{"self", &self}}); },
                      [&]() -> Batched { return {fg::one_hot(self.value, num_classes), self.levels}; });
}

Batched triu(const Batched& self, int64_t diagonal) {
  check_logical_rank(self, 2, "triu", "a tensor of at least 2 dims");
  return {fg::triu(self.value, diagonal), self.levels};
}

Batched tril(const Batched& self, int64_t diagonal) {
  check_logical_rank(self, 2, "tril", "a tensor of at least 2 dims");
  return {fg::tril(self.value, diagonal), self.levels};
}

Batched flip(const Batched& self, IntArrayRef dims) {
  check_operand(self, "flip", "self");
  const int64_t nb = nbatch(self.levels), rank = lrank(self);
  std::vector<int64_t> physical;
  for (int64_t d : dims) physical.push_back(fg::detail::wrap_dim(d, rank, "flip") + nb);
  return {fg::flip(self.value, physical), self.levels};
}

Batched roll(const Batched& self, IntArrayRef shifts, IntArrayRef dims) {
  check_operand(self, "roll", "self");
  const int64_t nb = nbatch(self.levels), rank = lrank(self);
  if (dims.empty()) {  // the logical tensor flattened
    if (shifts.size() != 1) vfail("roll", "expected one shift without dims, got ", shifts);
    return {fg::roll(flatten_logical(self.value, nb), shifts, nb).reshape(self.value.sizes()), self.levels};
  }
  std::vector<int64_t> physical;
  for (int64_t d : dims) physical.push_back(fg::detail::wrap_dim(d, rank, "roll") + nb);
  return {fg::roll(self.value, shifts, physical), self.levels};
}

Batched repeat(const Batched& self, IntArrayRef repeats) {
  check_operand(self, "repeat", "self");
  const int64_t nb = nbatch(self.levels), rank = lrank(self);
  if (static_cast<int64_t>(repeats.size()) < rank)
    vfail("repeat", "expected at least as many repeats as dims, got repeats ", repeats, " for logical shape ",
          lshape(self));
  // New leading logical dims go after the batch dims; the batch dims repeat once.
  std::vector<int64_t> lead(repeats.size() - static_cast<size_t>(rank), 1);
  const IntArrayRef ls = lshape(self);
  lead.insert(lead.end(), ls.begin(), ls.end());
  std::vector<int64_t> times(static_cast<size_t>(nb), 1);
  times.insert(times.end(), repeats.begin(), repeats.end());
  return {fg::repeat(self.value.reshape(batch_then(self.value, nb, lead)), times), self.levels};
}

Batched binary_cross_entropy_with_logits(const Batched& input, const Batched& target, const Batched& weight,
                                         const Batched& pos_weight, Reduction reduction) {
  const char* fn = "binary_cross_entropy_with_logits";
  check_operand(input, fn, "input");
  check_operand(target, fn, "target");
  std::vector<Batched> ops{input, target};
  if (given(weight)) ops.push_back(weight);
  if (given(pos_weight)) ops.push_back(pos_weight);
  return aligned_loss(ops, reduction, fn, [&](const std::vector<Batched>& a, Reduction r) {
    size_t k = 2;
    const std::optional<Tensor> w = given(weight) ? std::optional<Tensor>(a[k++].value) : std::nullopt;
    const std::optional<Tensor> pw = given(pos_weight) ? std::optional<Tensor>(a[k++].value) : std::nullopt;
    return fg::binary_cross_entropy_with_logits(a[0].value, a[1].value, w, pw, r);
  });
}

Batched smooth_l1_loss(const Batched& input, const Batched& target, Reduction reduction, double beta) {
  check_operand(input, "smooth_l1_loss", "input");
  check_operand(target, "smooth_l1_loss", "target");
  return aligned_loss({input, target}, reduction, "smooth_l1_loss", [&](const std::vector<Batched>& a, Reduction r) {
    return fg::smooth_l1_loss(a[0].value, a[1].value, r, beta);
  });
}

Batched huber_loss(const Batched& input, const Batched& target, Reduction reduction, double delta) {
  check_operand(input, "huber_loss", "input");
  check_operand(target, "huber_loss", "target");
  return aligned_loss({input, target}, reduction, "huber_loss", [&](const std::vector<Batched>& a, Reduction r) {
    return fg::huber_loss(a[0].value, a[1].value, r, delta);
  });
}

}  // namespace fg::vmap
