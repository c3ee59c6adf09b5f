// push_back into a std::vector of tensors.
// EXPECT: reject
#include <funcgen/funcgen.h>
#include <vector>

FUNCGEN("vgrown = vmap(grown)")
fg::Tensor grown(const fg::Tensor& x) {
  std::vector<fg::Tensor> parts = {x};
  parts.push_back(x.sin());
//^
  return parts[0];
}
