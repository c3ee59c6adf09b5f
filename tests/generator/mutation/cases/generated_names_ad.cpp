// Locals named like what the differentiator introduces (trips, taken, versions y_1, grad), and a
// global read inside the loop whose name the reverse pass might take for its own.
// EXPECT: accept
#include <funcgen/funcgen.h>

const double trips_scale = 0.5;
const int taken_limit = 1;

FUNCGEN("gnames = grad(ad_names)")
FUNCGEN("vnames_ad = vmap(ad_names)")
fg::Tensor ad_names(const fg::Tensor& x) {
  fg::Tensor y = x, y_1 = x * 2, grad = x.cos();
  int trips = 0, batch0 = 3;
  for (int i = 0; i < batch0; ++i) {
    y = y.sin() * trips_scale + y_1;
    ++trips;
  }
  const bool taken = trips > taken_limit;
  if (taken) y = y * grad;
  return y.sum();
}
