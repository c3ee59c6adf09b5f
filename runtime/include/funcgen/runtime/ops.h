// The free functions of the fg runtime, named and ordered as torch:: / at:: functions.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "funcgen/runtime/tensor.h"

namespace fg {

// ---------------------------------------------------------------- factories
Tensor empty(IntArrayRef size, TensorOptions options = {});
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor full(IntArrayRef size, const Scalar& value, TensorOptions options = {});
Tensor empty_like(const Tensor& self, std::optional<TensorOptions> options = std::nullopt);
Tensor zeros_like(const Tensor& self, std::optional<TensorOptions> options = std::nullopt);
Tensor ones_like(const Tensor& self, std::optional<TensorOptions> options = std::nullopt);
Tensor full_like(const Tensor& self, const Scalar& value, std::optional<TensorOptions> options = std::nullopt);
// Integer arguments give int64, floating ones the default float32 (as torch.arange).
Tensor arange(const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options = {});
Tensor eye(int64_t n, TensorOptions options = {});
Tensor eye(int64_t n, int64_t m, TensorOptions options = {});
// Wraps memory the caller owns (no copy); it must outlive every tensor that views it.
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
// Copies the values; floating values give float32 unless options say otherwise.
Tensor tensor(std::initializer_list<double> values, TensorOptions options = {});
Tensor tensor(std::initializer_list<float> values, TensorOptions options = {});
Tensor tensor(std::initializer_list<int> values, TensorOptions options = {});
Tensor tensor(std::initializer_list<int64_t> values, TensorOptions options = {});
Tensor tensor(std::initializer_list<bool> values, TensorOptions options = {});
namespace detail {
// Rows of values laid out one after another, with each row's length (checked to be equal).
Tensor tensor_rows(const std::vector<double>& flat, const std::vector<size_t>& lengths, TensorOptions options);
Tensor tensor_rows(const std::vector<int64_t>& flat, const std::vector<size_t>& lengths, TensorOptions options);
}  // namespace detail
// Rows ({{1.0, 2.0}, {3.0, 4.0}}): one template, so that every compiler deduces the same element
// type (overloads for double rows and int rows are ambiguous under Clang). Floating values give
// float32, integers int64, unless options say otherwise.
template <typename T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows, TensorOptions options = {}) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "fg::tensor takes rows of numbers");
  using Stored = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  std::vector<Stored> flat;
  std::vector<size_t> lengths;
  for (const auto& row : rows) {
    lengths.push_back(row.size());
    for (const T& v : row) flat.push_back(static_cast<Stored>(v));
  }
  return detail::tensor_rows(flat, lengths, options);
}
Tensor tensor(const std::vector<double>& values, TensorOptions options = {});
Tensor tensor(const std::vector<float>& values, TensorOptions options = {});
Tensor tensor(const std::vector<int64_t>& values, TensorOptions options = {});
Tensor tensor(const std::vector<int>& values, TensorOptions options = {});
Tensor tensor(const std::vector<bool>& values, TensorOptions options = {});
Tensor scalar_tensor(const Scalar& value, TensorOptions options = {});

