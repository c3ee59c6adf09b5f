// Globals read in the body: a constant scalar, a constant tensor, a constexpr array.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <array>

const double kScale = 3.0;
constexpr std::array<double, 2> kCoefficients = {0.5, 2.0};
const fg::Tensor kOffset = fg::tensor({1.0, 2.0, 3.0}, fg::kDouble);

FUNCGEN("vglobals = vmap(use_globals)")
FUNCGEN("gglobals = grad(use_globals)")
fg::Tensor use_globals(const fg::Tensor& x) {
  return ((x * kScale + kOffset) * kCoefficients[1] - kCoefficients[0]).sin().sum();
}
