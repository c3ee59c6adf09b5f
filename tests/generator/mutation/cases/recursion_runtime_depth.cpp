// A helper that calls itself to a depth known only when the program runs: reported at the call
// that recurses.
// EXPECT: reject
#include <funcgen/funcgen.h>

fg::Tensor halve(const fg::Tensor& x, int n) { return n == 0 ? x : halve(x / 2, n - 1); }
//                                                                 ^

FUNCGEN("grecursive = grad(runtime_depth)")
fg::Tensor runtime_depth(const fg::Tensor& x, int n) { return (halve(x, n) * x).sum(); }
