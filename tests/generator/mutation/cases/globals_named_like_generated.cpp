// Globals the body reads, named like what the transforms introduce (the reverse pass's trip
// counter and branch flag, temporaries, versions of a local): the generated names keep clear.
// EXPECT: accept
#include <funcgen/funcgen.h>

const double trips = 0.5, taken = 2.0, t = 1.5, y_1 = 0.25, d_y = 3.0;

FUNCGEN("gglobal_names = grad(global_names)")
FUNCGEN("vglobal_names = vmap(global_names)")
fg::Tensor global_names(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int i = 0; i < 3; ++i) y = y.sin() * trips + y * t + y_1;
  if (x.size(0) > 2) y = y * taken - d_y;
  return y.sum();
}
