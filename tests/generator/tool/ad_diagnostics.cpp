// What AD cannot differentiate is an error at the construct, never silently wrong code: specs that
// cannot apply are funcgen-spec errors when the specs are read, constructs in the function body
// funcgen-unsupported errors.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("aux_grad = grad(one_output, has_aux=True)")
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:21: error: grad(..., has_aux=True) needs 'one_output' to return std::tuple<fg::Tensor, aux...> [funcgen-spec]
fg::Tensor one_output(const fg::Tensor& x) { return x.sum(); }

FUNCGEN("vmapped_vjp = vmap(vjp(scaled))")
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:24: error: vmap cannot transform 'vjp(scaled)', which returns a function (as vjp and linearize do); transform the original function instead [funcgen-spec]
FUNCGEN("grad_of_jacrev = grad(jacrev(scaled))")
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:32: error: 'jacrev' inside 'grad' cannot be generated yet; grad, grad_and_value and jvp nest in any order, and vmap, jacrev, jacfwd and hessian can be applied to them [funcgen-unsupported]
fg::Tensor scaled(const fg::Tensor& x) { return x * 2; }

FUNCGEN("branchy_grad = grad(branchy)")
fg::Tensor branchy(const fg::Tensor& x, bool flip) {
  fg::Tensor y = x.sin();
  if (flip) {
    y = -y;
  }
  return y.sum();
}
// CHECK: ad_diagnostics.cpp:[[@LINE-5]]:3: error: an 'if' on tensors cannot be differentiated by this version of funcgen; write it as straight-line code (fg::where selects element-wise) [funcgen-unsupported]

FUNCGEN("no_rule_grad = grad(no_rule)")
fg::Tensor no_rule(const fg::Tensor& x) { return x.movedim(0, -1).sin(); }
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:50: error: 'movedim' has no derivative rule; funcgen cannot differentiate through it (templates/derivatives.def lists the ops it can) [funcgen-unsupported]

fg::Tensor external_op(const fg::Tensor& x);
FUNCGEN("external_grad = grad(uses_external)")
fg::Tensor uses_external(const fg::Tensor& x) { return external_op(x).sum(); }
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:56: error: calls of 'external_op' cannot be differentiated: funcgen sees only fg ops and functions defined in this file [funcgen-unsupported]

FUNCGEN("view_write_grad = grad(view_write)")
fg::Tensor view_write(const fg::Tensor& x) {
  fg::Tensor y = x * 2;
  fg::Tensor row = y.select(0, 0);
  row.mul_(3);
  return y.sum();
}
// CHECK: ad_diagnostics.cpp:[[@LINE-3]]:3: error: in-place 'mul_' writes into a view of 'y', which cannot be differentiated yet; clone() the view first [funcgen-unsupported]
