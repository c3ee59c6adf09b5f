// A helper that points its caller's pointer at another tensor variable (a reference to a pointer),
// called in the block that declares the pointer: before the call *p is x, after it y.
// EXPECT: accept
#include <funcgen/funcgen.h>

void retarget(const fg::Tensor*& p, const fg::Tensor& q) { p = &q; }

FUNCGEN("vretargeted = vmap(retargeted)")
FUNCGEN("gretargeted = grad(retargeted)")
fg::Tensor retargeted(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  const fg::Tensor* p = &x;
  const fg::Tensor before = *p * 2;
  retarget(p, y);
  return (*p * x + before).sum();
}
