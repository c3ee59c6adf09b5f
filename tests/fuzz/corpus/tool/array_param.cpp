#include <funcgen/funcgen.h>

#include <array>

FUNCGEN("ga = grad(total)")
FUNCGEN("va = vmap(total)")
fg::Tensor total(const std::array<fg::Tensor, 3>& xs) {
  fg::Tensor s = xs[0] + xs[1] * xs[2];
  return s.sum();
}
