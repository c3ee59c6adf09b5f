// ?: on a batched value: data-dependent control flow under vmap.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("vsign = vmap(sign_choice)")
fg::Tensor sign_choice(const fg::Tensor& x) {
  return x.sum().item<double>() > 0 ? x : -x;
//       ^
}
