// grad of a function that keeps tensors in a std::vector built with braces (a list).
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <vector>

FUNCGEN("gparts = grad(parts_sum)")
fg::Tensor parts_sum(const fg::Tensor& x) {
  std::vector<fg::Tensor> parts = {x.sin(), x * x};
  return (parts[0] * parts[1]).sum();
}
