// The fixed versions of the UX Limitations gallery: each example of the page rewritten so that
// funcgen transforms it without a diagnostic. tests/generator/limitations checks their numbers.
// EXIT: 0
#include <funcgen/funcgen.h>

#include <tuple>

// ---- global assignment
// Do this: return `intermediate` as an extra output.
FUNCGEN("batched_sin_sin = vmap(sin_sin)")
std::tuple<fg::Tensor, fg::Tensor> sin_sin(const fg::Tensor& x) {
  fg::Tensor intermediate = x.sin();
  fg::Tensor z = intermediate.sin();
  return {z, intermediate};
}

// ---- side effect
// Pure: the side effects happen outside the transformed function.
FUNCGEN("batched_pure = vmap(pure)")
fg::Tensor pure(const fg::Tensor& x) { return x.sum(0); }

// ---- inplace batched
// new_zeros of a batched tensor is batched: this works.
FUNCGEN("batched_diag_embed_fixed = vmap(diag_embed_fixed)")
fg::Tensor diag_embed_fixed(const fg::Tensor& vec) {
  fg::Tensor result = vec.new_zeros({vec.size(0), vec.size(0)});
  result.diagonal().copy_(vec);
  return result;
}
// batch_norm without running statistics (replace_all_batch_norm_modules_'s fix): each example's
// own statistics, nothing written in place.
FUNCGEN("batched_norm_fixed = vmap(norm_fixed)")
fg::Tensor norm_fixed(const fg::Tensor& x) { return fg::batch_norm(x, {}, {}, {}, {}, true); }

// ---- out variant
FUNCGEN("batched_plus = vmap(plus)")
fg::Tensor plus(const fg::Tensor& x, const fg::Tensor& y) {
  fg::Tensor out = fg::add(x, y);
  return out;
}

// ---- data dependent control flow
// The same function without a branch: selects per example.
FUNCGEN("batched_relu_fixed = vmap(relu_fixed)")
fg::Tensor relu_fixed(const fg::Tensor& x) { return fg::where(x > 0, x, fg::zeros_like(x)); }

// Beyond torch.func: the page's relu, branch and all, with control_flow='select': funcgen runs both
// sides and picks each example's with fg::where.
FUNCGEN("batched_relu_select = vmap(relu_branchy, control_flow='select')")
fg::Tensor relu_branchy(const fg::Tensor& x) {
  if ((x > 0).item<bool>()) {
    return x;
  }
  return fg::zeros_like(x);
}

// A data-dependent if/else that assigns, and a data-dependent while loop: the loop runs until no
// example is active, finished examples keep their values (JAX's batched while_loop).
FUNCGEN("batched_clip_or_double = vmap(clip_or_double, control_flow='select')")
fg::Tensor clip_or_double(const fg::Tensor& x) {
  fg::Tensor y = x;
  if (x.sum().item<double>() > 0) {
    y = x.clamp(-1, 1);
  } else {
    y = x * 2;
  }
  return y;
}

FUNCGEN("batched_halve = vmap(halve_until_small, in_dims=(0, None), control_flow='select')")
fg::Tensor halve_until_small(const fg::Tensor& x, double limit) {
  fg::Tensor y = x;
  while (y.abs().amax().item<double>() > limit) {
    y = y / 2;
  }
  return y;
}

// Control flow on the shape: fine.
FUNCGEN("batched_custom_dot = vmap(custom_dot)")
fg::Tensor custom_dot(const fg::Tensor& x) {
  if (x.dim() == 1) {
    return fg::dot(x, x);
  }
  return (x * x).sum();
}

// ---- item
FUNCGEN("batched_twice = vmap(twice)")
fg::Tensor twice(const fg::Tensor& x) { return x * 2; }

// ---- dynamic shape
// A fixed-size alternative: a mask of the nonzero entries.
FUNCGEN("batched_nonzero_mask = vmap(nonzero_mask)")
fg::Tensor nonzero_mask(const fg::Tensor& x) { return fg::ne(x, 0); }
