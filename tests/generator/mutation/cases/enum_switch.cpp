// A switch on an enum local.
// EXPECT: accept
#include <funcgen/funcgen.h>

enum class Mode { kSin, kCos };

FUNCGEN("vmode = vmap(by_mode)")
FUNCGEN("gmode = grad(by_mode)")
fg::Tensor by_mode(const fg::Tensor& x) {
  const Mode mode = x.size(0) > 2 ? Mode::kCos : Mode::kSin;
  fg::Tensor y;
  switch (mode) {
    case Mode::kSin: y = x.sin(); break;
    case Mode::kCos: y = x.cos(); break;
  }
  return y.sum();
}
