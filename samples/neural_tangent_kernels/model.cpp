// The model and what funcgen generates from it: the jacobians of the outputs w.r.t. the parameters
// for each example (jacobians), the vjps J(x1)^T e_b for each example and output (vjps), and the
// jvps J(x2) t for each example and tangent (jvps): the tutorial's vmap(vmap(jvp(vjp_fn))).
#include "model.h"

namespace ntk {

FUNCGEN("jacobians = vmap(jacrev(forward), in_dims=(None, 0))")
FUNCGEN("jvps = vmap(vmap(jvp(forward), in_dims=(None, None, 0, None)), in_dims=(None, 0, None, None))")
fg::Tensor CNN::forward(const fg::Tensor& x) const {
  fg::Tensor h = conv1.forward(x.unsqueeze(0)).relu();
  h = conv2.forward(h).relu();
  h = conv3.forward(h);
  h = h.flatten(1);
  return fc.forward(h).squeeze(0);
}

FUNCGEN("vjps = vmap(vmap(grad(project), in_dims=(None, None, 0)), in_dims=(None, 0, None))")
fg::Tensor CNN::project(const fg::Tensor& x, const fg::Tensor& v) const { return (forward(x) * v).sum(); }

}  // namespace ntk
