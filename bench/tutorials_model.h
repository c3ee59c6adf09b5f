// The torch.func tutorials' workloads as a user writes them against fg, for bench_tutorials.
// bench/tutorials_ref.py writes the same functions in torch.func and JAX.
#pragma once

#include <funcgen/funcgen.h>

namespace tutorials {

// Per-sample gradients (torch.func's per-sample-grads tutorial, with its MLP's shapes 784-128-10).
struct Mlp {
  fg::Tensor w1, b1, w2, b2;
};
fg::Tensor mlp_loss(const Mlp& p, const fg::Tensor& x, const fg::Tensor& target);

// Jacobians, hessians (the jacobians-hessians tutorial): tanh(linear(x)).
fg::Tensor predict(const fg::Tensor& weight, const fg::Tensor& bias, const fg::Tensor& x);
fg::Tensor predict_sum(const fg::Tensor& weight, const fg::Tensor& bias, const fg::Tensor& x);

// Model ensembling: an MLP 784-128-128-10, its parameters stacked over the models.
struct Mlp3 {
  fg::Tensor w1, b1, w2, b2, w3, b3;
};
fg::Tensor mlp3(const Mlp3& p, const fg::Tensor& x);

// A hessian-vector product, forward over reverse (jvp(grad(f))).
fg::Tensor sin_cos(const fg::Tensor& x);

}  // namespace tutorials
