// A helper's pointer parameter tested for null: funcgen takes it as the tensor its caller passes.
// EXPECT: reject
#include <funcgen/funcgen.h>

void maybe_scale(fg::Tensor* p, double s) {
  if (p != nullptr) *p = *p * s;
//    ^
}

FUNCGEN("gscaled = grad(scaled)")
fg::Tensor scaled(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  maybe_scale(&y, 3.0);
  return y.sum();
}
