#include <funcgen/funcgen.h>

#include <tuple>

FUNCGEN("both = vmap(pair, out_dims=(0, 1))")
FUNCGEN("jr = jacrev(pair)")
std::tuple<fg::Tensor, fg::Tensor> pair(const fg::Tensor& x) {
  auto s = x.sin();
  return {s * x, x.cos().unsqueeze(0)};
}
