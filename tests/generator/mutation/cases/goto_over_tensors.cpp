// goto over tensor statements.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("vskip = vmap(skip)")
fg::Tensor skip(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  if (x.dim() == 1) goto done;
//                  ^
  y = y * 2;
done:
  return y;
}
