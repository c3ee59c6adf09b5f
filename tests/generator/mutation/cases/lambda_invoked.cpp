// A lambda called where it is written, on tensors.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("vinvoked = vmap(invoked)")
fg::Tensor invoked(const fg::Tensor& x) {
  fg::Tensor y = [&] { return x * 2; }();
//               ^
  return y;
}
