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
