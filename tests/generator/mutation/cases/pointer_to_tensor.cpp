// A pointer to a tensor.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("vpointed = vmap(pointed)")
fg::Tensor pointed(const fg::Tensor& x) {
  const fg::Tensor* p = &x;
//^
  return *p * 2;
}
