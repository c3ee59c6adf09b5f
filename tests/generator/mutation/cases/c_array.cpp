// A C array of tensors, indexed: the braced std::vector it stands for.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("varray = vmap(array_sum)")
FUNCGEN("garray = grad(array_sum)")
fg::Tensor array_sum(const fg::Tensor& x) {
  fg::Tensor parts[2] = {x, x.sin()};
  return (parts[0] + parts[1] * parts[0]).sum();
}
