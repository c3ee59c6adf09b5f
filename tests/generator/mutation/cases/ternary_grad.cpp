// grad through ?: choosing between tensors on a scalar condition: an if/else assigning one.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("gchoose_grad = grad(choose_grad)")
fg::Tensor choose_grad(const fg::Tensor& x) {
  const bool wide = x.size(0) > 2;
  return (wide ? x.sin() : x.cos()).sum();
}
