// Compound assignment on scalars and on tensors.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vcompound = vmap(compound)")
FUNCGEN("gcompound = grad(compound)")
fg::Tensor compound(const fg::Tensor& x) {
  double s = 1;
  s *= 2;
  s += static_cast<double>(x.size(0));
  s /= 4;
  int n = 7;
  n %= 4;
  n <<= 1;
  fg::Tensor y = x * s;
  y += x.sin();
  y *= static_cast<double>(n);
  return y.sum();
}
