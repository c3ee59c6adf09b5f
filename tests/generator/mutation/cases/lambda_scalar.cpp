// A lambda on scalars only, called with a tensor's size: C++ text as written.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vlam_scalar = vmap(lam_scalar)")
FUNCGEN("glam_scalar = grad(lam_scalar)")
fg::Tensor lam_scalar(const fg::Tensor& x) {
  auto half = [](double v) { return v / 2; };
  return (x * half(static_cast<double>(x.size(0)))).sum();
}
