// std::tie(a, b) = f(x) assigns both locals (it once printed an assignment to a temporary tuple).
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <tuple>

static std::tuple<fg::Tensor, fg::Tensor> parts(const fg::Tensor& x) { return std::make_tuple(x.sin(), x * 2); }

FUNCGEN("vtied = vmap(tied)")
FUNCGEN("gtied = grad(tied)")
fg::Tensor tied(const fg::Tensor& x) {
  fg::Tensor a, b;
  std::tie(a, b) = parts(x);
  return (a * b).sum();
}
