// Recursion whose depth is a compile-time constant at the call: a helper that calls itself with
// an integer one less (through ?:, an if that returns, or a switch), two helpers that call each
// other, a helper that calls itself twice (each level is met many times), one passed a structure,
// and template recursion ended by `if constexpr`. funcgen unfolds them level by level;
// test_constructs.cpp runs every transform of each against finite differences and the loop of
// unbatched calls.
#include <funcgen/funcgen.h>

namespace cs {

// ---- direct recursion, ended by ?: on the depth
fg::Tensor rec_shrink(const fg::Tensor& x, int n) { return n == 0 ? x.tanh() : rec_shrink(x.sin() * 1.2, n - 1) * x; }

FUNCGEN("recursion_conditional_grad = grad(recursion_conditional)")
FUNCGEN("recursion_conditional_jvp = jvp(recursion_conditional)")
FUNCGEN("recursion_conditional_jacfwd = jacfwd(recursion_conditional)")
FUNCGEN("recursion_conditional_hessian = hessian(recursion_conditional)")
FUNCGEN("recursion_conditional_jacrev2 = jacrev(jacrev(recursion_conditional))")
FUNCGEN("recursion_conditional_hvp = jvp(grad(recursion_conditional))")
FUNCGEN("recursion_conditional_vmap = vmap(recursion_conditional)")
FUNCGEN("recursion_conditional_psg = vmap(grad(recursion_conditional))")
FUNCGEN("recursion_conditional_vjacrev = vmap(jacrev(recursion_conditional))")
fg::Tensor recursion_conditional(const fg::Tensor& x) { return (rec_shrink(x, 3) * x).sum(); }

// ---- direct recursion, ended by an if that returns; the next depth in a constant local
fg::Tensor rec_layers(const fg::Tensor& x, int depth) {
  if (depth <= 0) return x.exp() * 0.5;
  const int next = depth - 1;
  const fg::Tensor inner = rec_layers(x * 0.8 + 0.1, next);
  return inner * x + inner.sin() * 0.5;
}

constexpr int kLayers = 4;

FUNCGEN("recursion_if_grad = grad(recursion_if)")
FUNCGEN("recursion_if_jvp = jvp(recursion_if)")
FUNCGEN("recursion_if_jacfwd = jacfwd(recursion_if)")
FUNCGEN("recursion_if_hessian = hessian(recursion_if)")
FUNCGEN("recursion_if_jacrev2 = jacrev(jacrev(recursion_if))")
FUNCGEN("recursion_if_hvp = jvp(grad(recursion_if))")
FUNCGEN("recursion_if_vmap = vmap(recursion_if)")
FUNCGEN("recursion_if_psg = vmap(grad(recursion_if))")
FUNCGEN("recursion_if_vjacrev = vmap(jacrev(recursion_if))")
fg::Tensor recursion_if(const fg::Tensor& x) { return (rec_layers(x, kLayers) + rec_layers(x.cos(), 1)).sum(); }

// ---- mutual recursion: each helper calls the other one level down
fg::Tensor rec_odd(const fg::Tensor& x, int n);
fg::Tensor rec_even(const fg::Tensor& x, int n) { return n == 0 ? x : rec_odd(x.sin(), n - 1) * 1.5; }
fg::Tensor rec_odd(const fg::Tensor& x, int n) {
  if (n == 0) return x.exp();
  return rec_even(x * x * 0.5, n - 1) + x;
}

FUNCGEN("recursion_mutual_grad = grad(recursion_mutual)")
FUNCGEN("recursion_mutual_jvp = jvp(recursion_mutual)")
FUNCGEN("recursion_mutual_jacfwd = jacfwd(recursion_mutual)")
FUNCGEN("recursion_mutual_hessian = hessian(recursion_mutual)")
FUNCGEN("recursion_mutual_jacrev2 = jacrev(jacrev(recursion_mutual))")
FUNCGEN("recursion_mutual_hvp = jvp(grad(recursion_mutual))")
FUNCGEN("recursion_mutual_vmap = vmap(recursion_mutual)")
FUNCGEN("recursion_mutual_psg = vmap(grad(recursion_mutual))")
FUNCGEN("recursion_mutual_vjacrev = vmap(jacrev(recursion_mutual))")
fg::Tensor recursion_mutual(const fg::Tensor& x) { return (rec_even(x, 5) * x).sum(); }

// ---- a helper that calls itself twice: the levels below are met more than once
fg::Tensor rec_tree(const fg::Tensor& x, int n) {
  if (n < 2) return x * double(n + 1);
  return rec_tree(x.sin(), n - 1) + rec_tree(x * 0.5, n - 2);
}

FUNCGEN("recursion_tree_grad = grad(recursion_tree)")
FUNCGEN("recursion_tree_jvp = jvp(recursion_tree)")
FUNCGEN("recursion_tree_jacfwd = jacfwd(recursion_tree)")
FUNCGEN("recursion_tree_hessian = hessian(recursion_tree)")
FUNCGEN("recursion_tree_jacrev2 = jacrev(jacrev(recursion_tree))")
FUNCGEN("recursion_tree_hvp = jvp(grad(recursion_tree))")
FUNCGEN("recursion_tree_vmap = vmap(recursion_tree)")
FUNCGEN("recursion_tree_psg = vmap(grad(recursion_tree))")
FUNCGEN("recursion_tree_vjacrev = vmap(jacrev(recursion_tree))")
fg::Tensor recursion_tree(const fg::Tensor& x) { return (rec_tree(x, 4) * x).sum(); }

// ---- a structure passed down the recursion (its tensors as the leaves of each level)
struct RecLayer {
  fg::Tensor w;
  fg::Tensor b;
};
fg::Tensor rec_apply(const RecLayer& l, const fg::Tensor& h, int n) {
  return n == 0 ? h : rec_apply(l, (h * l.w + l.b).tanh(), n - 1);
}

FUNCGEN("recursion_structured_grad = grad(recursion_structured)")
FUNCGEN("recursion_structured_jvp = jvp(recursion_structured)")
FUNCGEN("recursion_structured_jacfwd = jacfwd(recursion_structured)")
FUNCGEN("recursion_structured_hessian = hessian(recursion_structured)")
FUNCGEN("recursion_structured_jacrev2 = jacrev(jacrev(recursion_structured))")
FUNCGEN("recursion_structured_hvp = jvp(grad(recursion_structured))")
FUNCGEN("recursion_structured_vmap = vmap(recursion_structured)")
FUNCGEN("recursion_structured_psg = vmap(grad(recursion_structured))")
FUNCGEN("recursion_structured_vjacrev = vmap(jacrev(recursion_structured))")
fg::Tensor recursion_structured(const fg::Tensor& x) {
  const RecLayer l{x.sin(), x * 0.3};
  return (rec_apply(l, x, 3) * x).sum();
}

// ---- a switch on the depth: the case its value selects, falling through to the next
fg::Tensor rec_cases(const fg::Tensor& x, int n) {
  switch (n) {
    case 0:
      return x.sigmoid();
    case 1:
    case 2: {
      const fg::Tensor y = x * 0.7;
      return rec_cases(y.cos(), n - 1) + y;
    }
    default:
      break;
  }
  return rec_cases(x * x * 0.25, n - 2) * 0.5;
}

FUNCGEN("recursion_switch_grad = grad(recursion_switch)")
FUNCGEN("recursion_switch_jvp = jvp(recursion_switch)")
FUNCGEN("recursion_switch_jacfwd = jacfwd(recursion_switch)")
FUNCGEN("recursion_switch_hessian = hessian(recursion_switch)")
FUNCGEN("recursion_switch_jacrev2 = jacrev(jacrev(recursion_switch))")
FUNCGEN("recursion_switch_hvp = jvp(grad(recursion_switch))")
FUNCGEN("recursion_switch_vmap = vmap(recursion_switch)")
FUNCGEN("recursion_switch_psg = vmap(grad(recursion_switch))")
FUNCGEN("recursion_switch_vjacrev = vmap(jacrev(recursion_switch))")
fg::Tensor recursion_switch(const fg::Tensor& x) { return (rec_cases(x, 5) * x).sum(); }

// ---- template recursion, ended by if constexpr (each instance is a function of its own)
template <int N>
fg::Tensor rec_power(const fg::Tensor& x) {
  if constexpr (N == 0)
    return fg::ones_like(x);
  else
    return x * rec_power<N - 1>(x);
}

FUNCGEN("recursion_template_grad = grad(recursion_template)")
FUNCGEN("recursion_template_jvp = jvp(recursion_template)")
FUNCGEN("recursion_template_jacfwd = jacfwd(recursion_template)")
FUNCGEN("recursion_template_hessian = hessian(recursion_template)")
FUNCGEN("recursion_template_jacrev2 = jacrev(jacrev(recursion_template))")
FUNCGEN("recursion_template_hvp = jvp(grad(recursion_template))")
FUNCGEN("recursion_template_vmap = vmap(recursion_template)")
FUNCGEN("recursion_template_psg = vmap(grad(recursion_template))")
FUNCGEN("recursion_template_vjacrev = vmap(jacrev(recursion_template))")
fg::Tensor recursion_template(const fg::Tensor& x) { return (rec_power<3>(x) + rec_power<1>(x.sin())).sum(); }

}  // namespace cs
