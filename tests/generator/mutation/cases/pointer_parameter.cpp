// A helper's pointer parameters, passed the address of a local (&y) and a pointer to one: the
// helper writes the local through *p and reads a const pointer through p->.
// EXPECT: accept
#include <funcgen/funcgen.h>

void scale(fg::Tensor* p, double s) { *p = *p * s; }
fg::Tensor shifted(const fg::Tensor* p) { return p->sin() + *p; }

FUNCGEN("vscaled = vmap(scaled)")
FUNCGEN("gscaled = grad(scaled)")
fg::Tensor scaled(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  scale(&y, 3.0);
  fg::Tensor* q = &y;
  scale(q, 0.5);
  return (shifted(&y) * x).sum();
}
