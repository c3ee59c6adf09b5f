// A type alias, constexpr and static_assert in the body, and auto and reference locals.
// EXPECT: accept
#include <funcgen/funcgen.h>

FUNCGEN("valiased = vmap(aliased)")
FUNCGEN("galiased = grad(aliased)")
fg::Tensor aliased(const fg::Tensor& x) {
  using T = fg::Tensor;
  typedef double real;
  constexpr real kHalf = 0.5;
  static_assert(sizeof(real) == 8, "double is 64 bits");
  const T& ref = x;
  auto y = ref * kHalf;
  const auto& z = y;
  return (z.sin() + ref).sum();
}
