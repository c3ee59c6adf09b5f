// A call through std::function: vmap runs it once per example.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <functional>

fg::Tensor norm_of(const fg::Tensor& t) { return t / t.norm(); }

FUNCGEN("vthrough = vmap(through)")
fg::Tensor through(const fg::Tensor& x) {
  std::function<fg::Tensor(const fg::Tensor&)> fn = norm_of;
  return fn(x) + 1;
}
