// A virtual call on a reference parameter: the class of the object it refers to is the caller's,
// not known where the call is, so which override runs is not known: reported at the call.
// EXPECT: reject
#include <funcgen/funcgen.h>

struct Base {
  virtual ~Base() = default;
  virtual fg::Tensor f(const fg::Tensor& x) const { return x; }
};
struct Sq : Base {
  fg::Tensor f(const fg::Tensor& x) const override { return x * x; }
};

fg::Tensor apply(const Base& b, const fg::Tensor& x) { return b.f(x); }
//                                                            ^

FUNCGEN("gsq = grad(square)")
fg::Tensor square(const fg::Tensor& x) {
  Sq s;
  return apply(s, x).sum();
}
