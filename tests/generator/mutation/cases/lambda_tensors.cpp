// A lambda that computes on tensors, defined in the body and called by its name: a helper.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vlam = vmap(lam)")
FUNCGEN("glam = grad(lam)")
fg::Tensor lam(const fg::Tensor& x) {
  auto square = [](const fg::Tensor& t) { return t * t; };
  return (square(x) + 1).sum();
}
