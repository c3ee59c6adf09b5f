// Code Clang cannot compile is reported by Clang; funcgen transforms nothing of it and does not
// crash on what Clang kept of it (a structured binding of an undeclared call has no types).
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("b = vmap(f)")
FUNCGEN("g = grad(f)")
fg::Tensor f(const fg::Tensor& x) {
  auto [a, b] = undeclared(x);
// CHECK: compile_errors.cpp:[[@LINE-1]]:17: error: use of undeclared identifier 'undeclared'
  return (a + b).sum();
}

FUNCGEN("c = vmap(uses_broken_helper)")
fg::Tensor uses_broken_helper(const fg::Tensor& x) { return broken_helper(x); }
// CHECK: compile_errors.cpp:[[@LINE-1]]:61: error: use of undeclared identifier 'broken_helper'

// A statement Clang could not compile is missing from the AST (here the last return): funcgen
// reports nothing of its own about what is left of the function (that it returns from one branch
// only), only Clang's error.
FUNCGEN("d = vmap(returns_nested)")
std::tuple<std::tuple<fg::Tensor, fg::Tensor>, fg::Tensor> returns_nested(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  if (x.dim() > 1) return {{x, y}, x};
  return {{y, x}, undefined_name};
// CHECK: compile_errors.cpp:[[@LINE-1]]:19: error: use of undeclared identifier 'undefined_name'
}
