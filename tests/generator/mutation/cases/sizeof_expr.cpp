// sizeof of a tensor and of a type: not evaluated, the same in every example.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vsized = vmap(sized)")
FUNCGEN("gsized = grad(sized)")
fg::Tensor sized(const fg::Tensor& x) {
  const double ratio = static_cast<double>(sizeof(x)) / static_cast<double>(sizeof(fg::Tensor));
  return (x * ratio * static_cast<double>(sizeof(double))).sum();
}
