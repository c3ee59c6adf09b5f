// `using namespace fg;` and unqualified calls of fg functions.
// EXPECT: accept
#include <funcgen/funcgen.h>

using namespace fg;

FUNCGEN("vunqualified = vmap(unqualified)")
FUNCGEN("gunqualified = grad(unqualified)")
Tensor unqualified(const Tensor& x) { return sum(tanh(x) * sigmoid(x)); }
