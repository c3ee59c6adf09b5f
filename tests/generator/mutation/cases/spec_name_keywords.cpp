// Spec targets that cannot name a function: keywords, alternative tokens, main, reserved names.
// EXPECT: reject
#include <funcgen/funcgen.h>

FUNCGEN("and = vmap(f)")
//       ^
FUNCGEN("delete = vmap(f)")
//       ^
FUNCGEN("namespace = vmap(f)")
//       ^
FUNCGEN("auto = vmap(f)")
//       ^
FUNCGEN("main = vmap(f)")
//       ^
FUNCGEN("co_await = vmap(f)")
//       ^
FUNCGEN("my__f = vmap(f)")
//       ^
fg::Tensor f(const fg::Tensor& x) { return x * 2; }
