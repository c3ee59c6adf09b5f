// A virtual call on the object of a base class's member function: funcgen transforms that function
// once, for every class that calls it, so which override runs is not known there: reported.
// EXPECT: reject
#include <funcgen/funcgen.h>

struct Base {
  virtual ~Base() = default;
  virtual fg::Tensor f(const fg::Tensor& x) const { return x; }
  fg::Tensor twice(const fg::Tensor& x) const { return f(x) * 2; }
//                                                     ^
};
struct Sq : Base {
  fg::Tensor f(const fg::Tensor& x) const override { return x * x; }
};

FUNCGEN("gsq = grad(square)")
fg::Tensor square(const fg::Tensor& x) {
  Sq s;
  return s.twice(x).sum();
}
