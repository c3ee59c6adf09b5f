// A helper that calls itself, to a depth that is a constant at the call: unfolded level by level.
// EXPECT: accept
#include <funcgen/funcgen.h>

fg::Tensor halve(const fg::Tensor& x, int n) { return n == 0 ? x : halve(x / 2, n - 1); }

FUNCGEN("vrecursive = vmap(recursive_use)")
fg::Tensor recursive_use(const fg::Tensor& x) { return halve(x, 3) + 1; }

FUNCGEN("grecursive = grad(recursive_sum)")
fg::Tensor recursive_sum(const fg::Tensor& x) { return (halve(x.sin(), 2) * x).sum(); }
