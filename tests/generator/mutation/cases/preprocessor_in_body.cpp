// #if / #else inside the body.
// EXPECT: accept
#include <funcgen/funcgen.h>

#define USE_TANH 1

FUNCGEN("vpre = vmap(preprocessed)")
FUNCGEN("gpre = grad(preprocessed)")
fg::Tensor preprocessed(const fg::Tensor& x) {
#if USE_TANH
  fg::Tensor y = x.tanh();
#else
  fg::Tensor y = x.sigmoid();
#endif
  return (y * x).sum();
}
