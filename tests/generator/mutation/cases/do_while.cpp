// do/while with a scalar counter around tensor code.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vrepeat = vmap(repeat)")
FUNCGEN("grepeat = grad(repeat)")
fg::Tensor repeat(const fg::Tensor& x) {
  fg::Tensor y = x;
  int n = 0;
  do {
    y = (y * 0.5).sin() + x;
    ++n;
  } while (n < 3);
  return y.sum();
}
