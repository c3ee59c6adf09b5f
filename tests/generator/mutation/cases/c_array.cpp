// A C array of tensors, indexed.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("varray = vmap(array_sum)")
fg::Tensor array_sum(const fg::Tensor& x) {
  fg::Tensor parts[2] = {x, x.sin()};
//^
  return parts[0] + parts[1];
}
