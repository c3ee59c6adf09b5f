// printf of a tensor's sizes.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <cstdio>

FUNCGEN("vprinted = vmap(printed)")
FUNCGEN("gprinted = grad(printed)")
fg::Tensor printed(const fg::Tensor& x) {
  std::printf("rows: %d\n", static_cast<int>(x.size(0)));
  return x.tanh().sum();
}
