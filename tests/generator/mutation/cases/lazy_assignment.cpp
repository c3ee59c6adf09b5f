// Assignments of tensors on the lazy side of && and ?:, and before a comma in a loop's condition:
// each runs where C++ evaluates it.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vlazy = vmap(lazy)")
FUNCGEN("glazy = grad(lazy)")
fg::Tensor lazy(const fg::Tensor& x) {
  fg::Tensor y = x;
  const bool a = x.size(0) > 2;
  bool b = a && ((y = y * 2), true);
  fg::Tensor z = b ? (y = y.sin()) : (y = y * 3);
  fg::Tensor r = x;
  int k = 0;
  while ((r = r * 0.5), ++k < 4) {}
  return (y + z).sum() + (r * x).sum();
}
