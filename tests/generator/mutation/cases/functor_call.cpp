// A functor's operator() on a tensor: under vmap it runs once per example (its body is not seen
// through the object), which is what vmap computes.
// EXPECT: accept
#include <funcgen/funcgen.h>

struct Scale {
  double k;
  fg::Tensor operator()(const fg::Tensor& t) const { return t * k + t.sum(); }
};

FUNCGEN("vscaled = vmap(scaled)")
fg::Tensor scaled(const fg::Tensor& x) {
  Scale sc{2.0};
  return sc(x).sin();
}
