// A C array of tensors whose element is assigned: the std::vector it stands for, the element set.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("garray_written = grad(array_written)")
fg::Tensor array_written(const fg::Tensor& x) {
  fg::Tensor parts[2] = {x, x.sin()};
  parts[1] = parts[0] * 2;
  return (parts[0] + parts[1]).sum();
}
