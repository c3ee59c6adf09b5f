// A helper that points its caller's pointer at another tensor (a reference to a pointer).
// EXPECT: reject
#include <funcgen/funcgen.h>

void retarget(const fg::Tensor*& p, const fg::Tensor& q) { p = &q; }

FUNCGEN("gretargeted = grad(retargeted)")
fg::Tensor retargeted(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  const fg::Tensor* p = &x;
  retarget(p, y);
//         ^
  return (*p * x).sum();
}
