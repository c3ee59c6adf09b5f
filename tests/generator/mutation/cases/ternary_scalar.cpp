// ?: on a scalar condition, choosing between tensors.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vchoose = vmap(choose)")
fg::Tensor choose(const fg::Tensor& x) {
  const bool wide = x.size(0) > 2;
  return (wide ? x.sin() : x.cos()).sum() + (x.dim() == 1 ? 1.0 : 2.0);
}
