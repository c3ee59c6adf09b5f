// A `template <typename T>` helper with a scalar of type T.
// EXPECT: accept
#include <funcgen/funcgen.h>

template <typename T>
fg::Tensor shifted(const fg::Tensor& x, T by) {
  const T twice = by * 2;
  return x + twice;
}

FUNCGEN("vshift = vmap(shift)")
FUNCGEN("gshift = grad(shift)")
fg::Tensor shift(const fg::Tensor& x) { return (shifted<double>(x, 0.5) * shifted(x, 1)).sum(); }
