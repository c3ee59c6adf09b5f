#include "model.h"

namespace ensemble {

// Every model of the ensemble on the same minibatch: the weights are stacked along dim 0, the
// data is shared (in_dims None).
FUNCGEN("predict_same_minibatch = vmap(predict, in_dims=(0, 0, 0, 0, None))")
// Each model on its own minibatch.
FUNCGEN("predict_own_minibatch = vmap(predict)")
fg::Tensor predict(const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2, const fg::Tensor& b2,
                   const fg::Tensor& x) {
  const fg::Tensor hidden = fg::relu(fg::linear(x, w1, b1));
  return fg::linear(hidden, w2, b2);
}

}  // namespace ensemble
