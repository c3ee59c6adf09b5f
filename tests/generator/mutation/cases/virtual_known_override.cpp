// A virtual call on a reference bound to a local of a known class: the call of that class's
// override (devirtualized), whose object holds no data.
// EXPECT: accept
#include <funcgen/funcgen.h>

struct Base {
  virtual ~Base() = default;
  virtual fg::Tensor f(const fg::Tensor& x) const { return x; }
};
struct Sq : Base {
  fg::Tensor f(const fg::Tensor& x) const override { return x * x; }
};

FUNCGEN("gsq = grad(square)")
FUNCGEN("vsq = vmap(square)")
fg::Tensor square(const fg::Tensor& x) {
  Sq s;
  const Base& b = s;
  return b.f(x).sum();
}
