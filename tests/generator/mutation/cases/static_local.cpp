// A static local scalar (a constant kept between calls) read by tensor code.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vstatic_scale = vmap(static_scale)")
FUNCGEN("gstatic_scale = grad(static_scale)")
fg::Tensor static_scale(const fg::Tensor& x) {
  static const double scale = 1.5;
  return (x * scale).exp().sum();
}
