// grad through a std::function: its target is not seen, so reported at the call.
// EXPECT: reject
#include <funcgen/funcgen.h>
#include <functional>

fg::Tensor cube(const fg::Tensor& t) { return t * t * t; }

FUNCGEN("gthrough = grad(through_grad)")
fg::Tensor through_grad(const fg::Tensor& x) {
  std::function<fg::Tensor(const fg::Tensor&)> fn = cube;
  return fn(x).sum();
//       ^
}
