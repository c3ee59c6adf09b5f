// An annotated function in a nested namespace, calling a helper of another namespace.
// EXPECT: accept
// NAMESPACE: model::layers
#include <funcgen/funcgen.h>

namespace model::activations {
fg::Tensor soft(const fg::Tensor& x) { return (x.exp() + 1).log(); }
}  // namespace model::activations

namespace model::layers {
FUNCGEN("vdense = vmap(dense)")
FUNCGEN("gdense = grad(dense)")
fg::Tensor dense(const fg::Tensor& x) { return activations::soft(x * 2).sum(); }
}  // namespace model::layers
