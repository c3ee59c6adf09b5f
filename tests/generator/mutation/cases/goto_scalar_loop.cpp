// goto in scalar code next to tensor code: the generated code declares values a jump would skip.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("gretry = grad(retry)")
fg::Tensor retry(const fg::Tensor& x) {
  int n = 0;
again:
  ++n;
  if (n < 3) goto again;
//           ^
  return (x * n).sum();
}
