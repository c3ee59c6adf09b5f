// torch.func's "Patching Batch Norm" page: in training, batch_norm updates its running statistics
// in place; under vmap the input is batched and they are not, so they cannot hold one update per
// example (torch.func raises). The fix (fixed.cpp): no running statistics.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("batched_norm = vmap(norm, in_dims=(0, None, None))")
fg::Tensor norm(const fg::Tensor& x, const fg::Tensor& running_mean, const fg::Tensor& running_var) {
  return fg::batch_norm(x, {}, {}, running_mean, running_var, true);
// CHECK: batch_norm.cpp:[[@LINE-1]]:10: error: 'batch_norm' updates 'running_mean' in place with batched values, but 'running_mean' is not batched; under vmap it cannot hold one result per example (torch.func raises here too): pass {} for it (torch.func's replace_all_batch_norm_modules_ does so for batch_norm), or call it with training=false [funcgen-inplace-batched]
}
