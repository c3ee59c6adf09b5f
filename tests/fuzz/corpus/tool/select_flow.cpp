#include <funcgen/funcgen.h>

FUNCGEN("clip_v = vmap(clip, control_flow='select')")
fg::Tensor clip(const fg::Tensor& x) {
  if (x.sum().item<double>() > 1.0) return x / x.sum();
  return x;
}

FUNCGEN("clip_g = grad(clip_sum)")
fg::Tensor clip_sum(const fg::Tensor& x) { return fg::clamp(x, -1.0, 1.0).sum(); }
