// A call through a function pointer.
// EXPECT: reject
#include <funcgen/funcgen.h>

fg::Tensor twice(const fg::Tensor& t) { return t * 2; }

FUNCGEN("gpointer = grad(pointer)")
fg::Tensor pointer(const fg::Tensor& x) {
  fg::Tensor (*fp)(const fg::Tensor&) = twice;
  return fp(x).sum();
//       ^
}
