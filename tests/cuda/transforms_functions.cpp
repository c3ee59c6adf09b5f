// The per-sample-gradients tutorial's shape of model, and a classifier, under grad, vmap(grad),
// jacrev and jvp: the generated code must run on the device its inputs are on.
#include "transforms_functions.h"

namespace cudatest {

FUNCGEN("mlp_loss_grad = grad(mlp_loss, argnums=(0, 1))")
FUNCGEN("mlp_per_sample_grads = vmap(grad(mlp_loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))")
fg::Tensor mlp_loss(const fg::Tensor& w, const fg::Tensor& b, const fg::Tensor& x, const fg::Tensor& y) {
  const fg::Tensor h = fg::linear(x, w, b).tanh();
  const fg::Tensor d = h - y;
  return (d * d).mean();
}

FUNCGEN("classifier_jacobian = jacrev(classifier, argnums=1)")
FUNCGEN("classifier_jvp = jvp(classifier)")
fg::Tensor classifier(const fg::Tensor& x, const fg::Tensor& w) {
  const fg::Tensor logits = x.mm(w);
  return (logits.log_softmax(1) * logits.softmax(-1)).sum(1);
}

// The per-sample-gradients tutorial as written: one example made a batch of one, cross_entropy.
FUNCGEN("classifier_per_sample_grads = vmap(grad(classifier_loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))")
fg::Tensor classifier_loss(const fg::Tensor& w, const fg::Tensor& b, const fg::Tensor& sample,
                           const fg::Tensor& target) {
  const fg::Tensor logits = fg::relu(fg::linear(sample.unsqueeze(0), w, b));
  return fg::cross_entropy(logits, target.unsqueeze(0));
}

// The per-sample-gradients tutorial's convolutional model: conv2d, relu, flatten, linear, nll_loss.
FUNCGEN("cnn_per_sample_grads = vmap(grad(cnn_loss, argnums=(0, 1)), in_dims=(None, None, None, 0, 0))")
fg::Tensor cnn_loss(const fg::Tensor& conv_w, const fg::Tensor& conv_b, const fg::Tensor& fc_w, const fg::Tensor& image,
                    const fg::Tensor& target) {
  const fg::Tensor h = fg::relu(fg::conv2d(image.unsqueeze(0), conv_w, conv_b, {1}, {1}));
  const fg::Tensor logits = fg::linear(h.flatten(1), fc_w);
  return fg::nll_loss(logits.log_softmax(1), target.unsqueeze(0));
}

// A pre-norm causal self-attention block with an embedding lookup.
FUNCGEN("attention_block_grad = grad(attention_block, argnums=(0, 1, 2))")
fg::Tensor attention_block(const fg::Tensor& table, const fg::Tensor& wq, const fg::Tensor& gamma,
                           const fg::Tensor& ids) {
  const fg::Tensor x = fg::embedding(table, ids, 0);
  const fg::Tensor h = fg::layer_norm(x, {x.size(-1)}, gamma);
  const fg::Tensor a = fg::scaled_dot_product_attention(h.matmul(wq), h, h, std::nullopt, 0.0, true);
  return fg::gelu(a + x).pow(2).mean();
}

}  // namespace cudatest
