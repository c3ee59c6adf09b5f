// grad through ?: choosing between tensors on a scalar condition: not differentiated yet.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("gchoose_grad = grad(choose_grad)")
fg::Tensor choose_grad(const fg::Tensor& x) {
  const bool wide = x.size(0) > 2;
  return (wide ? x.sin() : x.cos()).sum();
//        ^
}
