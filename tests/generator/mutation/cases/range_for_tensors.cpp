// A range-based for loop over a std::vector of tensors (an index loop under vmap).
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <vector>

FUNCGEN("vrange = vmap(range)")
fg::Tensor range(const fg::Tensor& x) {
  std::vector<fg::Tensor> parts = {x, x.sin()};
  fg::Tensor sum = x * 0;
  for (const fg::Tensor& p : parts) sum = sum + p;
  return sum;
}
