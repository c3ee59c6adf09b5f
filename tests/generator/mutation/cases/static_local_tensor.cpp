// A static local tensor (a constant made on the first call) next to batched values.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vcached = vmap(cached)")
FUNCGEN("gcached = grad(cached)")
fg::Tensor cached(const fg::Tensor& x) {
  static const fg::Tensor weights = fg::tensor({0.5, 1.0, 2.0}, fg::kDouble);
  return (x * weights).sin().sum();
}
