// Support for the code that funcgen generates for vmap: the batching rules that need run-time
// shapes. funcgen decides at compile time which values are batched at which vmap level; these
// helpers do the shape work that depends on the actual ranks and sizes.
//
// Layout convention: a value batched at a set of vmap levels (a bit mask, bit i = level i, level 0
// the outermost vmap) carries one batch dim per level at the front, in increasing level order,
// followed by its logical dims (the shape the untransformed function sees). nbatch(levels) is the
// number of those leading dims.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "funcgen/runtime/ops.h"
#include "funcgen/runtime/random.h"
#include "funcgen/runtime/tensor.h"

namespace fg::vmap {

using Levels = uint32_t;

inline int64_t nbatch(Levels levels) { return __builtin_popcount(levels); }

// The mask of the given vmap levels, as generated code names them: at_levels(0, 2) is batched at
// levels 0 and 2 (bit k: level k, 0 the outermost); at_levels() is not batched.
template <typename... K>
constexpr Levels at_levels(K... k) {
  return (Levels{0} | ... | (Levels{1} << k));
}

// A physical tensor with the vmap levels it is batched at.
struct Batched {
  Tensor value;
  Levels levels = 0;
};

// ------------------------------------------------------------------ entry and exit

// One argument's in_dim at one level, for the size check of that level.
struct MappedArg {
  const char* name;  // the parameter's name, for messages
  const Tensor* value;
  int64_t dim;  // physical dim holding this level's batch
  const std::vector<Tensor>* list = nullptr;  // a mapped vector of tensors: each element (value unused)
};

// Moves `in_dim` of x (a logical dim at this level, negative counts from the end) to physical
// position `position` (the number of batch dims of outer levels x already has in front). Throws
// fg::Error naming `fn`, the parameter and x's shape when in_dim is out of range, e.g.
// "fg::vmap: f: in_dim 2 of argument 'x' is out of range for a tensor of shape [3, 4]".
Tensor move_in(const Tensor& x, int64_t in_dim, int64_t position, const char* fn, const char* name);
// The same for each element of a mapped vector of tensors (named name[k] in messages).
std::vector<Tensor> move_in(const std::vector<Tensor>& xs, int64_t in_dim, int64_t position, const char* fn,
                            const char* name);

// The batch size of one level: every mapped argument must have the same size along its dim, as
// torch.func requires. Throws "fg::vmap: f: expected all tensors to have the same size in the
// mapped dimension, got sizes 3 for argument 'x' and 4 for argument 'y'". `args` is not empty.
int64_t batch_size(const char* fn, std::initializer_list<MappedArg> args);

// Gives an output that is batched at `have` the batch dims of every level in `all` that it lacks
// (expanded, not copied), using batch_sizes[i] for the i-th level of `all` (in level order). An
// undefined tensor stays undefined (fg::ad::zero_gradient of a value that a branch left unset).
Tensor materialize(const Tensor& x, Levels have, Levels all, const std::vector<int64_t>& batch_sizes);

// Moves the batch dim at physical position `position` to `out_dim` (a dim of the tensor without
// this level's batch dim plus it, negative counts from the end, as torch.func's out_dims); the
// `position` dims before it stay in front. Throws naming fn when out_dim is out of range.
Tensor move_out(const Tensor& x, int64_t position, int64_t out_dim, const char* fn);

// The same for each element of a list output (the gradient of a list parameter).
std::vector<Tensor> materialize(const std::vector<Tensor>& xs, Levels have, Levels all,
                                const std::vector<int64_t>& batch_sizes);
std::vector<Tensor> move_out(const std::vector<Tensor>& xs, int64_t position, int64_t out_dim, const char* fn);
// fg::ad::list_gradient on batched values: `grads` at levels `have` (where given), zeros like
// `like`'s elements (at levels `like_levels`) elsewhere; every element at levels `all`.
std::vector<Tensor> list_gradient(const std::vector<Tensor>& grads, Levels have, const std::vector<Tensor>& like,
                                  Levels like_levels, Levels all, const std::vector<int64_t>& batch_sizes);

// ------------------------------------------------------------------ alignment for batching rules

// Makes operands of a broadcasting op line up: every operand with levels != 0 gets a size-1 dim
// for each level of the union it lacks (at its place in level order) and size-1 dims after its
// batch dims until its logical rank is the largest logical rank among all operands. Operands with
// levels == 0 come back unchanged (NumPy broadcasting aligns them from the right). Views only.
// A braced list, align({{a, 0b1}, {b, 0}}), gives a std::array (for structured bindings); a
// std::vector<Batched> gives a std::vector. (The vector form is a template so that it never
// competes with the array form for a braced list.)
template <size_t N>
std::array<Tensor, N> align(const Batched (&operands)[N]);
template <typename Vector, typename = std::enable_if_t<std::is_same_v<Vector, std::vector<Batched>>>>
std::vector<Tensor> align(const Vector& operands);

// As align, and then expands every operand (unbatched ones too) to the union's full batch sizes;
// for ops that do not broadcast (cat, stack, gather, index_select, scatter_add). Unbatched operands
// also get leading size-1 logical dims up to the largest logical rank, so every result has
// nbatch(union) batch dims followed by that many logical dims. Expanded views, no copies.
std::vector<Tensor> align_full(const std::vector<Batched>& operands);

// Inserts size-1 dims for the levels in `want` that `have` lacks. `have` must be a subset of `want`.
Tensor add_levels(const Tensor& x, Levels have, Levels want);

// The union of the operands' levels.
Levels union_levels(const std::vector<Batched>& operands);

// A logical dim argument as a physical one: non-negative dims move past the nb batch dims,
// negative ones (counted from the end) stay.
inline int64_t dim(int64_t logical_dim, int64_t nb) { return logical_dim >= 0 ? logical_dim + nb : logical_dim; }
std::vector<int64_t> dims(IntArrayRef logical_dims, int64_t nb);
// A reduction's dims as physical ones: an empty list (every dim) is every logical dim of x.
std::vector<int64_t> reduced_dims(const Tensor& x, int64_t nb, IntArrayRef logical_dims);
// `sizes` with x's nb batch sizes in front (view/reshape/expand/new_* sizes).
std::vector<int64_t> batch_shape(const Tensor& x, int64_t nb, IntArrayRef sizes);
// `batch_sizes` followed by `sizes` (the batch_shape of a value whose batch sizes are known).
std::vector<int64_t> with_batch(IntArrayRef batch_sizes, IntArrayRef sizes);

// Logical queries.
inline int64_t logical_dim(const Tensor& x, int64_t nb) { return x.dim() - nb; }
int64_t logical_size(const Tensor& x, int64_t nb, int64_t d);  // x.size(d) of the logical tensor
int64_t logical_numel(const Tensor& x, int64_t nb);
IntArrayRef logical_sizes(const Tensor& x, int64_t nb);

// ------------------------------------------------------------------ rules with run-time shapes

// x's logical dims flattened into one (a logical scalar gives one dim of size 1): [B..., n].
// Reductions over every logical dim reduce over dim nb of this.
Tensor flatten_logical(const Tensor& x, int64_t nb);
// squeeze() of the logical dims only (batch dims of size 1 stay).
Tensor squeeze_logical(const Tensor& x, int64_t nb);
// t() of the logical tensor (no-op below 2 logical dims).
Tensor t(const Tensor& x, int64_t nb);
// permute(dims) of the logical tensor.
Tensor permute(const Tensor& x, int64_t nb, IntArrayRef dims);
// expand(sizes) of the logical tensor (sizes may have more dims than x, and -1 entries).
Tensor expand(const Tensor& x, int64_t nb, IntArrayRef sizes);

// torch.matmul of the logical operands (1-D operands promoted and squeezed as torch does).
Batched matmul(const Batched& a, const Batched& b);
Batched mm(const Batched& a, const Batched& b);
Batched mv(const Batched& a, const Batched& v);
Batched dot(const Batched& a, const Batched& b);
Batched outer(const Batched& a, const Batched& b);
Batched bmm(const Batched& a, const Batched& b);
// linear(x, w, b) with any of the three batched; `bias` undefined when there is none.
Batched linear(const Batched& x, const Batched& w, const Batched& bias);
// einsum of batched operands: each level becomes an extra index in the equation.
Batched einsum(const std::string& equation, const std::vector<Batched>& operands);

Batched cat(const std::vector<Batched>& tensors, int64_t dim);
Batched stack(const std::vector<Batched>& tensors, int64_t dim);
Batched index_select(const Batched& self, int64_t dim, const Batched& index);
Batched gather(const Batched& self, int64_t dim, const Batched& index);
Batched scatter_add(const Batched& self, int64_t dim, const Batched& index, const Batched& src);

// An optional tensor argument that is absent, in the calls of fg::ad helpers (whose arguments
// generated code passes as written): std::nullopt; ops' rules get {} (an undefined Batched).
struct NoTensor {
  NoTensor(std::nullopt_t, Levels = 0) {}  // NOLINT: implicit, from std::nullopt and {std::nullopt, levels}
};

Batched mse_loss(const Batched& input, const Batched& target, Reduction reduction);
Batched nll_loss(const Batched& input, const Batched& target, const Batched& weight, Reduction reduction,
                 int64_t ignore_index);
Batched cross_entropy(const Batched& input, const Batched& target, const Batched& weight,
                      Reduction reduction, int64_t ignore_index);

// Convolutions (conv_rules in vmap_conv.cpp): a batched input alone is folded into the batch dim
// N; a batched weight folds the batch into the channels and groups, as functorch's rules do. An
// absent bias is {} (an undefined Batched).
Batched conv1d(const Batched& input, const Batched& weight, const Batched& bias, IntArrayRef stride,
               IntArrayRef padding, IntArrayRef dilation, int64_t groups);
Batched conv1d(const Batched& input, const Batched& weight, const Batched& bias, IntArrayRef stride,
               const PaddingMode& padding, IntArrayRef dilation, int64_t groups);
Batched conv2d(const Batched& input, const Batched& weight, const Batched& bias, IntArrayRef stride,
               IntArrayRef padding, IntArrayRef dilation, int64_t groups);
Batched conv2d(const Batched& input, const Batched& weight, const Batched& bias, IntArrayRef stride,
               const PaddingMode& padding, IntArrayRef dilation, int64_t groups);
Batched conv_transpose1d(const Batched& input, const Batched& weight, const Batched& bias, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation);
Batched conv_transpose2d(const Batched& input, const Batched& weight, const Batched& bias, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation);

// Pooling: the batch dims join the planes (every dim before the pooled ones).
Batched max_pool1d(const Batched& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef dilation, bool ceil_mode);
Batched max_pool2d(const Batched& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef dilation, bool ceil_mode);
Batched avg_pool2d(const Batched& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                   bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override);
Batched adaptive_avg_pool2d(const Batched& self, IntArrayRef output_size);

// The layers (vmap_layers.cpp): an absent optional tensor is {} (an undefined Batched).
Batched layer_norm(const Batched& input, IntArrayRef normalized_shape, const Batched& weight, const Batched& bias,
                   double eps);
Batched group_norm(const Batched& input, int64_t num_groups, const Batched& weight, const Batched& bias, double eps);
// Running statistics must be unbatched, and are not updated by a batched input (fg::Error, as
// torch.func raises; funcgen diagnoses it where it can see it).
Batched batch_norm(const Batched& input, const Batched& weight, const Batched& bias, const Batched& running_mean,
                   const Batched& running_var, bool training, double momentum, double eps);
Batched scaled_dot_product_attention(const Batched& query, const Batched& key, const Batched& value,
                                     const Batched& attn_mask, double dropout_p, bool is_causal,
                                     std::optional<double> scale);
Batched embedding(const Batched& weight, const Batched& indices, int64_t padding_idx);
Batched one_hot(const Batched& self, int64_t num_classes);
Batched triu(const Batched& self, int64_t diagonal);
Batched tril(const Batched& self, int64_t diagonal);
Batched flip(const Batched& self, IntArrayRef dims);
Batched roll(const Batched& self, IntArrayRef shifts, IntArrayRef dims);
Batched repeat(const Batched& self, IntArrayRef repeats);
Batched binary_cross_entropy_with_logits(const Batched& input, const Batched& target, const Batched& weight,
                                         const Batched& pos_weight, Reduction reduction);
Batched smooth_l1_loss(const Batched& input, const Batched& target, Reduction reduction, double beta);
Batched huber_loss(const Batched& input, const Batched& target, Reduction reduction, double delta);

// ------------------------------------------------------------------ derivative helpers (fg::ad)

// The batching rules of the fg::ad helpers that generated derivative code calls, on logical
// tensors (see funcgen/runtime/ad.h for what each computes).
namespace ad {
Batched grad_seed(const Batched& output, const char* fn);
Batched sum_to(const Batched& self, IntArrayRef sizes);
Batched sum_backward(const Batched& g, IntArrayRef self_sizes, IntArrayRef dim, bool keepdim);
Batched sum_reduce(const Batched& self, IntArrayRef dim, bool keepdim);
Batched matmul_backward_self(const Batched& g, const Batched& self, const Batched& other);
Batched matmul_backward_other(const Batched& g, const Batched& self, const Batched& other);
Batched linear_backward_weight(const Batched& g, const Batched& input, const Batched& weight);
Batched reduction_apply(const Batched& self, Reduction reduction);
Batched reduction_backward(const Batched& g, IntArrayRef sizes, Reduction reduction);
Batched select_backward(const Batched& g, IntArrayRef sizes, int64_t dim, int64_t index);
Batched zero_gradient(const Batched& x);
// `all`: the levels of the sum (the generated code's), `batch_sizes` theirs: a gradient without a
// value has no batch of its own, so the other one is expanded to them.
Batched add_gradients(const Batched& self, const Batched& other, Levels all, const std::vector<int64_t>& batch_sizes);
Batched slice_backward(const Batched& g, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                       std::optional<int64_t> end, int64_t step);
Batched narrow_backward(const Batched& g, IntArrayRef sizes, int64_t dim, int64_t start, int64_t length);
Batched diagonal_backward(const Batched& g, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2);
Batched index_select_backward(const Batched& g, IntArrayRef sizes, int64_t dim, const Batched& index);
// The products with the standard basis (fg::ad::basis_matmul...), `basis` batched at its own level
// only (a fg::ad::basis_placeholder or a real basis: only its shape is read). When the basis is
// over a vector and the shapes allow, the result's rows come from the other operands (batched at
// levels of their own, after which the basis's level is put); otherwise the basis is formed.
Batched basis_matmul(const Batched& basis, const Batched& other);
Batched basis_matmul_scaled(const Batched& basis, const Batched& scale, const Batched& other);
Batched matmul_basis(const Batched& other, const Batched& basis);
Batched matmul_basis_scaled(const Batched& other, const Batched& basis, const Batched& scale);
Batched basis_matmul_view(const Batched& basis, const Batched& other);
Batched matmul_basis_view(const Batched& other, const Batched& basis);
// `weight` undefined ({}) or NoTensor when there is none.
Batched nll_loss_backward(const Batched& g, const Batched& input, const Batched& target, const Batched& weight,
                          Reduction reduction, int64_t ignore_index);
Batched nll_loss_backward(const Batched& g, const Batched& input, const Batched& target, NoTensor weight,
                          Reduction reduction, int64_t ignore_index);
Batched convolution(const Batched& input, const Batched& weight, IntArrayRef stride, IntArrayRef padding,
                    IntArrayRef dilation, int64_t groups);
Batched convolution(const Batched& input, const Batched& weight, IntArrayRef stride, const PaddingMode& padding,
                    IntArrayRef dilation, int64_t groups);
Batched conv_backward_input(const Batched& g, IntArrayRef input_sizes, const Batched& weight, IntArrayRef stride,
                            IntArrayRef padding, IntArrayRef dilation, int64_t groups);
Batched conv_backward_input(const Batched& g, IntArrayRef input_sizes, const Batched& weight, IntArrayRef stride,
                            const PaddingMode& padding, IntArrayRef dilation, int64_t groups);
Batched conv_backward_weight(const Batched& g, const Batched& input, IntArrayRef weight_sizes, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, int64_t groups);
Batched conv_backward_weight(const Batched& g, const Batched& input, IntArrayRef weight_sizes, IntArrayRef stride,
                             const PaddingMode& padding, IntArrayRef dilation, int64_t groups);
Batched max_pool_gather(const Batched& t, const Batched& self, IntArrayRef kernel_size, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, int64_t spatial);
Batched max_pool_scatter(const Batched& g, const Batched& self, IntArrayRef kernel_size, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, int64_t spatial);
Batched avg_pool2d_backward(const Batched& g, IntArrayRef self_sizes, IntArrayRef kernel_size, IntArrayRef stride,
                            IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                            std::optional<int64_t> divisor_override);
Batched adaptive_avg_pool2d_backward(const Batched& g, IntArrayRef self_sizes);
Batched conv_bias_expand(const Batched& bias, IntArrayRef sizes, int64_t spatial);
Batched conv_bias_backward(const Batched& g, int64_t spatial);
}  // namespace ad

// ------------------------------------------------------------------ randomness

// randomness='same' for an op whose input x is batched: the same random values for every example.
Tensor dropout_same(const Tensor& x, int64_t nb, double p, bool train);
Tensor bernoulli_same(const Tensor& p, int64_t nb);
// dropout_mask(x, p, train) for x with nb batch dims: one mask of x's logical shape with `batch` in
// front (the sizes of the randomness='different' levels; none for 'same').
Tensor dropout_mask(const Tensor& x, int64_t nb, IntArrayRef batch, double p, bool train);
// feature_dropout_mask of x's logical tensor ([N, C, 1, ...]), with `batch` in front.
Tensor feature_dropout_mask(const Tensor& x, int64_t nb, IntArrayRef batch, double p, bool train);

// ------------------------------------------------------------------ control_flow='select'

// Whether any element of a mask is nonzero: a loop on batched values runs while any example is active.
bool any(const Tensor& mask);

// ------------------------------------------------------------------ fallback and chunking

// The slow path for an op without a batching rule (functorch's fallback): expands the batched
// operands to the union's batch sizes, runs `op` once per example on the unbatched slices
// (operands with levels == 0 are passed whole) and stacks the results.
Batched per_example(const std::vector<Batched>& operands,
                    const std::function<Tensor(const std::vector<Tensor>&)>& op);
// The same for an op with any number of tensor outputs (none: an op run for its effect, such as a
// function whose body funcgen cannot see); each output is stacked on its own.
std::vector<Batched> per_example_outputs(const std::vector<Batched>& operands,
                                         const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& op);

// The tensors of a std::tuple or std::pair of them, as per_example_outputs's op returns them.
template <class... T>
std::vector<Tensor> tensors_of(const std::tuple<T...>& t) {
  return std::apply([](const auto&... x) { return std::vector<Tensor>{Tensor(x)...}; }, t);
}
template <class A, class B>
std::vector<Tensor> tensors_of(const std::pair<A, B>& p) {
  return {Tensor(p.first), Tensor(p.second)};
}
// The values of N outputs of per_example_outputs as a std::tuple (they share their batch levels).
template <size_t... I>
auto values_tuple_at(const std::vector<Batched>& outputs, std::index_sequence<I...>) {
  return std::make_tuple(outputs.at(I).value...);
}
template <size_t N>
auto values_tuple(const std::vector<Batched>& outputs) {
  return values_tuple_at(outputs, std::make_index_sequence<N>{});
}

// vmap's chunk_size: calls `body` on slices of at most `chunk` examples along each argument's
// batch dim of one level (args[i].second is that dim, or -1 for an argument not batched at that
// level), and concatenates each output along out_positions[j]. With chunk >= batch, one call.
std::vector<Tensor> chunked(int64_t chunk, int64_t batch, const std::vector<std::pair<Tensor, int64_t>>& args,
                            const std::vector<int64_t>& out_positions,
                            const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& body);

}  // namespace fg::vmap

#include "funcgen/runtime/vmap_inl.h"
