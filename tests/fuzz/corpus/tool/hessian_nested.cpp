#include <funcgen/funcgen.h>

FUNCGEN("h = hessian(energy)")
FUNCGEN("vh = vmap(hessian(energy))")
FUNCGEN("third = jacfwd(jacrev(jacrev(energy)))")
fg::Tensor energy(const fg::Tensor& x) {
  const auto r = (x * x).sum();
  return fg::exp(-r) + fg::log1p(r);
}
