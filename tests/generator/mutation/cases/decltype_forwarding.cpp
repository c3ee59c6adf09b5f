// decltype, auto&& and a default-constructed tensor assigned later.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vdeclared = vmap(declared)")
FUNCGEN("gdeclared = grad(declared)")
fg::Tensor declared(const fg::Tensor& x) {
  decltype(x * 2) y = x * 2;
  auto&& z = y.sin();
  fg::Tensor w;
  w = z + x;
  return (w * y).sum();
}
