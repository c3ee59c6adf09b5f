// A throw on a shape check: C++ text, run per call.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <stdexcept>

FUNCGEN("vstrict = vmap(strict)")
FUNCGEN("gstrict = grad(strict)")
fg::Tensor strict(const fg::Tensor& x) {
  if (x.dim() != 1) throw std::invalid_argument("strict takes vectors");
  return (x * x).sum();
}