// ---------------------------------------------------------------- element-wise
// Binary ops broadcast as NumPy does and promote dtypes as torch.result_type.
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor mul(const Tensor& self, const Tensor& other);
Tensor mul(const Tensor& self, const Scalar& other);
Tensor div(const Tensor& self, const Tensor& other);
Tensor div(const Tensor& self, const Scalar& other);
Tensor pow(const Tensor& self, const Tensor& exponent);
Tensor pow(const Tensor& self, const Scalar& exponent);
Tensor pow(const Scalar& self, const Tensor& exponent);
Tensor maximum(const Tensor& self, const Tensor& other);
Tensor minimum(const Tensor& self, const Tensor& other);
Tensor& add_out(Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& div_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& pow_out(Tensor& out, const Tensor& self, const Tensor& exponent);
Tensor& pow_out(Tensor& out, const Tensor& self, const Scalar& exponent);
Tensor& maximum_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& minimum_out(Tensor& out, const Tensor& self, const Tensor& other);

#define FG_UNARY_FUNCTIONS(name) \
  Tensor name(const Tensor& self); \
  Tensor& name##_(Tensor& self);   \
  Tensor& name##_out(Tensor& out, const Tensor& self);
FG_UNARY_FUNCTIONS(neg)
FG_UNARY_FUNCTIONS(abs)
FG_UNARY_FUNCTIONS(exp)
FG_UNARY_FUNCTIONS(log)
FG_UNARY_FUNCTIONS(log1p)
FG_UNARY_FUNCTIONS(expm1)  // exp(x) - 1, accurate near 0, torch::expm1
FG_UNARY_FUNCTIONS(sqrt)
FG_UNARY_FUNCTIONS(rsqrt)
FG_UNARY_FUNCTIONS(sin)
FG_UNARY_FUNCTIONS(cos)
FG_UNARY_FUNCTIONS(tan)
FG_UNARY_FUNCTIONS(tanh)
FG_UNARY_FUNCTIONS(sigmoid)
FG_UNARY_FUNCTIONS(relu)
FG_UNARY_FUNCTIONS(erf)
FG_UNARY_FUNCTIONS(silu)         // x * sigmoid(x), torch::silu
FG_UNARY_FUNCTIONS(log_sigmoid)  // log(sigmoid(x)), torch::log_sigmoid
#undef FG_UNARY_FUNCTIONS
// torch.nn.functional.logsigmoid's name for log_sigmoid.
Tensor logsigmoid(const Tensor& self);

// torch.nn.functional's activations with parameters (float32 or float64 tensors).
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01);
Tensor elu(const Tensor& self, const Scalar& alpha = 1.0);
Tensor softplus(const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20);
Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
// x * Phi(x) ("none"), or its tanh approximation ("tanh"), as torch.nn.functional.gelu.
Tensor gelu(const Tensor& self, const std::string& approximate = "none");

Tensor clamp(const Tensor& self, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max = std::nullopt);
Tensor clamp_min(const Tensor& self, const Scalar& min);
Tensor clamp_max(const Tensor& self, const Scalar& max);
Tensor& clamp_(Tensor& self, const std::optional<Scalar>& min,
               const std::optional<Scalar>& max = std::nullopt);
Tensor& clamp_out(Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                  const std::optional<Scalar>& max = std::nullopt);

// condition ? self : other, element-wise with broadcasting over all three.
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other);
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other);
Tensor& where_out(Tensor& out, const Tensor& condition, const Tensor& self, const Tensor& other);

// Comparisons give bool tensors.
#define FG_COMPARE_FUNCTIONS(name)                          \
  Tensor name(const Tensor& self, const Tensor& other);     \
  Tensor name(const Tensor& self, const Scalar& other);     \
  Tensor& name##_out(Tensor& out, const Tensor& self, const Tensor& other);
FG_COMPARE_FUNCTIONS(gt)
FG_COMPARE_FUNCTIONS(lt)
FG_COMPARE_FUNCTIONS(ge)
FG_COMPARE_FUNCTIONS(le)
FG_COMPARE_FUNCTIONS(eq)
FG_COMPARE_FUNCTIONS(ne)
FG_COMPARE_FUNCTIONS(logical_and)  // bool: both nonzero (NaN counts as true, as in torch)
FG_COMPARE_FUNCTIONS(logical_or)
FG_COMPARE_FUNCTIONS(logical_xor)
#undef FG_COMPARE_FUNCTIONS
Tensor logical_not(const Tensor& self);  // bool: self == 0

// ---------------------------------------------------------------- reductions
// An empty `dim` reduces over every dimension.
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor amax(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
Tensor max(const Tensor& self);
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& self, const Tensor& other);  // = maximum
Tensor min(const Tensor& self);
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& self, const Tensor& other);  // = minimum
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim = false);
Tensor norm(const Tensor& self, const Scalar& p = 2);
Tensor norm(const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim = false);
Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor& sum_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim = false);
Tensor& mean_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim = false);

