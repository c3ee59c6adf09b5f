// The comma operator in a loop's step and in an initializer.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vcomma = vmap(comma)")
FUNCGEN("gcomma = grad(comma)")
fg::Tensor comma(const fg::Tensor& x) {
  fg::Tensor y = x;
  int i, j;
  for (i = 0, j = 3; i < j; ++i, --j) y = y * x + 1;
  const int k = (i++, i + j);
  return (y * k).sum();
}
