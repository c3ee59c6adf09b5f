// `std::cout << ...` on values computed from tensors: an output statement, run once for the batch
// under vmap (funcgen-side-effect warns) and with the primal values under grad.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <iostream>

FUNCGEN("vprint = vmap(print)")
FUNCGEN("gprint = grad(print)")
fg::Tensor print(const fg::Tensor& x) {
  std::cout << "dims: " << x.dim() << ", size: " << x.size(0) << "\n";
  return (x * x).sum();
}
