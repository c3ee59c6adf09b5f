#include <funcgen/funcgen.h>

#include <vector>

FUNCGEN("lin = linearize(f)")
FUNCGEN("v = vmap(f, in_dims=(0, None))")
fg::Tensor f(const fg::Tensor& x, int k) {
  std::vector<fg::Tensor> parts;
  for (int i = 0; i < k; ++i) parts.push_back(x * static_cast<double>(i + 1));
  return fg::stack(parts).sum(0);
}
