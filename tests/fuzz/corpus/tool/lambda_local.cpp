#include <funcgen/funcgen.h>

FUNCGEN("gl = grad(f)")
FUNCGEN("vl = vmap(f, in_dims=1)")
fg::Tensor f(const fg::Tensor& x) {
  auto square = [](const fg::Tensor& t) { return t * t; };
  const fg::Tensor _ = square(x);
  double scale = 0.5;
  scale *= 3;
  return (_ * scale + x.abs()).sum();
}
