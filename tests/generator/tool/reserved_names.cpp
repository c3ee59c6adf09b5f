// Names with '__' are reserved in C++ and are the form of every name the generated code introduces
// (batch0__, forward__): a user's variable of that form is reported at its declaration, once,
// rather than hidden by or hiding a generated one. Other odd names (`_`, `_x`, `x_`) are fine:
// tests/generator/hygiene compiles and checks them.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("g = vmap(grad(f, argnums=1), in_dims=(None, 0))")
FUNCGEN("j = jvp(f)")
fg::Tensor f(const fg::Tensor& forward__, const fg::Tensor& x) {
  // CHECK: reserved_names.cpp:[[@LINE-1]]:32: error: the name 'forward__' has '__' in it, which C++ reserves and funcgen's generated names use; rename the variable [funcgen-unsupported]
  fg::Tensor __ = x * forward__;
  // CHECK: reserved_names.cpp:[[@LINE-1]]:14: error: the name '__' has '__' in it, which C++ reserves and funcgen's generated names use; rename the variable [funcgen-unsupported]
  fg::Tensor batch0__ = __.sin();
  // CHECK: reserved_names.cpp:[[@LINE-1]]:14: error: the name 'batch0__' has '__' in it, which C++ reserves and funcgen's generated names use; rename the variable [funcgen-unsupported]
  return batch0__.sum();
}
// CHECK: 3 errors generated.
