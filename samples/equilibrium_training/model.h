// The model: an input projection, two equilibrium stages z = tanh(W z + input), each solved by
// fixed-point iteration from the stage before, and a head that reads every stage concatenated
// (a jumping-knowledge head).
#pragma once

#include <funcgen/funcgen.h>

namespace deq {

struct Params {
  fg::Tensor w_in, b_in;    // [hidden, features], [hidden]
  fg::Tensor w_z;           // [hidden, hidden]
  fg::Tensor w_out, b_out;  // [classes, 3 * hidden], [classes]
};

Params init(int64_t features, int64_t hidden, int64_t classes, fg::ScalarType dtype);

// Logits of one example x [features].
fg::Tensor forward(const Params& p, const fg::Tensor& x);
// Cross-entropy of one example against its class (a 0-dim int64 tensor).
fg::Tensor loss(const Params& p, const fg::Tensor& x, const fg::Tensor& target);
// The mean loss over a batch, one example at a time.
fg::Tensor batch_loss(const Params& p, const fg::Tensor& xs, const fg::Tensor& targets);

}  // namespace deq
