// push_back into a std::vector of tensors of different shapes, read back (a list).
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <vector>

FUNCGEN("vgrown = vmap(grown)")
fg::Tensor grown(const fg::Tensor& x) {
  std::vector<fg::Tensor> parts = {x};
  parts.push_back(x.sin().sum(0, true));
  return parts[0] * parts[1];
}
