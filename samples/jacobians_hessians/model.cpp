// The tutorial's function and the transforms it computes.
#include "model.h"

namespace model {

FUNCGEN("jacobian_rev = jacrev(predict, argnums=2)")
FUNCGEN("jacobian_fwd = jacfwd(predict, argnums=2)")
FUNCGEN("batch_jacobian_rev = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))")
FUNCGEN("batch_jacobian_fwd = vmap(jacfwd(predict, argnums=2), in_dims=(None, None, 0))")
FUNCGEN("hessian_x = hessian(predict, argnums=2)")
fg::Tensor predict(const fg::Tensor& weight, const fg::Tensor& bias, const fg::Tensor& x) {
  return fg::linear(x, weight, bias).tanh();
}

// A Hessian-vector product, forward over reverse, without forming the hessian.
FUNCGEN("hvp = jvp(grad(energy))")
fg::Tensor energy(const fg::Tensor& x) { return (x.sin() * x * x).sum(); }

}  // namespace model