// Variance and standard deviation over `dim` (every dim when empty), with Bessel's correction
// when unbiased (torch's correction=1). The all-dims form takes a bool only: var(x, {1}) and
// var(x, 0) reduce dim 1 and dim 0 (a plain bool parameter would take both as `unbiased`).
Tensor var(const Tensor& self, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& self, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor var(const Tensor& self);
Tensor std(const Tensor& self);
template <typename Bool, typename = std::enable_if_t<std::is_same_v<Bool, bool>>>
Tensor var(const Tensor& self, Bool unbiased) {
  return var(self, IntArrayRef(), unbiased, false);
}
template <typename Bool, typename = std::enable_if_t<std::is_same_v<Bool, bool>>>
Tensor std(const Tensor& self, Bool unbiased) {
  return std(self, IntArrayRef(), unbiased, false);
}

// ---------------------------------------------------------------- linear algebra
Tensor matmul(const Tensor& self, const Tensor& other);  // all of torch.matmul's broadcasting
Tensor mm(const Tensor& self, const Tensor& mat2);
Tensor bmm(const Tensor& self, const Tensor& mat2);
Tensor mv(const Tensor& self, const Tensor& vec);
Tensor dot(const Tensor& self, const Tensor& other);
Tensor outer(const Tensor& self, const Tensor& vec2);
// x @ weight.T + bias, weight of shape [out_features, in_features].
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);
// Einstein summation, e.g. einsum("bij,bjk->bik", {a, b}); "..." broadcasts.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& tensors);
Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2);

// ---------------------------------------------------------------- shape
Tensor view(const Tensor& self, IntArrayRef size);
Tensor reshape(const Tensor& self, IntArrayRef shape);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& self);
Tensor permute(const Tensor& self, IntArrayRef dims);
// Moves dimension `source` to position `destination`, keeping the order of the others.
Tensor movedim(const Tensor& self, int64_t source, int64_t destination);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, int64_t dim);
Tensor expand(const Tensor& self, IntArrayRef size);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
Tensor slice(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor diag_embed(const Tensor& self, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
// self with src added at index along dim: out[index[i][j]][j] += src[i][j] for dim 0.
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& cat_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor& stack_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor& index_select_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);
Tensor& gather_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);
// The shape that broadcasting a and b gives; throws naming `op` when they do not broadcast.
std::vector<int64_t> infer_size(IntArrayRef a, IntArrayRef b, const char* op = "broadcast");
Tensor broadcast_to(const Tensor& self, IntArrayRef size);

// ---------------------------------------------------------------- convolutions
// The string form of a convolution's padding, "same" or "valid" (a type of its own, so that a
// literal 0 still means the integer padding rather than a null string).
class PaddingMode {
 public:
  template <size_t N>
  PaddingMode(const char (&mode)[N]) : mode_(mode) {}  // NOLINT(google-explicit-constructor)
  PaddingMode(std::string mode) : mode_(std::move(mode)) {}  // NOLINT(google-explicit-constructor)
  const std::string& str() const { return mode_; }

 private:
  std::string mode_;
};
// As torch.nn.functional's: input [N, C, L] or unbatched [C, L] (conv1d), [N, C, H, W] or
// [C, H, W] (conv2d); weight [out_channels, C / groups, k...]; bias [out_channels]. stride,
// padding and dilation are one integer for every spatial dim or one per dim.
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              const PaddingMode& padding, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              const PaddingMode& padding, IntArrayRef dilation = 1, int64_t groups = 1);
// The adjoints of conv1d/conv2d in their input (weight [in_channels, out_channels / groups, k...]),
// with torch's argument order (groups before dilation). output_padding must be below stride.
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);

// ---------------------------------------------------------------- pooling
// As torch.nn.functional's, over the last 1 or 2 dims of a [N, C, ...] or [C, ...] input; an
// empty stride means the kernel size. max pooling pads with -inf and propagates NaN.
Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
// Averages over windows [floor(i * in / out), ceil((i + 1) * in / out)) of each spatial dim.
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);

// ---------------------------------------------------------------- normalization
// As torch.nn.functional's. layer_norm normalizes over the last normalized_shape.size() dims, whose
// sizes must be normalized_shape; weight and bias have that shape.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
// input [N, C, *]: statistics per example over each of num_groups groups of C / num_groups
// channels; weight and bias [C].
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
// input [N, C, *], with at::batch_norm's argument order. In training (or without running statistics)
// the statistics are the batch's, per channel over N and *; the running statistics, when given, are
// updated in place (running = (1 - momentum) * running + momentum * batch, the variance unbiased).
// In evaluation they normalize.
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum = 0.1, double eps = 1e-5);

