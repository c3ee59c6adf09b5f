// A non-const member function that writes a tensor field of its object: the caller's local object
// changes (the helper takes the object's tensors by reference, as `void step(State& s)` does).
// EXPECT: accept
#include <funcgen/funcgen.h>

struct Counter {
  fg::Tensor total;
  void add(const fg::Tensor& x) { total = total + x; }
};

FUNCGEN("gcount = grad(count)")
FUNCGEN("vcount = vmap(count)")
fg::Tensor count(const fg::Tensor& x) {
  Counter c{x * 0};
  c.add(x.sin());
  c.add(x * x);
  return c.total.sum();
}
