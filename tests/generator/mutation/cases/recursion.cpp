// A helper that calls itself.
// EXPECT: reject
#include <funcgen/funcgen.h>

fg::Tensor halve(const fg::Tensor& x, int n) { return n == 0 ? x : halve(x / 2, n - 1); }
//                                                                 ^

FUNCGEN("vrecursive = vmap(recursive_use)")
fg::Tensor recursive_use(const fg::Tensor& x) { return halve(x, 3) + 1; }
