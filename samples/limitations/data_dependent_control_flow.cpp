// UX Limitations, "Data-dependent Python control flow": vmap cannot branch on the values of a
// batched tensor; control flow on shapes or unbatched values is fine.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("batched_relu = vmap(relu)")
fg::Tensor relu(const fg::Tensor& x) {
  if ((x > 0).item<bool>()) {
// CHECK: data_dependent_control_flow.cpp:[[@LINE-1]]:7: error: the condition of this 'if' depends on the values of batched tensor 'x'; under vmap each example could take a different branch [funcgen-data-dependent-control-flow]
// CHECK: data_dependent_control_flow.cpp:[[@LINE-4]]:10: note: select per example with fg::where(condition, a, b), or let funcgen do it: vmap(..., control_flow='select')
    return x;
  }
  return fg::zeros_like(x);
}

// Loops whose trip count depends on values are data-dependent too.
FUNCGEN("batched_halve = vmap(halve_until_small, in_dims=(0, None))")
fg::Tensor halve_until_small(const fg::Tensor& x, double limit) {
  fg::Tensor y = x;
  while (y.abs().amax().item<double>() > limit) {
// CHECK: data_dependent_control_flow.cpp:[[@LINE-1]]:10: error: the condition of this 'while' depends on the values of batched tensor 'y'; under vmap each example could take a different branch [funcgen-data-dependent-control-flow]
// CHECK: data_dependent_control_flow.cpp:[[@LINE-5]]:10: note: select per example with fg::where(condition, a, b), or let funcgen do it: vmap(..., control_flow='select')
    y = y / 2;
  }
  return y;
}
