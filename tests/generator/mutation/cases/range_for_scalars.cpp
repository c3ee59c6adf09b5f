// A range-based for loop over numbers whose body computes on tensors (unrolled).
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("gweighted = grad(weighted)")
fg::Tensor weighted(const fg::Tensor& x) {
  fg::Tensor y = x * 0;
  for (double w : {0.5, 1.0, 2.0}) y = y + x * w;
  return y.sum();
}
