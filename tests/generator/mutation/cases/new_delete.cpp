// A tensor made with new.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("vheap = vmap(heap)")
fg::Tensor heap(const fg::Tensor& x) {
  const fg::Tensor* p = new fg::Tensor(x * 2);
//                      ^
  const int n = 3;
  return x * n;
}
