#include <funcgen/funcgen.h>

FUNCGEN("psg = vmap(grad(loss), in_dims=(None, 0, 0))")
FUNCGEN("hvp = jvp(grad(loss))")
fg::Tensor loss(const fg::Tensor& w, const fg::Tensor& x, const fg::Tensor& y) {
  fg::Tensor h = fg::relu(fg::matmul(x, w));
  return fg::mse_loss(h.sum(-1), y);
}
