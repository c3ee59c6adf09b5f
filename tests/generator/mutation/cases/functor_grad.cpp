// grad through a functor's operator(): not seen through the object, so reported at the call.
// EXPECT: reject
#include <funcgen/funcgen.h>

struct Affine {
  double a, b;
  fg::Tensor operator()(const fg::Tensor& t) const { return t * a + b; }
};

FUNCGEN("gaffine = grad(affine)")
fg::Tensor affine(const fg::Tensor& x) {
  Affine f{2.0, 1.0};
  return f(x).sum();
//       ^
}
