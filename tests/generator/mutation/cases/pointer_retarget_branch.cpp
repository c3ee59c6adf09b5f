// A helper that points its caller's pointer at another tensor in one branch: what *p names after
// the if depends on the run.
// EXPECT: reject
#include <funcgen/funcgen.h>

void retarget(const fg::Tensor*& p, const fg::Tensor& q) { p = &q; }

FUNCGEN("gretargeted = grad(retargeted)")
fg::Tensor retargeted(const fg::Tensor& x, bool second) {
  fg::Tensor y = x.sin();
  const fg::Tensor* p = &x;
  if (second) retarget(p, y);
//                     ^
  return (*p * x).sum();
}
