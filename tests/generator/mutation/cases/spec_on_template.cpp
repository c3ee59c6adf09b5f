// A spec on a function template: the generated code would not know its parameters.
// EXPECT: reject
#include <funcgen/funcgen.h>

template <int N>
FUNCGEN("vscaled_by = vmap(scaled_by)")
fg::Tensor scaled_by(const fg::Tensor& x) { return x * N; }
//         ^
