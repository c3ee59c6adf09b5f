// A pointer to a tensor, read: another name for the tensor it points at.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vpointed = vmap(pointed)")
FUNCGEN("gpointed = grad(pointed)")
fg::Tensor pointed(const fg::Tensor& x) {
  const fg::Tensor* p = &x;
  return (*p * 2 * p->sin()).sum();
}
