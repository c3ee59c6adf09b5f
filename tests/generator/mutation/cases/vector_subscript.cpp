// v[i] on a std::vector<fg::Tensor> local whose elements are batched and not batched.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <vector>

FUNCGEN("vpick = vmap(pick)")
fg::Tensor pick(const fg::Tensor& x) {
  std::vector<fg::Tensor> parts = {x.sin(), fg::ones({3}, x.options()) * 3, x * x};
  return (parts[0] * parts[1] + parts[2]).sum();
}
