// A name declared again in an inner block, shadowing the outer one.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vshadowed = vmap(shadowed)")
FUNCGEN("gshadowed = grad(shadowed)")
fg::Tensor shadowed(const fg::Tensor& x) {
  fg::Tensor y = x * 2;
  {
    fg::Tensor y2 = y.sin();
    const double x_scale = 3;
    y = y2 * x_scale;
  }
  for (int i = 0; i < 2; ++i) {
    const int k = i + 1;
    y = y + x * k;
  }
  return y.sum();
}
