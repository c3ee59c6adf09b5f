// while (true) with break and continue on scalars.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vloop = vmap(loop)")
fg::Tensor loop(const fg::Tensor& x) {
  fg::Tensor y = x;
  int i = 0;
  while (true) {
    ++i;
    if (i == 2) continue;
    if (i > 4) break;
    y = y * x.cos();
  }
  return y.sum();
}
