// switch on a size, with fallthrough into default.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vswitched = vmap(switched)")
FUNCGEN("gswitched = grad(switched)")
fg::Tensor switched(const fg::Tensor& x) {
  fg::Tensor y = x;
  switch (x.size(0)) {
    case 2:
      y = y * 2;
      break;
    case 3:
      y = y.exp();
      break;
    default:
      y = y - 1;
  }
  return y.sum();
}
