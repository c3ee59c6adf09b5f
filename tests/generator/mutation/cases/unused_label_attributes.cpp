// A label no goto names, and statement attributes ([[likely]]).
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vlabelled = vmap(labelled)")
FUNCGEN("glabelled = grad(labelled)")
fg::Tensor labelled(const fg::Tensor& x) {
  fg::Tensor y = x * 3;
  if (x.dim() == 1) [[likely]] {
    y = y.sin();
  }
finish:
  return y.sum();
}
