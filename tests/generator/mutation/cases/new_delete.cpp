// A tensor made with new and deleted.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("vheap = vmap(heap)")
fg::Tensor heap(const fg::Tensor& x) {
  delete new fg::Tensor(x * 2);
//^
  return x * 3;
}
