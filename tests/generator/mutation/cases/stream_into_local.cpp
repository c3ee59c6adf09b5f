// A tensor written into a local std::ostringstream: a side effect on a local only.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <sstream>

FUNCGEN("vformat = vmap(format)")
fg::Tensor format(const fg::Tensor& x) {
  std::ostringstream os;
  os << x.sin();
  return x.exp() * 2;
}
