// vmap's own diagnostics: the per-example fallback warning, constructs that cannot be transformed,
// out_dims=None on a batched output, and NOLINT.
// EXIT: 1
#include <funcgen/funcgen.h>

// (Spec errors are reported first, when the specs are read; the others follow in spec order.)
FUNCGEN("nothing_mapped = vmap(same_value, in_dims=None)")
// CHECK: vmap_diagnostics.cpp:[[@LINE-1]]:52: error: vmap needs at least one mapped tensor argument, but in_dims maps none of 'same_value' [funcgen-spec]
FUNCGEN("unmapped_output = vmap(same_value, out_dims=None)")
// CHECK: vmap_diagnostics.cpp:[[@LINE-1]]:54: error: out_dims is None for output 0, but 'same_value' returns it batched at this vmap level; give it an out_dim or return a value that does not depend on the mapped inputs [funcgen-spec]
fg::Tensor same_value(const fg::Tensor& x) { return x * 2; }

// A function of another library: no batching rule, so vmap loops over the examples.
fg::Tensor external_op(const fg::Tensor& x);

FUNCGEN("batched_uses_external = vmap(uses_external)")
fg::Tensor uses_external(const fg::Tensor& x) { return external_op(x.sin()) + 1; }
// CHECK: vmap_diagnostics.cpp:[[@LINE-1]]:56: warning: 'external_op' has no batching rule; under vmap it runs once per example and the results are stacked [funcgen-vmap-fallback]

FUNCGEN("batched_scatter = vmap(scatter_in_place, in_dims=(0, None, 0))")
fg::Tensor scatter_in_place(const fg::Tensor& x, const fg::Tensor& index, const fg::Tensor& src) {
  fg::Tensor y = x.clone();
  y.scatter_add_(0, index, src);
// CHECK: vmap_diagnostics.cpp:[[@LINE-1]]:3: error: in-place 'scatter_add_' has no batching rule, and the per-example fallback cannot write in place; use its out-of-place form [funcgen-unsupported]
  return y;
}

FUNCGEN("batched_recursive = vmap(recursive, in_dims=(0, None))")
fg::Tensor recursive(const fg::Tensor& x, int n) { return n == 0 ? x : recursive(x.sin(), n - 1); }
// CHECK: vmap_diagnostics.cpp:[[@LINE-1]]:72: error: 'recursive' calls itself (directly or through helpers); recursion is vmapped only where its depth is a compile-time constant at each call (a literal, or a parameter that is one, minus a literal: f(x, n - 1)), at most 64 levels deep; write it as a loop otherwise [funcgen-unsupported]


FUNCGEN("silenced = vmap(reads_item)")
fg::Tensor reads_item(const fg::Tensor& x) {
  const double v = x.sum().item<double>();  // NOLINT(funcgen-item)
  return x * v;
}

// A result of nested tuples (the gradients of two arguments, then the value) is vmapped leaf by
// leaf; out_dims still names the outputs of the spec.
FUNCGEN("nested_none = vmap(grad_and_value(pair_loss, argnums=(0, 1)), out_dims=(None, 0))")
// CHECK: vmap_diagnostics.cpp:[[@LINE-1]]:82: error: out_dims is None for output 0, but 'pair_loss' returns it batched at this vmap level; give it an out_dim or return a value that does not depend on the mapped inputs [funcgen-spec]
// CHECK-NOT: out_dims is None for output
fg::Tensor pair_loss(const fg::Tensor& a, const fg::Tensor& b) { return (a * b.sin()).sum(); }
