// Support for the derivative code funcgen generates: the parts of derivative rules that depend on
// run-time shapes (undoing broadcasting, reductions, matmul's 1-D cases). Written in fg ops, so
// that they can be differentiated again.
#pragma once

#include "funcgen/runtime/ops.h"
#include "funcgen/runtime/tensor.h"

namespace fg::ad {

// grad differentiates functions with one output element: throws naming `fn` otherwise.
void check_scalar_output(const Tensor& output, const char* fn);

// Sums `grad` down to `sizes`, undoing broadcasting: extra leading dims are summed away and dims
// that are 1 in `sizes` are summed with keepdim.
Tensor sum_to(const Tensor& grad, IntArrayRef sizes);

// The gradient of sum(self, dim, keepdim) / mean(self, dim, keepdim) with respect to self: grad
// broadcast back to self's shape (an empty dim means every dim).
Tensor sum_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef dim, bool keepdim);
Tensor mean_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef dim, bool keepdim);

// torch.matmul's gradients, with its 1-D and broadcasting cases.
Tensor matmul_backward_self(const Tensor& grad, const Tensor& self, const Tensor& other);
Tensor matmul_backward_other(const Tensor& grad, const Tensor& self, const Tensor& other);

// linear(input, weight, bias) = input @ weight.T + bias: the weight's gradient, summed over the
// input's leading dims.
Tensor linear_backward_weight(const Tensor& grad, const Tensor& input, const Tensor& weight);

Tensor softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim);
Tensor log_softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim);
Tensor mse_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, Reduction reduction);

}  // namespace fg::ad
