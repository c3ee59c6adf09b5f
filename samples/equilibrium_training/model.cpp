#include "model.h"

#include <vector>

#include "solver.h"

namespace deq {

Params init(int64_t features, int64_t hidden, int64_t classes, fg::ScalarType dtype) {
  const fg::TensorOptions o = fg::TensorOptions().dtype(dtype);
  return {fg::randn({hidden, features}, o) * 0.5, fg::zeros({hidden}, o), fg::randn({hidden, hidden}, o) * 0.1,
          fg::randn({classes, 3 * hidden}, o) * 0.3, fg::zeros({classes}, o)};
}

// The representation after each stage: a helper that returns the vector it fills, as a recurrent
// net returns its states (funcgen follows the vector into its caller under every transform).
std::vector<fg::Tensor> stage_states(const Params& p, const fg::Tensor& x) {
  std::vector<fg::Tensor> stages;
  stages.push_back((fg::matmul(p.w_in, x) + p.b_in).tanh());
  for (int stage = 0; stage < 2; ++stage) {
    const fg::Tensor input = stages.back();
    auto layer = [&](const fg::Tensor& z) { return (fg::matmul(p.w_z, z) + input).tanh(); };
    stages.push_back(fixed_point(layer, input, 10));
  }
  return stages;
}

fg::Tensor forward(const Params& p, const fg::Tensor& x) {
  const std::vector<fg::Tensor> stages = stage_states(p, x);
  return fg::matmul(p.w_out, fg::cat(stages)) + p.b_out;
}

// The gradient w.r.t. the parameters comes back as a Params; the per-sample gradients as a Params
// whose tensors have the batch dim in front (torch.func's pytree of the parameters).
FUNCGEN("loss_grad = grad(loss)")
FUNCGEN("per_sample_grads = vmap(grad(loss), in_dims=(None, 0, 0))")
fg::Tensor loss(const Params& p, const fg::Tensor& x, const fg::Tensor& target) {
  const fg::Tensor logp = forward(p, x).log_softmax(-1);
  return -logp.gather(0, target.reshape({1})).sum();
}

FUNCGEN("batch_loss_grad = grad(batch_loss)")
fg::Tensor batch_loss(const Params& p, const fg::Tensor& xs, const fg::Tensor& targets) {
  fg::Tensor total = fg::zeros({}, xs.options());
  for (int64_t i = 0; i < xs.size(0); ++i) total = total + loss(p, xs[i], targets[i]);
  return total / static_cast<double>(xs.size(0));
}

}  // namespace deq
