// grad through a loop that leaves a trip with continue (a flag skips the rest of the trip).
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("gskipping = grad(skipping)")
fg::Tensor skipping(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int i = 0; i < 4; ++i) {
    if (i == 2) continue;
    y = y * x.cos();
  }
  return y.sum();
}
