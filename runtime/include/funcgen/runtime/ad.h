// Support for the derivative code funcgen generates: the parts of derivative rules that depend on
// run-time shapes (undoing broadcasting, reductions, matmul's 1-D cases). Each one is linear in its
// tensor arguments and has its own derivative rules in templates/derivatives.def, so generated
// derivative code can be differentiated again; each has a batching rule (fg::vmap::ad, vmap.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "funcgen/runtime/ops.h"
#include "funcgen/runtime/tensor.h"

namespace fg::ad {

// The gradient seed of grad: ones shaped as `output`, which must have one element (grad
// differentiates scalar functions); throws naming `fn` otherwise.
Tensor grad_seed(const Tensor& output, const char* fn);

// Sums `self` down to `sizes`, undoing broadcasting: extra leading dims are summed away and dims
// that are 1 in `sizes` are summed with keepdim. The adjoint of self.expand(...).
Tensor sum_to(const Tensor& self, IntArrayRef sizes);

// The gradient of sum(self, dim, keepdim) with respect to self: g broadcast back to `self_sizes`
// (an empty dim means every dim).
Tensor sum_backward(const Tensor& g, IntArrayRef self_sizes, IntArrayRef dim, bool keepdim);
// sum over `dim` (every dim when empty), the adjoint of sum_backward.
Tensor sum_reduce(const Tensor& self, IntArrayRef dim, bool keepdim);
// How many elements a reduction over `dim` (every dim when empty) of a tensor of `sizes` combines.
double reduced_numel(IntArrayRef sizes, IntArrayRef dim);

// torch.matmul's gradients, with its 1-D and broadcasting cases: of self (shaped as self) and of
// other (shaped as other), for the output gradient g.
Tensor matmul_backward_self(const Tensor& g, const Tensor& self, const Tensor& other);
Tensor matmul_backward_other(const Tensor& g, const Tensor& self, const Tensor& other);

// linear(input, weight, bias) = input @ weight.T + bias: the weight's gradient, summed over the
// input's leading dims.
Tensor linear_backward_weight(const Tensor& g, const Tensor& input, const Tensor& weight);

// A loss's reduction (Mean, Sum or None) and its adjoint: g broadcast to `sizes` (scaled by
// 1/numel for Mean).
Tensor reduction_apply(const Tensor& self, Reduction reduction);
Tensor reduction_backward(const Tensor& g, IntArrayRef sizes, Reduction reduction);

// The gradient of self.select(dim, index): zeros of `sizes` with g at that index.
Tensor select_backward(const Tensor& g, IntArrayRef sizes, int64_t dim, int64_t index);

// The starting value of a gradient that reverse-mode code adds to inside a branch or a loop: zeros
// shaped as x, or an undefined tensor when x has none (a value that only a branch not taken sets,
// whose gradient is then never read).
Tensor zero_gradient(const Tensor& x);
// Two contributions to such a gradient: self + other, where one without a value counts as none
// (the gradient of a trip that had no value stays without one).
Tensor add_gradients(const Tensor& self, const Tensor& other);

// The gradients of the views that keep part of a tensor: zeros of `sizes` with g written where
// self.slice(dim, start, end, step) / self.narrow(dim, start, length) / self.diagonal(offset,
// dim1, dim2) read. Each is the adjoint of that view.
Tensor slice_backward(const Tensor& g, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step);
Tensor narrow_backward(const Tensor& g, IntArrayRef sizes, int64_t dim, int64_t start, int64_t length);
Tensor diagonal_backward(const Tensor& g, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2);

// The gradient of self.index_select(dim, index): zeros of `sizes` with g's slices added at the
// indices along dim (repeated indices accumulate). The adjoint of index_select.
Tensor index_select_backward(const Tensor& g, IntArrayRef sizes, int64_t dim, const Tensor& index);

// The gradient of nll_loss(input, target, weight, reduction, ignore_index) with respect to input
// (only input's shape is read): -weight[t] * g (divided by the total weight for Mean) at each
// target class, zero elsewhere and at ignored targets. The adjoint of nll_loss in its input (a
// linear map), so nll_loss itself is this helper's derivative.
Tensor nll_loss_backward(const Tensor& g, const Tensor& input, const Tensor& target,
                         const std::optional<Tensor>& weight, Reduction reduction, int64_t ignore_index);

// Reverse mode over a loop's reverse pass: the gradients of the trips it stored (one tape per
// value, std::vector<Tensor>) live on a tape of gradients. tape_add adds g to entry i (where the
// reverse pass read the trip back), growing the tape to hold it; tape_pop takes the last entry
// off (where the forward pass stored it: those run last trip first). An entry without a value is
// a trip whose value had none (set by a branch not taken). Called by generated code only.
void tape_add(std::vector<Tensor>& tape, int64_t i, const Tensor& g);
Tensor tape_pop(std::vector<Tensor>& tape);
// The same for a loop inside a loop: the outer loop stores the inner loop's tapes per trip, and
// each inner tape of gradients is given once (where the inner tape was read back); an empty tape
// of them means no gradient reached the inner loop's trips.
template <class Inner>
void tape_add(std::vector<Inner>& tape, int64_t i, Inner g) {
  if (i < 0) throw Error("ad::tape_add: trip " + std::to_string(i) + " of a tape (internal error of the generated code)");
  if (i >= static_cast<int64_t>(tape.size())) tape.resize(static_cast<size_t>(i) + 1);
  tape[static_cast<size_t>(i)] = std::move(g);
}
template <class Inner>
Inner tape_pop(std::vector<Inner>& tape) {
  if (tape.empty()) return Inner();  // no gradient reached the inner loop's trips
  Inner g = std::move(tape.back());
  tape.pop_back();
  return g;
}
// Reverse mode over those (a third derivative): the tape_pops of a tape of gradients push their
// gradients onto a tape of their own, in trip order, and each tape_add reads its value's gradient
// back from it with tape_read: entry i, or none (an undefined tensor, an empty inner tape) where
// the tape has none.
Tensor tape_read(const std::vector<Tensor>& tape, int64_t i);
// A list's element assigned (`v[i] = y`, ir::kListSet) in reverse mode: tape_take gives entry i's
// gradient (y's) and clears it, so that the reads before the assignment fill it for the value it
// held; tape_set is its reverse (and tape_take tape_set's), entry i set, the tape grown to hold it.
Tensor tape_take(std::vector<Tensor>& tape, int64_t i);
void tape_set(std::vector<Tensor>& tape, int64_t i, const Tensor& value);
// The gradient of a list parameter (a std::vector<Tensor> read at run-time indices): entry k of
// its list of gradients (tape_add added them where the list was read), zeros like element k where
// no gradient reached it. Called by generated code only.
std::vector<Tensor> list_gradient(const std::vector<Tensor>& grads, const std::vector<Tensor>& like);
// `i` if it indexes a vector of `size` tensors, else fg::Error as std::vector::at throws: what
// generated code reads for ws.at(i).
int64_t checked_index(size_t size, int64_t i);
// jvp's tangents of a list parameter must be as many as its tensors, as torch.func requires
// tangents structured as the primals: fg::Error naming the parameter otherwise.
void check_tangent_list(const std::vector<Tensor>& primal, const std::vector<Tensor>& tangent, const char* name);
template <class Inner>
Inner tape_read(const std::vector<Inner>& tape, int64_t i) {
  if (i < 0) throw Error("ad::tape_read: trip " + std::to_string(i) + " of a tape (internal error of the generated code)");
  return i < static_cast<int64_t>(tape.size()) ? tape[static_cast<size_t>(i)] : Inner();
}

// Derivative code that runs a random function again (the vjp or jvp of a vmapped call recomputes
// its forward pass) draws the values the first run drew: rng_state() before the first run,
// rng_replay(state) before each rerun, which returns where the generator was (to go back to it
// with rng_replay afterwards).
struct RngState {
  uint64_t seed = 0;
  uint64_t offset = 0;
};
RngState rng_state();
RngState rng_replay(const RngState& state);

// Convolutions of any number of spatial dims (from weight.dim() - 2), without bias: C(x, w). It is
// bilinear, and so are its two adjoints below, so the three are each other's derivatives.
Tensor convolution(const Tensor& input, const Tensor& weight, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef dilation, int64_t groups);
Tensor convolution(const Tensor& input, const Tensor& weight, IntArrayRef stride, const PaddingMode& padding,
                   IntArrayRef dilation, int64_t groups);
// The adjoint of C in its input: the gradient w.r.t. an input of `input_sizes` for the output
// gradient g (conv_transpose is this with the input's size computed from output_padding).
Tensor conv_backward_input(const Tensor& g, IntArrayRef input_sizes, const Tensor& weight, IntArrayRef stride,
                           IntArrayRef padding, IntArrayRef dilation, int64_t groups);
Tensor conv_backward_input(const Tensor& g, IntArrayRef input_sizes, const Tensor& weight, IntArrayRef stride,
                           const PaddingMode& padding, IntArrayRef dilation, int64_t groups);
// The adjoint of C in its weight: the gradient w.r.t. a weight of `weight_sizes`.
Tensor conv_backward_weight(const Tensor& g, const Tensor& input, IntArrayRef weight_sizes, IntArrayRef stride,
                            IntArrayRef padding, IntArrayRef dilation, int64_t groups);
Tensor conv_backward_weight(const Tensor& g, const Tensor& input, IntArrayRef weight_sizes, IntArrayRef stride,
                            const PaddingMode& padding, IntArrayRef dilation, int64_t groups);
// A convolution's bias [C] broadcast into its output of `sizes` (channels at dim
// sizes.size() - spatial - 1), and the adjoint: g summed over every dim but the channels.
Tensor conv_bias_expand(const Tensor& bias, IntArrayRef sizes, int64_t spatial);
Tensor conv_bias_backward(const Tensor& g, int64_t spatial);

// max pooling's derivatives (spatial: 1 or 2 dims): t read at each window's maximum of self (the
// JVP, shaped as the pooled result), and g added back at those positions (the VJP, shaped as
// self). Each is linear in its first argument and the other's adjoint; self only picks positions.
Tensor max_pool_gather(const Tensor& t, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, int64_t spatial);
Tensor max_pool_scatter(const Tensor& g, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, int64_t spatial);
// The adjoints of avg_pool2d and adaptive_avg_pool2d (output size from g's last two dims).
Tensor avg_pool2d_backward(const Tensor& g, IntArrayRef self_sizes, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override);
Tensor adaptive_avg_pool2d_backward(const Tensor& g, IntArrayRef self_sizes);
// relu's gradient g at its output: g where output > 0, else 0 (torch's threshold_backward), in one
// pass; g and output broadcast together. Piecewise constant in output.
Tensor relu_backward(const Tensor& g, const Tensor& output);

// Non-tensor helpers of derivative formulas (plain values; nothing to differentiate or batch).
// The permutation that undoes permute(dims).
std::vector<int64_t> inverse_permutation(IntArrayRef dims);
// The order p of a norm (2 when not given), for its derivative: throws for the orders that the
// derivative rule does not cover (p < 1, infinite or NaN).
double norm_order(const std::optional<Scalar>& p);
// 1 where gelu's `approximate` is "tanh", 0 where "none" (its derivative blends the two forms'
// slopes by it, so that the rule is an expression of differentiable ops); throws for others.
double gelu_tanh(const std::string& approximate);
// The class dim of cross_entropy's and nll_loss's input: 0 for an input of 1 dim, else 1.
int64_t class_dim(int64_t input_dim);

// The layers' decompositions (templates/derivatives.def, FG_DECOMPOSE; runtime/src/layers.cpp).
// layer_norm's normalized dims, as negative dims (throws unless the input ends in normalized_shape).
std::vector<int64_t> layer_norm_dims(IntArrayRef input_sizes, IntArrayRef normalized_shape);
// [N, num_groups, -1], group_norm's view of an input [N, C, *].
std::vector<int64_t> group_norm_shape(IntArrayRef input_sizes, int64_t num_groups);
// [C, 1, ...]: a per-channel tensor's view that broadcasts along dim 1 of an input [N, C, *].
std::vector<int64_t> channel_shape(IntArrayRef input_sizes);
// {0, 2, 3, ...}: batch_norm's statistics dims.
std::vector<int64_t> batch_norm_dims(IntArrayRef input_sizes);
// var's divisor: the reduced elements, less one when unbiased (0 at least).
double var_denominator(IntArrayRef sizes, IntArrayRef dim, bool unbiased);
double attention_scale(int64_t embed, std::optional<double> scale);
double neg_infinity();
// bool [L, S] on options' device, true where key position s comes after query position l
// (is_causal's masked ones).
Tensor causal_mask(int64_t L, int64_t S, TensorOptions options = {});
// self with an attn_mask applied: bool (false: -inf) or float (added); both broadcast.
Tensor apply_attention_mask(const Tensor& self, const Tensor& attn_mask);
// Where apply_attention_mask sets -inf: !attn_mask for a bool mask, nowhere for a float one.
Tensor attention_dropped(const Tensor& attn_mask);
// embedding's result shape, [*indices, embedding_dim] (throws unless weight is 2-D).
std::vector<int64_t> embedding_shape(IntArrayRef indices_sizes, IntArrayRef weight_sizes);
// bool [num_embeddings, 1] on options' device, true at padding_idx's row.
Tensor padding_row_mask(int64_t num_embeddings, int64_t padding_idx, TensorOptions options = {});
// repeat as reshape -> expand -> reshape: [1, s0, 1, s1, ...], [r0, s0, r1, s1, ...], [r0 s0, ...]
// (leading repeats beyond self's dims over size-1 dims).
std::vector<int64_t> repeat_view(IntArrayRef sizes, IntArrayRef repeats);
std::vector<int64_t> repeat_expand(IntArrayRef sizes, IntArrayRef repeats);
std::vector<int64_t> repeat_result(IntArrayRef sizes, IntArrayRef repeats);
std::vector<int64_t> negated(IntArrayRef values);
// A decomposition's argument checks, which throw as the op does (naming it): `checked` is self
// (AD's identity) after the check that computed `ok` ran.
Tensor checked(const Tensor& self, bool ok);
bool check_sizes(const std::string& op, const std::string& what, IntArrayRef got, IntArrayRef want);
bool check_channels(const std::string& op, const std::string& what, IntArrayRef got, IntArrayRef input_sizes);
bool check_broadcasts_to(const std::string& op, const std::string& what, IntArrayRef got, IntArrayRef input_sizes);
bool check_at_least(const std::string& op, const std::string& what, double value, double bound, bool strict);
bool check_batch_statistics(IntArrayRef input_sizes, bool training);
bool check_not_causal_and_masked(bool is_causal, bool masked);
bool check_padding_idx(int64_t padding_idx, int64_t num_embeddings);
// The pieces of self.split(split_size, dim) and self.chunk(chunks, dim), one at a time: funcgen
// reads a vector of pieces by index as these calls, which AD differentiates as narrows. Piece
// `index` (fg::Error when out of range); how many pieces a dim of `size` elements gives; where
// piece `index` starts and how long it is, for pieces of `piece_size` (a split's split_size, a
// chunk's chunk_size) along a dim of `size` elements.
Tensor split_piece(const Tensor& self, int64_t split_size, int64_t dim, int64_t index);
Tensor chunk_piece(const Tensor& self, int64_t chunks, int64_t dim, int64_t index);
// The same for self.split(split_sizes, dim) (pieces of the given sizes): piece `index`, the count,
// and where piece `index` starts and how long it is.
Tensor split_with_sizes_piece(const Tensor& self, IntArrayRef split_sizes, int64_t dim, int64_t index);
int64_t split_with_sizes_count(IntArrayRef split_sizes);
int64_t split_with_sizes_start(IntArrayRef split_sizes, int64_t index);
int64_t split_with_sizes_length(IntArrayRef split_sizes, int64_t index);
int64_t split_count(int64_t size, int64_t split_size);
int64_t chunk_count(int64_t size, int64_t chunks);
int64_t chunk_size(int64_t size, int64_t chunks);
int64_t piece_start(int64_t size, int64_t piece_size, int64_t index);
int64_t piece_length(int64_t size, int64_t piece_size, int64_t index);
// smooth_l1_loss's beta where it divides (beta 0 is the L1 loss, whose quadratic side is empty).
double positive_or_one(double beta);

// For jacrev/jacfwd/hessian: the standard basis of the tensors of shape `sizes`, as rows of an
// identity [n, sizes...] (n = the number of elements), in the dtype and on the device of `like`.
Tensor basis(const Tensor& like, IntArrayRef sizes);
// What generated code passes for a basis whose every use the generator rewrote into the
// structured products below (transforms/ad/structured_basis.cpp): basis(like, sizes)'s shape,
// dtype and device, as zero strides over one zero (no memory). Only those products, batched with
// it at its vmap level, read it, and only for its shape.
Tensor basis_placeholder(const Tensor& like, IntArrayRef sizes);
// matmul(basis * scale, other) and matmul(other, basis * scale) (no scale: the basis itself). Under
// vmap at the basis's level (fg::vmap::ad), the rows of these products come from `scale` and
// `other` without forming the basis: matmul(diag(v), W) is v.unsqueeze(-1) * W.
Tensor basis_matmul(const Tensor& basis, const Tensor& other);
Tensor basis_matmul_scaled(const Tensor& basis, const Tensor& scale, const Tensor& other);
Tensor matmul_basis(const Tensor& other, const Tensor& basis);
Tensor matmul_basis_scaled(const Tensor& other, const Tensor& basis, const Tensor& scale);
// basis_matmul and matmul_basis where the generated code only reads the result (no in-place write,
// not returned, not viewed): under vmap its rows may be a view of `other` rather than a copy.
Tensor basis_matmul_view(const Tensor& basis, const Tensor& other);
Tensor matmul_basis_view(const Tensor& other, const Tensor& basis);
// x with its dim `dim` (of size prod(sizes); negative counts from the end) split into `sizes`.
Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes);
// Jacobians w.r.t. a list parameter (a std::vector<Tensor> read at run-time indices), as torch.func
// takes them w.r.t. a list: jacrev's rows of each element's gradient, unflattened one by one;
// jacfwd's basis over all the elements at once (element k: [n, sizes_k...], n the elements of the
// whole list, zero outside k's block of rows; fg::Error naming the function `name` and its
// parameter when the list is empty), and its columns split back into one jacobian per element
// (dim `dim` of `columns` holds the n, in the order of `like`).
std::vector<Tensor> unflatten_each(const std::vector<Tensor>& xs, int64_t dim, IntArrayRef sizes);
std::vector<Tensor> list_basis(const std::vector<Tensor>& like, const char* name, const char* param);
// Each element's select(dim, index): a list parameter's elements without a vmap's batch dim.
std::vector<Tensor> select_each(const std::vector<Tensor>& xs, int64_t dim, int64_t index);
std::vector<Tensor> unflatten_list(const Tensor& columns, int64_t dim, const std::vector<Tensor>& like);

}  // namespace fg::ad
