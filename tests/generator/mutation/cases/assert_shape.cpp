// assert on shapes: each example's shape under vmap, as torch.func runs a Python assert per call.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <cassert>

FUNCGEN("vchecked = vmap(checked)")
FUNCGEN("gchecked = grad(checked)")
fg::Tensor checked(const fg::Tensor& x) {
  assert(x.dim() == 1 && x.size(0) == 3);
  return (x * x.sin()).sum();
}
