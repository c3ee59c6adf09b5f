// UX Limitations, "General limitations": a transformed function must not assign to global
// variables; all outputs must be returned.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <tuple>

fg::Tensor intermediate;

// Don't do this: `intermediate` would hold the value of one call for the whole batch.
FUNCGEN("batched_f = vmap(f)")
fg::Tensor f(const fg::Tensor& x) {
  intermediate = x.sin();
// CHECK: global_assignment.cpp:[[@LINE-1]]:3: error: assignment to global variable 'intermediate' inside 'f', which 'batched_f' transforms; return the value as an extra output instead [funcgen-global-assignment]
// CHECK: global_assignment.cpp:[[@LINE-7]]:12: note: 'intermediate' is declared here; under vmap it would hold the value of one call for the whole batch, not one per example
  fg::Tensor z = intermediate.sin();
  return z;
}

// The page's own example is under grad: the global would hold a value, not its derivative.
FUNCGEN("grad_x = grad(f_of_scalar)")
fg::Tensor f_of_scalar(const fg::Tensor& x) {
  intermediate = x.sin();
// CHECK: global_assignment.cpp:[[@LINE-1]]:3: error: assignment to global variable 'intermediate' inside 'f_of_scalar', which 'grad_x' transforms; return the value as an extra output instead [funcgen-global-assignment]
// CHECK: global_assignment.cpp:[[@LINE-17]]:12: note: 'intermediate' is declared here; a transform sees only what the function returns, so the value stored there is not transformed (with grad, return it beside the loss and use has_aux=True)
  fg::Tensor z = intermediate.sin();
  return z;
}
