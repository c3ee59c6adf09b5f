// grad through a functor's operator() on an object of only numbers: a helper whose object's
// fields are constants (not differentiated).
// EXPECT: accept
#include <funcgen/funcgen.h>

struct Affine {
  double a, b;
  fg::Tensor operator()(const fg::Tensor& t) const { return t * a + b; }
};

FUNCGEN("gaffine = grad(affine)")
FUNCGEN("vaffine = vmap(affine)")
fg::Tensor affine(const fg::Tensor& x) {
  Affine f{2.0, 1.0};
  return f(x).sum();
}
