// std::tuple, std::tie-free structured bindings and std::get of a helper's results.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <tuple>

std::tuple<fg::Tensor, fg::Tensor> split_parts(const fg::Tensor& x) { return {x.sin(), x.cos()}; }

FUNCGEN("vbound = vmap(bound)")
FUNCGEN("gbound = grad(bound)")
fg::Tensor bound(const fg::Tensor& x) {
  auto [s, c] = split_parts(x);
  const auto both = split_parts(x * 2);
  return (s * c + std::get<1>(both)).sum();
}
