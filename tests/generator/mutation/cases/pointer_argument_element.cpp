// The address of an element of a vector passed to a helper's pointer parameter.
// EXPECT: reject
#include <funcgen/funcgen.h>
#include <vector>

void scale(fg::Tensor* p, double s) { *p = *p * s; }

FUNCGEN("gscaled = grad(scaled)")
fg::Tensor scaled(const fg::Tensor& x) {
  std::vector<fg::Tensor> v{x, x.sin()};
  scale(&v[1], 3.0);
//      ^
  return (v[0] * v[1]).sum();
}
