// A lambda that computes on tensors.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("vlam = vmap(lam)")
fg::Tensor lam(const fg::Tensor& x) {
  auto square = [](const fg::Tensor& t) { return t * t; };
//              ^
  return x + 1;
}
