// Every limitation check under every transform that vmaps code: vmap, vmap(grad), vmap(jacrev),
// jacfwd, hessian, vmap(jvp). Each case has a function of its own (a construct is reported once,
// whichever spec reaches it). Only values batched at a vmap level count, as torch.func raises:
// jacfwd and hessian batch only tangents, so reading a primal's value there is fine.
// EXIT: 1
// FLAGS: -ferror-limit=0
#include <funcgen/funcgen.h>

#include <cstdio>

namespace torch::autograd {
std::vector<fg::Tensor> grad(const std::vector<fg::Tensor>& outputs, const std::vector<fg::Tensor>& inputs);
}  // namespace torch::autograd

fg::Tensor global_assignment_vmap_state;
FUNCGEN("global_assignment_vmap_spec = vmap(global_assignment_vmap)")
fg::Tensor global_assignment_vmap(const fg::Tensor& x) {
  global_assignment_vmap_state = x.sin();
  return (x * 2).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: assignment to global variable 'global_assignment_vmap_state' inside 'global_assignment_vmap', which 'global_assignment_vmap_spec' transforms; return the value as an extra output instead [funcgen-global-assignment]
// CHECK: derived_checks.cpp:[[@LINE-7]]:12: note: 'global_assignment_vmap_state' is declared here; under vmap it would hold the value of one call for the whole batch, not one per example

fg::Tensor global_assignment_vmap_grad_state;
FUNCGEN("global_assignment_vmap_grad_spec = vmap(grad(global_assignment_vmap_grad))")
fg::Tensor global_assignment_vmap_grad(const fg::Tensor& x) {
  global_assignment_vmap_grad_state = x.sin();
  return (x * 2).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: assignment to global variable 'global_assignment_vmap_grad_state' inside 'global_assignment_vmap_grad', which 'global_assignment_vmap_grad_spec' transforms; return the value as an extra output instead [funcgen-global-assignment]
// CHECK: derived_checks.cpp:[[@LINE-7]]:12: note: 'global_assignment_vmap_grad_state' is declared here; a transform sees only what the function returns, so the value stored there is not transformed (with grad, return it beside the loss and use has_aux=True)

fg::Tensor global_assignment_vmap_jacrev_state;
FUNCGEN("global_assignment_vmap_jacrev_spec = vmap(jacrev(global_assignment_vmap_jacrev))")
fg::Tensor global_assignment_vmap_jacrev(const fg::Tensor& x) {
  global_assignment_vmap_jacrev_state = x.sin();
  return (x * 2).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: assignment to global variable 'global_assignment_vmap_jacrev_state' inside 'global_assignment_vmap_jacrev', which 'global_assignment_vmap_jacrev_spec' transforms; return the value as an extra output instead [funcgen-global-assignment]
// CHECK: derived_checks.cpp:[[@LINE-7]]:12: note: 'global_assignment_vmap_jacrev_state' is declared here; a transform sees only what the function returns, so the value stored there is not transformed (with grad, return it beside the loss and use has_aux=True)

fg::Tensor global_assignment_jacfwd_state;
FUNCGEN("global_assignment_jacfwd_spec = jacfwd(global_assignment_jacfwd)")
fg::Tensor global_assignment_jacfwd(const fg::Tensor& x) {
  global_assignment_jacfwd_state = x.sin();
  return (x * 2).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: assignment to global variable 'global_assignment_jacfwd_state' inside 'global_assignment_jacfwd', which 'global_assignment_jacfwd_spec' transforms; return the value as an extra output instead [funcgen-global-assignment]
// CHECK: derived_checks.cpp:[[@LINE-7]]:12: note: 'global_assignment_jacfwd_state' is declared here; a transform sees only what the function returns, so the value stored there is not transformed (with grad, return it beside the loss and use has_aux=True)

fg::Tensor global_assignment_hessian_state;
FUNCGEN("global_assignment_hessian_spec = hessian(global_assignment_hessian)")
fg::Tensor global_assignment_hessian(const fg::Tensor& x) {
  global_assignment_hessian_state = x.sin();
  return (x * 2).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: assignment to global variable 'global_assignment_hessian_state' inside 'global_assignment_hessian', which 'global_assignment_hessian_spec' transforms; return the value as an extra output instead [funcgen-global-assignment]
// CHECK: derived_checks.cpp:[[@LINE-7]]:12: note: 'global_assignment_hessian_state' is declared here; a transform sees only what the function returns, so the value stored there is not transformed (with grad, return it beside the loss and use has_aux=True)

fg::Tensor global_assignment_vmap_jvp_state;
FUNCGEN("global_assignment_vmap_jvp_spec = vmap(jvp(global_assignment_vmap_jvp))")
fg::Tensor global_assignment_vmap_jvp(const fg::Tensor& x) {
  global_assignment_vmap_jvp_state = x.sin();
  return (x * 2).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: assignment to global variable 'global_assignment_vmap_jvp_state' inside 'global_assignment_vmap_jvp', which 'global_assignment_vmap_jvp_spec' transforms; return the value as an extra output instead [funcgen-global-assignment]
// CHECK: derived_checks.cpp:[[@LINE-7]]:12: note: 'global_assignment_vmap_jvp_state' is declared here; a transform sees only what the function returns, so the value stored there is not transformed (with grad, return it beside the loss and use has_aux=True)

FUNCGEN("autograd_api_vmap_spec = vmap(autograd_api_vmap)")
fg::Tensor autograd_api_vmap(const fg::Tensor& x) {
  fg::Tensor y = (x * x).sum();
  return torch::autograd::grad({y}, {x})[0].sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:10: error: 'torch::autograd::grad' is an eager autograd API that funcgen's transforms cannot see through; use funcgen's grad or vjp transform instead [funcgen-autograd-api]
// CHECK: derived_checks.cpp:[[@LINE-5]]:12: note: funcgen's equivalent is a spec on 'autograd_api_vmap', e.g. FUNCGEN("autograd_api_vmap_grad = grad(autograd_api_vmap)")

FUNCGEN("autograd_api_vmap_grad_spec = vmap(grad(autograd_api_vmap_grad))")
fg::Tensor autograd_api_vmap_grad(const fg::Tensor& x) {
  fg::Tensor y = (x * x).sum();
  return torch::autograd::grad({y}, {x})[0].sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:10: error: 'torch::autograd::grad' is an eager autograd API that funcgen's transforms cannot see through; use funcgen's grad or vjp transform instead [funcgen-autograd-api]
// CHECK: derived_checks.cpp:[[@LINE-5]]:12: note: funcgen's equivalent is a spec on 'autograd_api_vmap_grad', e.g. FUNCGEN("autograd_api_vmap_grad_grad = grad(autograd_api_vmap_grad)")

FUNCGEN("autograd_api_vmap_jacrev_spec = vmap(jacrev(autograd_api_vmap_jacrev))")
fg::Tensor autograd_api_vmap_jacrev(const fg::Tensor& x) {
  fg::Tensor y = (x * x).sum();
  return torch::autograd::grad({y}, {x})[0].sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:10: error: 'torch::autograd::grad' is an eager autograd API that funcgen's transforms cannot see through; use funcgen's grad or vjp transform instead [funcgen-autograd-api]
// CHECK: derived_checks.cpp:[[@LINE-5]]:12: note: funcgen's equivalent is a spec on 'autograd_api_vmap_jacrev', e.g. FUNCGEN("autograd_api_vmap_jacrev_grad = grad(autograd_api_vmap_jacrev)")

FUNCGEN("autograd_api_jacfwd_spec = jacfwd(autograd_api_jacfwd)")
fg::Tensor autograd_api_jacfwd(const fg::Tensor& x) {
  fg::Tensor y = (x * x).sum();
  return torch::autograd::grad({y}, {x})[0].sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:10: error: 'torch::autograd::grad' is an eager autograd API that funcgen's transforms cannot see through; use funcgen's grad or vjp transform instead [funcgen-autograd-api]
// CHECK: derived_checks.cpp:[[@LINE-5]]:12: note: funcgen's equivalent is a spec on 'autograd_api_jacfwd', e.g. FUNCGEN("autograd_api_jacfwd_grad = grad(autograd_api_jacfwd)")

FUNCGEN("autograd_api_hessian_spec = hessian(autograd_api_hessian)")
fg::Tensor autograd_api_hessian(const fg::Tensor& x) {
  fg::Tensor y = (x * x).sum();
  return torch::autograd::grad({y}, {x})[0].sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:10: error: 'torch::autograd::grad' is an eager autograd API that funcgen's transforms cannot see through; use funcgen's grad or vjp transform instead [funcgen-autograd-api]
// CHECK: derived_checks.cpp:[[@LINE-5]]:12: note: funcgen's equivalent is a spec on 'autograd_api_hessian', e.g. FUNCGEN("autograd_api_hessian_grad = grad(autograd_api_hessian)")

FUNCGEN("autograd_api_vmap_jvp_spec = vmap(jvp(autograd_api_vmap_jvp))")
fg::Tensor autograd_api_vmap_jvp(const fg::Tensor& x) {
  fg::Tensor y = (x * x).sum();
  return torch::autograd::grad({y}, {x})[0].sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:10: error: 'torch::autograd::grad' is an eager autograd API that funcgen's transforms cannot see through; use funcgen's grad or vjp transform instead [funcgen-autograd-api]
// CHECK: derived_checks.cpp:[[@LINE-5]]:12: note: funcgen's equivalent is a spec on 'autograd_api_vmap_jvp', e.g. FUNCGEN("autograd_api_vmap_jvp_grad = grad(autograd_api_vmap_jvp)")

FUNCGEN("side_effect_vmap_spec = vmap(side_effect_vmap)")
fg::Tensor side_effect_vmap(const fg::Tensor& x) {
  std::printf("step\n");
  return (x * 2).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: warning: output runs once for the whole batch, not once per example: vmap runs 'side_effect_vmap' a single time [funcgen-side-effect]
// CHECK: derived_checks.cpp:[[@LINE-6]]:10: note: return the values instead, or move the side effect out of the function that 'side_effect_vmap_spec' transforms

FUNCGEN("side_effect_vmap_grad_spec = vmap(grad(side_effect_vmap_grad))")
fg::Tensor side_effect_vmap_grad(const fg::Tensor& x) {
  std::printf("step\n");
  return (x * 2).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: warning: output runs once for the whole batch, not once per example: vmap runs 'side_effect_vmap_grad' a single time [funcgen-side-effect]
// CHECK: derived_checks.cpp:[[@LINE-6]]:10: note: return the values instead, or move the side effect out of the function that 'side_effect_vmap_grad_spec' transforms
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: 'side_effect_vmap_grad_spec' vmaps 'grad(side_effect_vmap_grad)', which runs this code

FUNCGEN("side_effect_vmap_jacrev_spec = vmap(jacrev(side_effect_vmap_jacrev))")
fg::Tensor side_effect_vmap_jacrev(const fg::Tensor& x) {
  std::printf("step\n");
  return (x * 2).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: warning: output runs once for the whole batch, not once per example: vmap runs 'side_effect_vmap_jacrev' a single time [funcgen-side-effect]
// CHECK: derived_checks.cpp:[[@LINE-6]]:10: note: return the values instead, or move the side effect out of the function that 'side_effect_vmap_jacrev_spec' transforms
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: 'side_effect_vmap_jacrev_spec' vmaps 'jacrev(side_effect_vmap_jacrev)', which runs this code

FUNCGEN("side_effect_jacfwd_spec = jacfwd(side_effect_jacfwd)")
fg::Tensor side_effect_jacfwd(const fg::Tensor& x) {
  std::printf("step\n");
  return (x * 2).sum();
}
// jacfwd and hessian batch only tangents: the function's own values are not batched

FUNCGEN("side_effect_hessian_spec = hessian(side_effect_hessian)")
fg::Tensor side_effect_hessian(const fg::Tensor& x) {
  std::printf("step\n");
  return (x * 2).sum();
}
// jacfwd and hessian batch only tangents: the function's own values are not batched

FUNCGEN("side_effect_vmap_jvp_spec = vmap(jvp(side_effect_vmap_jvp))")
fg::Tensor side_effect_vmap_jvp(const fg::Tensor& x) {
  std::printf("step\n");
  return (x * 2).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: warning: output runs once for the whole batch, not once per example: vmap runs 'side_effect_vmap_jvp' a single time [funcgen-side-effect]
// CHECK: derived_checks.cpp:[[@LINE-6]]:10: note: return the values instead, or move the side effect out of the function that 'side_effect_vmap_jvp_spec' transforms
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: 'side_effect_vmap_jvp_spec' vmaps 'jvp(side_effect_vmap_jvp)', which runs this code

FUNCGEN("inplace_batched_vmap_spec = vmap(inplace_batched_vmap)")
fg::Tensor inplace_batched_vmap(const fg::Tensor& x) {
  fg::Tensor r = fg::zeros({3});
  r.copy_(x);
  return (r * x).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:5: error: in-place 'copy_' writes batched values of 'x' into 'r', which is not batched; under vmap it cannot hold one result per example [funcgen-inplace-batched]
// CHECK: derived_checks.cpp:[[@LINE-5]]:18: note: 'r' is created by 'fg::zeros', which is not batched; create it with 'x.new_zeros' so that it is batched like 'x'

FUNCGEN("inplace_batched_vmap_grad_spec = vmap(grad(inplace_batched_vmap_grad))")
fg::Tensor inplace_batched_vmap_grad(const fg::Tensor& x) {
  fg::Tensor r = fg::zeros({3});
  r.copy_(x);
  return (r * x).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:5: error: in-place 'copy_' writes batched values of 'x' into 'r', which is not batched; under vmap it cannot hold one result per example [funcgen-inplace-batched]
// CHECK: derived_checks.cpp:[[@LINE-5]]:18: note: 'r' is created by 'fg::zeros', which is not batched; create it with 'x.new_zeros' so that it is batched like 'x'
// CHECK: derived_checks.cpp:[[@LINE-8]]:10: note: 'inplace_batched_vmap_grad_spec' vmaps 'grad(inplace_batched_vmap_grad)', which runs this code

FUNCGEN("inplace_batched_vmap_jacrev_spec = vmap(jacrev(inplace_batched_vmap_jacrev))")
fg::Tensor inplace_batched_vmap_jacrev(const fg::Tensor& x) {
  fg::Tensor r = fg::zeros({3});
  r.copy_(x);
  return (r * x).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:5: error: in-place 'copy_' writes batched values of 'x' into 'r', which is not batched; under vmap it cannot hold one result per example [funcgen-inplace-batched]
// CHECK: derived_checks.cpp:[[@LINE-5]]:18: note: 'r' is created by 'fg::zeros', which is not batched; create it with 'x.new_zeros' so that it is batched like 'x'
// CHECK: derived_checks.cpp:[[@LINE-8]]:10: note: 'inplace_batched_vmap_jacrev_spec' vmaps 'jacrev(inplace_batched_vmap_jacrev)', which runs this code

FUNCGEN("inplace_batched_jacfwd_spec = jacfwd(inplace_batched_jacfwd)")
fg::Tensor inplace_batched_jacfwd(const fg::Tensor& x) {
  fg::Tensor r = fg::zeros({3});
  r.copy_(x);
  return (r * x).sum();
}
// jacfwd and hessian batch only tangents: the function's own values are not batched

FUNCGEN("inplace_batched_hessian_spec = hessian(inplace_batched_hessian)")
fg::Tensor inplace_batched_hessian(const fg::Tensor& x) {
  fg::Tensor r = fg::zeros({3});
  r.copy_(x);
  return (r * x).sum();
}
// jacfwd and hessian batch only tangents: the function's own values are not batched

FUNCGEN("inplace_batched_vmap_jvp_spec = vmap(jvp(inplace_batched_vmap_jvp))")
fg::Tensor inplace_batched_vmap_jvp(const fg::Tensor& x) {
  fg::Tensor r = fg::zeros({3});
  r.copy_(x);
  return (r * x).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:5: error: in-place 'copy_' writes batched values of 'x' into 'r', which is not batched; under vmap it cannot hold one result per example [funcgen-inplace-batched]
// CHECK: derived_checks.cpp:[[@LINE-5]]:18: note: 'r' is created by 'fg::zeros', which is not batched; create it with 'x.new_zeros' so that it is batched like 'x'
// CHECK: derived_checks.cpp:[[@LINE-8]]:10: note: 'inplace_batched_vmap_jvp_spec' vmaps 'jvp(inplace_batched_vmap_jvp)', which runs this code

FUNCGEN("out_variant_vmap_spec = vmap(out_variant_vmap)")
fg::Tensor out_variant_vmap(const fg::Tensor& x) {
  fg::Tensor out = fg::zeros({3});
  fg::mul_out(out, x, x);
  return out.sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: 'fg::mul_out' writes into its 'out' argument, which vmap does not support; use the functional 'fg::mul' and assign its result [funcgen-out-variant]

FUNCGEN("out_variant_vmap_grad_spec = vmap(grad(out_variant_vmap_grad))")
fg::Tensor out_variant_vmap_grad(const fg::Tensor& x) {
  fg::Tensor out = fg::zeros({3});
  fg::mul_out(out, x, x);
  return out.sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: 'fg::mul_out' writes into its 'out' argument, which vmap does not support; use the functional 'fg::mul' and assign its result [funcgen-out-variant]
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: 'out_variant_vmap_grad_spec' vmaps 'grad(out_variant_vmap_grad)', which runs this code

FUNCGEN("out_variant_vmap_jacrev_spec = vmap(jacrev(out_variant_vmap_jacrev))")
fg::Tensor out_variant_vmap_jacrev(const fg::Tensor& x) {
  fg::Tensor out = fg::zeros({3});
  fg::mul_out(out, x, x);
  return out.sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: 'fg::mul_out' writes into its 'out' argument, which vmap does not support; use the functional 'fg::mul' and assign its result [funcgen-out-variant]
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: 'out_variant_vmap_jacrev_spec' vmaps 'jacrev(out_variant_vmap_jacrev)', which runs this code

FUNCGEN("out_variant_jacfwd_spec = jacfwd(out_variant_jacfwd)")
fg::Tensor out_variant_jacfwd(const fg::Tensor& x) {
  fg::Tensor out = fg::zeros({3});
  fg::mul_out(out, x, x);
  return out.sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: 'mul_out' has no derivative rule; funcgen cannot differentiate through it (templates/derivatives.def lists the ops it can) [funcgen-unsupported]

FUNCGEN("out_variant_hessian_spec = hessian(out_variant_hessian)")
fg::Tensor out_variant_hessian(const fg::Tensor& x) {
  fg::Tensor out = fg::zeros({3});
  fg::mul_out(out, x, x);
  return out.sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: 'mul_out' has no derivative rule; funcgen cannot differentiate through it (templates/derivatives.def lists the ops it can) [funcgen-unsupported]

FUNCGEN("out_variant_vmap_jvp_spec = vmap(jvp(out_variant_vmap_jvp))")
fg::Tensor out_variant_vmap_jvp(const fg::Tensor& x) {
  fg::Tensor out = fg::zeros({3});
  fg::mul_out(out, x, x);
  return out.sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:3: error: 'fg::mul_out' writes into its 'out' argument, which vmap does not support; use the functional 'fg::mul' and assign its result [funcgen-out-variant]
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: 'out_variant_vmap_jvp_spec' vmaps 'jvp(out_variant_vmap_jvp)', which runs this code

FUNCGEN("data_dependent_control_flow_vmap_spec = vmap(data_dependent_control_flow_vmap)")
fg::Tensor data_dependent_control_flow_vmap(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  if (x.sum().item<double>() > 0) y = x * x;
  return y.sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:7: error: the condition of this 'if' depends on the values of batched tensor 'x'; under vmap each example could take a different branch [funcgen-data-dependent-control-flow]
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: select per example with fg::where(condition, a, b), or let funcgen do it: vmap(..., control_flow='select')

FUNCGEN("data_dependent_control_flow_vmap_grad_spec = vmap(grad(data_dependent_control_flow_vmap_grad))")
fg::Tensor data_dependent_control_flow_vmap_grad(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  if (x.sum().item<double>() > 0) y = x * x;
  return y.sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:7: error: the condition of this 'if' depends on the values of batched tensor 'x'; under vmap each example could take a different branch [funcgen-data-dependent-control-flow]
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: select per example with fg::where(condition, a, b), or let funcgen do it: vmap(..., control_flow='select')
// CHECK: derived_checks.cpp:[[@LINE-8]]:10: note: 'data_dependent_control_flow_vmap_grad_spec' vmaps 'grad(data_dependent_control_flow_vmap_grad)', which runs this code

FUNCGEN("data_dependent_control_flow_vmap_jacrev_spec = vmap(jacrev(data_dependent_control_flow_vmap_jacrev))")
fg::Tensor data_dependent_control_flow_vmap_jacrev(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  if (x.sum().item<double>() > 0) y = x * x;
  return y.sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:7: error: the condition of this 'if' depends on the values of batched tensor 'x'; under vmap each example could take a different branch [funcgen-data-dependent-control-flow]
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: select per example with fg::where(condition, a, b), or let funcgen do it: vmap(..., control_flow='select')
// CHECK: derived_checks.cpp:[[@LINE-8]]:10: note: 'data_dependent_control_flow_vmap_jacrev_spec' vmaps 'jacrev(data_dependent_control_flow_vmap_jacrev)', which runs this code

FUNCGEN("data_dependent_control_flow_jacfwd_spec = jacfwd(data_dependent_control_flow_jacfwd)")
fg::Tensor data_dependent_control_flow_jacfwd(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  if (x.sum().item<double>() > 0) y = x * x;
  return y.sum();
}
// jacfwd and hessian batch only tangents: the function's own values are not batched

FUNCGEN("data_dependent_control_flow_hessian_spec = hessian(data_dependent_control_flow_hessian)")
fg::Tensor data_dependent_control_flow_hessian(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  if (x.sum().item<double>() > 0) y = x * x;
  return y.sum();
}
// jacfwd and hessian batch only tangents: the function's own values are not batched

FUNCGEN("data_dependent_control_flow_vmap_jvp_spec = vmap(jvp(data_dependent_control_flow_vmap_jvp))")
fg::Tensor data_dependent_control_flow_vmap_jvp(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  if (x.sum().item<double>() > 0) y = x * x;
  return y.sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:7: error: the condition of this 'if' depends on the values of batched tensor 'x'; under vmap each example could take a different branch [funcgen-data-dependent-control-flow]
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: select per example with fg::where(condition, a, b), or let funcgen do it: vmap(..., control_flow='select')
// CHECK: derived_checks.cpp:[[@LINE-8]]:10: note: 'data_dependent_control_flow_vmap_jvp_spec' vmaps 'jvp(data_dependent_control_flow_vmap_jvp)', which runs this code

FUNCGEN("item_vmap_spec = vmap(item_vmap)")
fg::Tensor item_vmap(const fg::Tensor& x) {
  double s = x.sum().item<double>();
  return (x * s).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:22: error: '.item()' reads batched tensor 'x.sum()' into a C++ value, but under vmap 'x.sum()' holds one value per example; keep it a tensor and use tensor ops [funcgen-item]

FUNCGEN("item_vmap_grad_spec = vmap(grad(item_vmap_grad))")
fg::Tensor item_vmap_grad(const fg::Tensor& x) {
  double s = x.sum().item<double>();
  return (x * s).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:22: error: '.item()' reads batched tensor 'x.sum()' into a C++ value, but under vmap 'x.sum()' holds one value per example; keep it a tensor and use tensor ops [funcgen-item]
// CHECK: derived_checks.cpp:[[@LINE-6]]:10: note: 'item_vmap_grad_spec' vmaps 'grad(item_vmap_grad)', which runs this code

FUNCGEN("item_vmap_jacrev_spec = vmap(jacrev(item_vmap_jacrev))")
fg::Tensor item_vmap_jacrev(const fg::Tensor& x) {
  double s = x.sum().item<double>();
  return (x * s).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:22: error: '.item()' reads batched tensor 'x.sum()' into a C++ value, but under vmap 'x.sum()' holds one value per example; keep it a tensor and use tensor ops [funcgen-item]
// CHECK: derived_checks.cpp:[[@LINE-6]]:10: note: 'item_vmap_jacrev_spec' vmaps 'jacrev(item_vmap_jacrev)', which runs this code

FUNCGEN("item_jacfwd_spec = jacfwd(item_jacfwd)")
fg::Tensor item_jacfwd(const fg::Tensor& x) {
  double s = x.sum().item<double>();
  return (x * s).sum();
}
// jacfwd and hessian batch only tangents: the function's own values are not batched

FUNCGEN("item_hessian_spec = hessian(item_hessian)")
fg::Tensor item_hessian(const fg::Tensor& x) {
  double s = x.sum().item<double>();
  return (x * s).sum();
}
// jacfwd and hessian batch only tangents: the function's own values are not batched

FUNCGEN("item_vmap_jvp_spec = vmap(jvp(item_vmap_jvp))")
fg::Tensor item_vmap_jvp(const fg::Tensor& x) {
  double s = x.sum().item<double>();
  return (x * s).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:22: error: '.item()' reads batched tensor 'x.sum()' into a C++ value, but under vmap 'x.sum()' holds one value per example; keep it a tensor and use tensor ops [funcgen-item]
// CHECK: derived_checks.cpp:[[@LINE-6]]:10: note: 'item_vmap_jvp_spec' vmaps 'jvp(item_vmap_jvp)', which runs this code

FUNCGEN("dynamic_shape_vmap_spec = vmap(dynamic_shape_vmap)")
fg::Tensor dynamic_shape_vmap(const fg::Tensor& x) {
  fg::Tensor nz = fg::nonzero(x);
  return x.sum() * static_cast<double>(nz.size(0));
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:19: error: 'nonzero' on batched tensor 'x' gives a shape that depends on its values, which differ per example; vmap needs every example's result to have the same shape [funcgen-dynamic-shape]
// CHECK: derived_checks.cpp:[[@LINE-4]]:19: note: use a mask with fg::where, or a fixed-size alternative

FUNCGEN("dynamic_shape_vmap_grad_spec = vmap(grad(dynamic_shape_vmap_grad))")
fg::Tensor dynamic_shape_vmap_grad(const fg::Tensor& x) {
  fg::Tensor nz = fg::nonzero(x);
  return x.sum() * static_cast<double>(nz.size(0));
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:19: error: 'nonzero' on batched tensor 'x' gives a shape that depends on its values, which differ per example; vmap needs every example's result to have the same shape [funcgen-dynamic-shape]
// CHECK: derived_checks.cpp:[[@LINE-4]]:19: note: use a mask with fg::where, or a fixed-size alternative
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: 'dynamic_shape_vmap_grad_spec' vmaps 'grad(dynamic_shape_vmap_grad)', which runs this code

FUNCGEN("dynamic_shape_vmap_jacrev_spec = vmap(jacrev(dynamic_shape_vmap_jacrev))")
fg::Tensor dynamic_shape_vmap_jacrev(const fg::Tensor& x) {
  fg::Tensor nz = fg::nonzero(x);
  return x.sum() * static_cast<double>(nz.size(0));
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:19: error: 'nonzero' on batched tensor 'x' gives a shape that depends on its values, which differ per example; vmap needs every example's result to have the same shape [funcgen-dynamic-shape]
// CHECK: derived_checks.cpp:[[@LINE-4]]:19: note: use a mask with fg::where, or a fixed-size alternative
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: 'dynamic_shape_vmap_jacrev_spec' vmaps 'jacrev(dynamic_shape_vmap_jacrev)', which runs this code

FUNCGEN("dynamic_shape_jacfwd_spec = jacfwd(dynamic_shape_jacfwd)")
fg::Tensor dynamic_shape_jacfwd(const fg::Tensor& x) {
  fg::Tensor nz = fg::nonzero(x);
  return x.sum() * static_cast<double>(nz.size(0));
}
// jacfwd and hessian batch only tangents: the function's own values are not batched

FUNCGEN("dynamic_shape_hessian_spec = hessian(dynamic_shape_hessian)")
fg::Tensor dynamic_shape_hessian(const fg::Tensor& x) {
  fg::Tensor nz = fg::nonzero(x);
  return x.sum() * static_cast<double>(nz.size(0));
}
// jacfwd and hessian batch only tangents: the function's own values are not batched

FUNCGEN("dynamic_shape_vmap_jvp_spec = vmap(jvp(dynamic_shape_vmap_jvp))")
fg::Tensor dynamic_shape_vmap_jvp(const fg::Tensor& x) {
  fg::Tensor nz = fg::nonzero(x);
  return x.sum() * static_cast<double>(nz.size(0));
}
// CHECK: derived_checks.cpp:[[@LINE-3]]:19: error: 'nonzero' on batched tensor 'x' gives a shape that depends on its values, which differ per example; vmap needs every example's result to have the same shape [funcgen-dynamic-shape]
// CHECK: derived_checks.cpp:[[@LINE-4]]:19: note: use a mask with fg::where, or a fixed-size alternative
// CHECK: derived_checks.cpp:[[@LINE-7]]:10: note: 'dynamic_shape_vmap_jvp_spec' vmaps 'jvp(dynamic_shape_vmap_jvp)', which runs this code

FUNCGEN("randomness_vmap_spec = vmap(randomness_vmap)")
fg::Tensor randomness_vmap(const fg::Tensor& x) {
  return (x * fg::rand_like(x)).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:15: error: random op 'fg::rand_like' under vmap with randomness='error'; say whether each example draws its own values (randomness='different') or the batch shares one draw (randomness='same') [funcgen-randomness]
// CHECK: derived_checks.cpp:[[@LINE-5]]:33: note: add randomness='different' for independent values per example
// CHECK: derived_checks.cpp:[[@LINE-6]]:33: note: or randomness='same' for one draw shared by the batch

FUNCGEN("randomness_vmap_grad_spec = vmap(grad(randomness_vmap_grad))")
fg::Tensor randomness_vmap_grad(const fg::Tensor& x) {
  return (x * fg::rand_like(x)).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:15: error: random op 'fg::rand_like' under vmap with randomness='error'; say whether each example draws its own values (randomness='different') or the batch shares one draw (randomness='same') [funcgen-randomness]
// CHECK: derived_checks.cpp:[[@LINE-5]]:38: note: add randomness='different' for independent values per example
// CHECK: derived_checks.cpp:[[@LINE-6]]:38: note: or randomness='same' for one draw shared by the batch

FUNCGEN("randomness_vmap_jacrev_spec = vmap(jacrev(randomness_vmap_jacrev))")
fg::Tensor randomness_vmap_jacrev(const fg::Tensor& x) {
  return (x * fg::rand_like(x)).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:15: error: random op 'fg::rand_like' under vmap with randomness='error'; say whether each example draws its own values (randomness='different') or the batch shares one draw (randomness='same') [funcgen-randomness]
// CHECK: derived_checks.cpp:[[@LINE-5]]:40: note: add randomness='different' for independent values per example
// CHECK: derived_checks.cpp:[[@LINE-6]]:40: note: or randomness='same' for one draw shared by the batch

FUNCGEN("randomness_jacfwd_spec = jacfwd(randomness_jacfwd)")
fg::Tensor randomness_jacfwd(const fg::Tensor& x) {
  return (x * fg::rand_like(x)).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:15: error: random op 'fg::rand_like' under jacfwd with randomness='error'; say whether each example draws its own values (randomness='different') or the batch shares one draw (randomness='same') [funcgen-randomness]
// CHECK: derived_checks.cpp:[[@LINE-5]]:35: note: add randomness='different' for independent values per example
// CHECK: derived_checks.cpp:[[@LINE-6]]:35: note: or randomness='same' for one draw shared by the batch

FUNCGEN("randomness_hessian_spec = hessian(randomness_hessian)")
fg::Tensor randomness_hessian(const fg::Tensor& x) {
  return (x * fg::rand_like(x)).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:15: error: random op 'fg::rand_like' under hessian, whose vmap over the basis has randomness='error' (jacfwd's default) [funcgen-randomness]
// CHECK: derived_checks.cpp:[[@LINE-5]]:36: note: hessian is jacfwd(jacrev(f)) with jacfwd's default randomness='error', as in torch.func; write jacfwd(jacrev(f), randomness='same') to choose

FUNCGEN("randomness_vmap_jvp_spec = vmap(jvp(randomness_vmap_jvp))")
fg::Tensor randomness_vmap_jvp(const fg::Tensor& x) {
  return (x * fg::rand_like(x)).sum();
}
// CHECK: derived_checks.cpp:[[@LINE-2]]:15: error: random op 'fg::rand_like' under vmap with randomness='error'; say whether each example draws its own values (randomness='different') or the batch shares one draw (randomness='same') [funcgen-randomness]
// CHECK: derived_checks.cpp:[[@LINE-5]]:37: note: add randomness='different' for independent values per example
// CHECK: derived_checks.cpp:[[@LINE-6]]:37: note: or randomness='same' for one draw shared by the batch

