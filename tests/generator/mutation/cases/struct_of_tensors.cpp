// A struct that holds tensors, with a user-defined operator+: its tensors cannot be followed.
// EXPECT: reject
#include <funcgen/funcgen.h>

struct Pair {
  fg::Tensor first, second;
};
Pair operator+(const Pair& a, const Pair& b) { return {a.first + b.first, a.second + b.second}; }

FUNCGEN("vpaired = vmap(paired)")
fg::Tensor paired(const fg::Tensor& x) {
  const Pair p{x, x * 2};
//^
  return x;
}