// ---------------------------------------------------------------- attention
// softmax(query @ key^T * scale + mask) @ value over [..., L, E] x [..., S, E] x [..., S, Ev]
// (leading dims broadcast). attn_mask: bool (true takes part) or float (added), broadcastable to
// [..., L, S]; is_causal masks key positions after the query's (top-left aligned, as torch);
// scale defaults to 1 / sqrt(E). A row with every position masked gives NaN, as torch.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = std::nullopt, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt);

// ---------------------------------------------------------------- embedding, masks, rearrangements
// weight[indices]: [*indices.sizes(), weight.size(1)]; the row padding_idx (unless -1) gets no
// gradient, as at::embedding.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1);
// int64 [*self.sizes(), num_classes] (num_classes -1: one more than self's largest value).
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);
// self with value where mask is true; self and mask broadcast.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
// The upper / lower triangle of the last two dims (k-th diagonal and above / below), zeros elsewhere.
Tensor triu(const Tensor& self, int64_t diagonal = 0);
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor flip(const Tensor& self, IntArrayRef dims);
// Rolls by shifts[i] along dims[i]; with dims empty, the flattened tensor by shifts[0].
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims = {});
// Tiles self repeats[i] times along each dim (more repeats than dims add leading dims).
Tensor repeat(const Tensor& self, IntArrayRef repeats);
// Pieces of split_size along dim (the last one smaller), or of the given sizes; chunks pieces of
// ceil(size / chunks).
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
// A tensor with self's values that AD treats as a constant (torch's detach).
Tensor detach(const Tensor& self);

// ---------------------------------------------------------------- losses
enum class Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// input: log-probabilities [N, C] (or [C]); target: class indices [N] (or []), int64.
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                Reduction reduction = Reduction::Mean, int64_t ignore_index = -100);
// log_softmax over dim 1 followed by nll_loss; targets are class indices.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                     Reduction reduction = Reduction::Mean, int64_t ignore_index = -100);
// -w [pos_weight * t * log sigmoid(x) + (1 - t) * log(1 - sigmoid(x))], computed stably; weight
// and pos_weight (per class, the last dim) broadcast.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = std::nullopt,
                                        const std::optional<Tensor>& pos_weight = std::nullopt,
                                        Reduction reduction = Reduction::Mean);
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target; beta 0 is the L1 loss).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0);
// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                  double delta = 1.0);

// ---------------------------------------------------------------- value-dependent shapes
Tensor nonzero(const Tensor& self);
bool is_nonzero(const Tensor& self);
Tensor masked_select(const Tensor& self, const Tensor& mask);
// The distinct values of self, flattened, in ascending order.
Tensor unique(const Tensor& self, bool sorted = true);

// ---------------------------------------------------------------- checks
bool allclose(const Tensor& self, const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
              bool equal_nan = false);
Tensor isclose(const Tensor& self, const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
               bool equal_nan = false);
bool equal(const Tensor& self, const Tensor& other);

// ---------------------------------------------------------------- operators
Tensor operator-(const Tensor& self);
#define FG_BINARY_OPERATOR(op, fn)                                                         \
  inline Tensor operator op(const Tensor& a, const Tensor& b) { return fn(a, b); }         \
  inline Tensor operator op(const Tensor& a, const Scalar& b) { return fn(a, b); }
FG_BINARY_OPERATOR(+, add)
FG_BINARY_OPERATOR(-, sub)
FG_BINARY_OPERATOR(*, mul)
FG_BINARY_OPERATOR(/, div)
FG_BINARY_OPERATOR(>, gt)
FG_BINARY_OPERATOR(<, lt)
FG_BINARY_OPERATOR(>=, ge)
FG_BINARY_OPERATOR(<=, le)
FG_BINARY_OPERATOR(==, eq)
FG_BINARY_OPERATOR(!=, ne)
#undef FG_BINARY_OPERATOR
inline Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
inline Tensor operator>(const Scalar& a, const Tensor& b) { return lt(b, a); }
inline Tensor operator<(const Scalar& a, const Tensor& b) { return gt(b, a); }
inline Tensor operator>=(const Scalar& a, const Tensor& b) { return le(b, a); }
inline Tensor operator<=(const Scalar& a, const Tensor& b) { return ge(b, a); }
inline Tensor operator==(const Scalar& a, const Tensor& b) { return eq(b, a); }
inline Tensor operator!=(const Scalar& a, const Tensor& b) { return ne(b, a); }

}  // namespace fg
