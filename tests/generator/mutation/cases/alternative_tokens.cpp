// Alternative tokens (and, or, not) in scalar conditions around tensor code.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vtokens = vmap(tokens)")
FUNCGEN("gtokens = grad(tokens)")
fg::Tensor tokens(const fg::Tensor& x) {
  fg::Tensor y = x;
  const bool one_dim = x.dim() == 1;
  if (one_dim and not (x.size(0) == 0 or x.size(0) > 10)) y = y.exp();
  return y.sum();
}
