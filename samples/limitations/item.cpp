// UX Limitations, "Data-dependent operations (.item())": vmap cannot read a batched tensor's
// values into a C++ number.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("batched_f = vmap(f)")
fg::Tensor f(const fg::Tensor& x) {
  const double v = x.item<double>();
// CHECK: item.cpp:[[@LINE-1]]:22: error: '.item()' reads batched tensor 'x' into a C++ value, but under vmap 'x' holds one value per example; keep it a tensor and use tensor ops [funcgen-item]
  return fg::scalar_tensor(v * 2);
}
