// A local struct that holds tensors, with a user-defined operator+ that returns one: held field by
// field, the operator a helper like any other.
// EXPECT: accept
#include <funcgen/funcgen.h>

struct Pair {
  fg::Tensor first, second;
};
Pair operator+(const Pair& a, const Pair& b) { return {a.first + b.first, a.second + b.second}; }

FUNCGEN("vpaired = vmap(paired)")
FUNCGEN("gpaired = grad(paired)")
fg::Tensor paired(const fg::Tensor& x) {
  const Pair p{x, x * 2};
  const Pair q = p + Pair{x.sin(), x};
  return (q.first * q.second).sum();
}
