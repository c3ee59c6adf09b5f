// A user-defined operator* of a struct of scalars and a tensor, defined in this file: a helper,
// transformed with its caller.
// EXPECT: accept
#include <funcgen/funcgen.h>

struct Affine {
  double a, b;
};
fg::Tensor operator*(const Affine& f, const fg::Tensor& x) { return x * f.a + f.b; }

FUNCGEN("vapplied = vmap(applied)")
FUNCGEN("gapplied = grad(applied)")
fg::Tensor applied(const fg::Tensor& x) {
  const Affine f{2.0, 0.5};
  return (f * x.sin()).exp().sum();
}
