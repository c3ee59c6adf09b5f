#include <funcgen/funcgen.h>

FUNCGEN("g = grad(f, argnums=1)")
FUNCGEN("j = jacfwd(f, argnums=1)")
fg::Tensor f(int n, const fg::Tensor& x) {
  fg::Tensor acc = x;
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0) acc = acc.sin() * x;
    else acc = acc + 1.0;
  }
  return acc.sum();
}
