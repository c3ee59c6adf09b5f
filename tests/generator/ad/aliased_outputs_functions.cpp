// Functions whose outputs are one tensor more than once: the same variable returned twice, an
// input returned, a copy and a view of a value returned beside it, a structure holding one tensor
// in two leaves, an aux that is the output, and helpers that return one value twice. The reverse
// modes must give each such value the sum of its outputs' cotangents (issue 42);
// test_aliased_outputs.cpp checks every transform against finite differences in float64.
#include <funcgen/funcgen.h>

#include <tuple>

#include "aliased_outputs.h"

namespace ao {

// ---- an input returned twice
FUNCGEN("dup_vjp = vjp(dup)")
FUNCGEN("dup_jacrev = jacrev(dup)")
FUNCGEN("dup_jvp = jvp(dup)")
FUNCGEN("dup_jacfwd = jacfwd(dup)")
std::tuple<fg::Tensor, fg::Tensor> dup(const fg::Tensor& x) { return {x, x}; }

// ---- a computed value returned twice
FUNCGEN("dups_vjp = vjp(dups)")
FUNCGEN("dups_jacrev = jacrev(dups)")
FUNCGEN("dups_jvp = jvp(dups)")
FUNCGEN("dups_jacfwd = jacfwd(dups)")
FUNCGEN("dups_vjp_of_vmap = vjp(vmap(dups))")
FUNCGEN("dups_vjacrev = vmap(jacrev(dups))")
std::tuple<fg::Tensor, fg::Tensor> dups(const fg::Tensor& x) {
  fg::Tensor s = x.sin();
  return {s, s};
}

// ---- an input and its copy, a value and a view of it
FUNCGEN("aliases_vjp = vjp(aliases)")
FUNCGEN("aliases_jacrev = jacrev(aliases)")
FUNCGEN("aliases_jvp = jvp(aliases)")
FUNCGEN("aliases_jacfwd = jacfwd(aliases)")
std::tuple<fg::Tensor, fg::Tensor, fg::Tensor, fg::Tensor> aliases(const fg::Tensor& x) {
  fg::Tensor y = x;
  fg::Tensor s = x.tanh() * x;
  fg::Tensor v = s.t();
  return {x, y, v, s};
}

// ---- a structure holding one tensor in both leaves
FUNCGEN("both_vjp = vjp(both)")
FUNCGEN("both_jvp = jvp(both)")
Both both(const fg::Tensor& x) {
  fg::Tensor s = x.exp() * 0.5;
  return Both{s, s};
}

// ---- has_aux: the output is also the aux
FUNCGEN("aux_vjp = vjp(with_aux, has_aux=True)")
std::tuple<fg::Tensor, fg::Tensor> with_aux(const fg::Tensor& x) {
  fg::Tensor s = x.sin() * x;
  return {s, s};
}

// ---- a helper that returns one value twice, under grad, hessian and vmap(grad)
static std::tuple<fg::Tensor, fg::Tensor> twice(const fg::Tensor& x) {
  fg::Tensor s = x.sin();
  return {s, s};
}

FUNCGEN("helper_grad = grad(through_helper)")
FUNCGEN("helper_hessian = hessian(through_helper)")
FUNCGEN("helper_psg = vmap(grad(through_helper))")
fg::Tensor through_helper(const fg::Tensor& x) {
  auto [a, b] = twice(x);
  return (a * b.exp()).sum();
}

// ---- the vjp of dups batched over cotangents: vmap(grad(<dups(x), ct>))
FUNCGEN("dot_dups_batched = vmap(grad(dot_dups), in_dims=(None, 0, 0))")
fg::Tensor dot_dups(const fg::Tensor& x, const fg::Tensor& ct1, const fg::Tensor& ct2) {
  auto [a, b] = dups(x);
  return (a * ct1).sum() + (b * ct2).sum();
}

}  // namespace ao
