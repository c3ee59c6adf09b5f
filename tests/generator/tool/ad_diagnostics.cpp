// What AD cannot differentiate is an error at the construct, never silently wrong code: specs that
// cannot apply are funcgen-spec errors when the specs are read, constructs in the function body
// funcgen-unsupported errors.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("aux_grad = grad(one_output, has_aux=True)")
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:21: error: grad(..., has_aux=True) needs 'one_output' to return std::tuple<fg::Tensor, aux...> [funcgen-spec]
fg::Tensor one_output(const fg::Tensor& x) { return x.sum(); }

// A user's rule must have the shape its kind says; forward mode needs a custom_jvp.
fg::Tensor doubled(const fg::Tensor& x) { return x * 2; }
FUNCGEN("custom_vjp(doubled)")
fg::Tensor doubled_rule(const fg::Tensor& x, const fg::Tensor& grad) { return grad * 2; }
// CHECK: ad_diagnostics.cpp:[[@LINE-2]]:10: error: the custom_vjp rule 'doubled_rule' of 'doubled' must take (doubled's parameters, result, grad) and return the gradient of 'x' (fg::Tensor) [funcgen-spec]
FUNCGEN("custom_vjp(doubled)")
fg::Tensor doubled_vjp(const fg::Tensor& x, const fg::Tensor& result, const fg::Tensor& grad) { return grad * 2; }
FUNCGEN("custom_jvp(undefined_function)")
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:21: error: unknown function 'undefined_function'; a rule names a function defined earlier in this file [funcgen-spec]
fg::Tensor orphan_rule(const fg::Tensor& x, const fg::Tensor& t) { return t; }

FUNCGEN("vmapped_vjp = vmap(vjp(scaled))")
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:24: error: vmap cannot transform 'vjp(scaled)', which returns a function (as vjp and linearize do); transform the original function instead [funcgen-spec]
FUNCGEN("grad_of_vjp = grad(vjp(scaled))")
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:24: error: grad cannot transform 'vjp(scaled)', which returns a function (as vjp and linearize do); transform the original function instead [funcgen-spec]
fg::Tensor scaled(const fg::Tensor& x) { return x * 2; }

FUNCGEN("doubled_jvp = jvp(uses_doubled)")
fg::Tensor uses_doubled(const fg::Tensor& x) { return doubled(x).sin(); }
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:55: error: 'doubled' has a custom_vjp rule but no custom_jvp; forward mode (jvp, jacfwd, hessian) needs a custom_jvp rule for it [funcgen-unsupported]

// Branches and loops are differentiated (test_control_flow.cpp); what they may not do is here.

// A `?:` of tensors is differentiated as an if/else (test_constructs.cpp: behind && and ||, in a
// loop's condition too), except where it is written to.
FUNCGEN("written_choice_grad = grad(written_choice)")
fg::Tensor written_choice(const fg::Tensor& x, bool c) {
  fg::Tensor a = x * 2, b = x * 3;
  (c ? a : b).add_(x);
  return (a * b).sum();
}
// CHECK: ad_diagnostics.cpp:[[@LINE-3]]:4: error: a '?:' that chooses between tensors where it is written to, or inside a side of a '?:' on numbers, cannot be differentiated yet; use an if/else instead [funcgen-unsupported]

FUNCGEN("maybe_unset_grad = grad(maybe_unset)")
fg::Tensor maybe_unset(const fg::Tensor& x) {
  fg::Tensor y;
  return (y * x).sum();
}
// CHECK: ad_diagnostics.cpp:[[@LINE-2]]:11: error: 'y' may be read before it has a value here (not every path gives it one); initialize it where it is declared [funcgen-unsupported]

FUNCGEN("no_rule_grad = grad(no_rule)")
fg::Tensor no_rule(const fg::Tensor& x) { return fg::masked_select(x, x > 0).sin(); }
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:50: error: 'masked_select' has no derivative rule; funcgen cannot differentiate through it (templates/derivatives.def lists the ops it can) [funcgen-unsupported]

fg::Tensor external_op(const fg::Tensor& x);
FUNCGEN("external_grad = grad(uses_external)")
fg::Tensor uses_external(const fg::Tensor& x) { return external_op(x).sum(); }
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:56: error: calls of 'external_op' cannot be differentiated: funcgen sees only fg ops and functions whose body is in this file or a header it includes, and this one is only declared; define it there, or give it a reverse rule: a function annotated FUNCGEN("custom_vjp(external_op)") [funcgen-unsupported]

