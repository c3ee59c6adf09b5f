// assert on a batched value: data-dependent under vmap, reported at the value's read.
// EXPECT: reject
#include <funcgen/funcgen.h>
#include <cassert>

FUNCGEN("vpositive = vmap(positive)")
fg::Tensor positive(const fg::Tensor& x) {
  assert(x.sum().item<double>() > 0);
//               ^
  return x.log();
}
