// Macros that expand to tensor operations and to statements.
// EXPECT: accept
#include <funcgen/funcgen.h>

#define SQUARE(t) ((t) * (t))
#define ACCUMULATE(into, value) do { into = into + (value); } while (0)
#define SCALE 2.5

FUNCGEN("vmacros = vmap(macros)")
FUNCGEN("gmacros = grad(macros)")
fg::Tensor macros(const fg::Tensor& x) {
  fg::Tensor y = SQUARE(x.sin());
  ACCUMULATE(y, x * SCALE);
  return SQUARE(y).sum();
}