FUNCGEN("merged_view_write_grad = grad(merged_view_write)")
fg::Tensor merged_view_write(const fg::Tensor& x, bool second) {
  fg::Tensor y = x * 2;
  fg::Tensor row = y.select(0, 0);
  if (second) row = y.select(0, 1);
  row.mul_(3);
  return y.sum();
}
// CHECK: ad_diagnostics.cpp:[[@LINE-3]]:3: error: in-place 'mul_' writes into 'row', a view that an 'if' or a loop carried, which cannot be differentiated yet; take the view where it is written [funcgen-unsupported]

// Randomness: torch.func's jacfwd (and so hessian) vmaps the function's forward pass with
// randomness='error' by default, as does a vmap around grad; jacrev vmaps only derivative code.
FUNCGEN("noisy_jacfwd = jacfwd(noisy)")
FUNCGEN("noisy_jacrev = jacrev(noisy)")
FUNCGEN("noisy_jacfwd_same = jacfwd(noisy, randomness='same')")
fg::Tensor noisy(const fg::Tensor& x) { return x.sin() * fg::rand_like(x); }
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:58: error: random op 'fg::rand_like' under jacfwd with randomness='error'; say whether each example draws its own values (randomness='different') or the batch shares one draw (randomness='same') [funcgen-randomness]
// CHECK: ad_diagnostics.cpp:[[@LINE-5]]:25: note: add randomness='different' for independent values per example
// CHECK: ad_diagnostics.cpp:[[@LINE-6]]:25: note: or randomness='same' for one draw shared by the batch
// Once per construct: these reach the op above again, and fail without repeating it.
FUNCGEN("noisy_hessian_again = hessian(noisy_sum)")
FUNCGEN("noisy_per_sample_again = vmap(grad(noisy_sum))")
fg::Tensor noisy_sum(const fg::Tensor& x) { return noisy(x).sum(); }
FUNCGEN("noisy_hessian = hessian(noisy_total)")
fg::Tensor noisy_total(const fg::Tensor& x) { return (x.sin() * fg::rand_like(x)).sum(); }
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:65: error: random op 'fg::rand_like' under hessian, whose vmap over the basis has randomness='error' (jacfwd's default) [funcgen-randomness]
// CHECK: ad_diagnostics.cpp:[[@LINE-3]]:26: note: hessian is jacfwd(jacrev(f)) with jacfwd's default randomness='error', as in torch.func; write jacfwd(jacrev(f), randomness='same') to choose
FUNCGEN("noisy_per_sample = vmap(grad(noisy_mean))")
fg::Tensor noisy_mean(const fg::Tensor& x) { return (x.cos() * fg::rand_like(x)).mean(); }
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:64: error: random op 'fg::rand_like' under vmap with randomness='error'; say whether each example draws its own values (randomness='different') or the batch shares one draw (randomness='same') [funcgen-randomness]
// CHECK: ad_diagnostics.cpp:[[@LINE-3]]:29: note: add randomness='different' for independent values per example
// CHECK: ad_diagnostics.cpp:[[@LINE-4]]:29: note: or randomness='same' for one draw shared by the batch

FUNCGEN("middle_ellipsis_grad = grad(middle_ellipsis)")
fg::Tensor middle_ellipsis(const fg::Tensor& x) { return fg::einsum("i...j->ij", {x}).sum(); }
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:58: error: einsum cannot be differentiated here: an operand with indices before its '...' whose gradient lacks some of its dims ('...' summed away or an index of its own) cannot be differentiated yet; put '...' first [funcgen-unsupported]

// A write into an expanded view overlaps itself (the runtime refuses it, as PyTorch does).
FUNCGEN("broadcast_write_grad = grad(broadcast_write)")
fg::Tensor broadcast_write(const fg::Tensor& x) {
  fg::Tensor y = fg::broadcast_to(x * 2.0, {3, 2});
  y.add_(1.0);
// CHECK: ad_diagnostics.cpp:[[@LINE-1]]:3: error: in-place 'add_' writes into a view made by 'broadcast_to', which cannot be differentiated; clone() the view first [funcgen-unsupported]
  return y.sum();
}

FUNCGEN("tripled_once = vjp(vmap(tripled, out_dims=None))")
fg::Tensor tripled(const fg::Tensor& x) { return x * 3; }
// CHECK: ad_diagnostics.cpp:[[@LINE-2]]:52: error: out_dims is None for output 0, but 'tripled' returns it batched at this vmap level; give it an out_dim or return a value that does not depend on the mapped inputs [funcgen-spec]
