// C-style, functional and static_cast casts of sizes and of tensors' scalars.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("vcasts = vmap(casts)")
FUNCGEN("gcasts = grad(casts)")
fg::Tensor casts(const fg::Tensor& x) {
  const double n = (double)x.size(0);
  const float half = float(n) / 2;
  return (x * static_cast<double>(half) + x / n).sum();
}
