// grad through a loop that leaves a trip with continue: not differentiated yet.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("gskipping = grad(skipping)")
fg::Tensor skipping(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int i = 0; i < 4; ++i) {
    if (i == 2) continue;
//              ^
    y = y * x.cos();
  }
  return y.sum();
}
