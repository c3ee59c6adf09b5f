// Functions with control flow for the AD tests (test_control_flow.cpp): branches on scalars and on
// tensor values, a switch, loops whose trip count is known only at run time (a recurrent net's
// time loop, a while loop that stops on a tensor's value), a branch inside a loop, nested loops.
#include <funcgen/funcgen.h>

namespace cf {

FUNCGEN("branchy_grad = grad(branchy, argnums=(0, 1))")
FUNCGEN("branchy_jvp = jvp(branchy)")
FUNCGEN("branchy_hessian = hessian(branchy)")
FUNCGEN("branchy_per_sample = vmap(grad(branchy), in_dims=(0, None, None))")
fg::Tensor branchy(const fg::Tensor& x, const fg::Tensor& w, bool scale) {
  fg::Tensor y = x * w;
  if (scale) {
    y = y.sin() * 2;
  } else {
    fg::Tensor squared = y * y;
    y = squared.tanh() * 3 - y;
  }
  return y.sum();
}

FUNCGEN("branchy_second = grad(grad(branchy_scalar))")
fg::Tensor branchy_scalar(const fg::Tensor& x, bool odd) {
  fg::Tensor y;
  if (odd) {
    y = x * x * x;
  } else {
    y = (x * x).sin();
  }
  return y.sum();
}

// The branch taken depends on the values: each call differentiates the path it took.
FUNCGEN("data_branch_grad = grad(data_branch)")
FUNCGEN("data_branch_jvp = jvp(data_branch)")
fg::Tensor data_branch(const fg::Tensor& x) {
  fg::Tensor y;
  if (x.sum().item<double>() > 0) {
    y = x.tanh();
  } else {
    y = x * x * 0.5;
  }
  return (y * x).sum();
}

FUNCGEN("activation_jacrev = jacrev(activation)")
FUNCGEN("activation_jacfwd = jacfwd(activation)")
fg::Tensor activation(const fg::Tensor& x, int kind) {
  fg::Tensor y = x;
  switch (kind) {
    case 0:
      y = x.sigmoid();
      break;
    case 1:
    case 2:
      y = (x * kind).tanh();
      break;
    default:
      y = x.exp();
  }
  return y;
}
FUNCGEN("activation_grad = grad(activation_sum)")
fg::Tensor activation_sum(const fg::Tensor& x, int kind) { return (activation(x, kind) * x).sum(); }

// A recurrent net: h_{t+1} = tanh(W h_t + U x_t), for as many steps as xs has rows.
FUNCGEN("rnn_vjp = vjp(rnn_state)")
FUNCGEN("rnn_jacrev = jacrev(rnn_state, argnums=(0, 1))")
FUNCGEN("rnn_jacfwd = jacfwd(rnn_state, argnums=(0, 1))")
FUNCGEN("rnn_state_jacrev_h0 = jacrev(rnn_state, argnums=3)")
FUNCGEN("rnn_state_jacrev2 = jacrev(jacrev(rnn_state, argnums=3), argnums=(1, 3))")
fg::Tensor rnn_state(const fg::Tensor& xs, const fg::Tensor& w, const fg::Tensor& u, const fg::Tensor& h0) {
  fg::Tensor h = h0;
  for (int64_t t = 0; t < xs.size(0); ++t) {
    h = (fg::mv(w, h) + fg::mv(u, xs.select(0, t))).tanh();
  }
  return h;
}
FUNCGEN("rnn_grad = grad(rnn, argnums=(0, 1, 2, 3))")
FUNCGEN("rnn_jvp = jvp(rnn)")
FUNCGEN("rnn_linearize = linearize(rnn)")
FUNCGEN("rnn_hessian = hessian(rnn, argnums=3)")
FUNCGEN("rnn_hessian_w_h0 = hessian(rnn, argnums=(1, 3))")
FUNCGEN("rnn_hvp = jvp(grad(rnn, argnums=1))")
FUNCGEN("rnn_grad_vjp = vjp(grad(rnn, argnums=1))")
FUNCGEN("rnn_hessian_rev = jacrev(jacrev(rnn, argnums=3), argnums=3)")
// Third order: derivatives of the reverse pass's reverse (its tapes of gradients) in both modes.
FUNCGEN("rnn_third_rev = jacrev(jacrev(jacrev(rnn, argnums=3), argnums=3), argnums=3)")
FUNCGEN("rnn_third_fwd = jacfwd(jacrev(jacrev(rnn, argnums=3), argnums=3), argnums=3)")
FUNCGEN("rnn_hvp_per_sample = vmap(jvp(grad(rnn, argnums=1)), in_dims=(0, None, None, None, None, None, None, None))")
FUNCGEN("rnn_per_sample = vmap(grad(rnn, argnums=(1, 2)), in_dims=(0, None, None, None))")
fg::Tensor rnn(const fg::Tensor& xs, const fg::Tensor& w, const fg::Tensor& u, const fg::Tensor& h0) {
  return (rnn_state(xs, w, u, h0) * fg::arange(1, h0.size(0) + 1, fg::kDouble)).sum();
}

// Halves until small: the number of trips depends on the values.
FUNCGEN("halve_grad = grad(halve)")
FUNCGEN("halve_jvp = jvp(halve)")
FUNCGEN("halve_hessian = hessian(halve)")
fg::Tensor halve(const fg::Tensor& x, double limit) {
  fg::Tensor y = x.sin() + 2;
  bool big = y.abs().sum().item<double>() > limit;
  while (big) {
    y = y * 0.5 + y.sin() * 0.1;
    big = y.abs().sum().item<double>() > limit;
  }
  return (y * y).sum();
}

// The same as users write it: loop conditions that compute tensors (evaluated as often as C++
// evaluates them, after the step), a step that computes one, a do-while whose condition chooses a
// tensor with `?:` (tested after a continue too), a guard before an index behind `&&` (x[i] is read
// only while i < x.size(0)), a lambda of the current values in a condition, and a count on values
// behind a `?:` of numbers (x[n] is never read).
FUNCGEN("converge_grad = grad(converge)")
FUNCGEN("converge_jvp = jvp(converge)")
FUNCGEN("converge_hessian = hessian(converge)")
FUNCGEN("converge_jacrev2 = jacrev(jacrev(converge))")
fg::Tensor converge(const fg::Tensor& x, double limit) {
  fg::Tensor y = x.sin() + 2;
  int trips = 0;
  while (y.abs().sum().item<double>() > limit && trips < 40) {
    y = y * 0.5 + y.sin() * 0.1;
    ++trips;
  }
  fg::Tensor z = y;
  for (int64_t i = 0; i < x.size(0) && x[i].item<double>() > -1.5; ++i, z = z * 0.95) z = z + x[i] * z.cos();
  int k = 0;
  do {
    ++k;
    if (k % 3 == 0) continue;  // the condition is still tested
    z = z * 0.9 + y * 0.05;
  } while (((k % 2 == 1 ? z : z * 1.05).abs().max() > limit).item<bool>() && k < 20);
  auto spread = [&] { return (z.max() - z.min()).item<double>(); };
  int halvings = 0;
  while (spread() > 0.01 && halvings < 8) {  // a lambda on the current z
    z = z * 0.5 + z.mean() * 0.5;
    ++halvings;
  }
  const int64_t n = x.size(0);
  int above = 0;  // counted on values only: no gradient flows through the loop
  for (int64_t i = 0; i <= n; ++i) above += (i < n ? x[i].item<double>() : 0.0) > 0.0 ? 1 : 0;
  return (z * z).sum() + y.sum() * (1.0 + 0.1 * above);
}

// A branch inside a loop, on the loop's counter; the counter also scales a term.
FUNCGEN("loop_branch_grad = grad(loop_branch, argnums=(0, 1))")
FUNCGEN("loop_branch_jvp = jvp(loop_branch)")
FUNCGEN("loop_branch_hessian = hessian(loop_branch, argnums=(0, 1))")
FUNCGEN("loop_branch_jacrev2 = jacrev(jacrev(loop_branch, argnums=(0, 1)), argnums=1)")
FUNCGEN("loop_branch_hessian_w = jacrev(jacrev(loop_branch, argnums=1), argnums=1)")
FUNCGEN("loop_branch_third_rev = jacrev(loop_branch_hessian_w, argnums=1)")
FUNCGEN("loop_branch_third_fwd = jacfwd(loop_branch_hessian_w, argnums=1)")
FUNCGEN("loop_branch_grad2 = grad(grad(loop_branch, argnums=1), argnums=1)")
FUNCGEN("loop_branch_grad3 = grad(grad(grad(loop_branch, argnums=1), argnums=1), argnums=1)")
FUNCGEN("loop_branch_grad4 = grad(grad(grad(grad(loop_branch, argnums=1), argnums=1), argnums=1), argnums=1)")
fg::Tensor loop_branch(const fg::Tensor& x, const fg::Tensor& w, int n) {
  fg::Tensor h = x;
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      h = (h * w).sin();
    } else {
      h = h + w * i;
    }
  }
  return (h * h).sum();
}

FUNCGEN("nested_grad = grad(nested)")
FUNCGEN("nested_jvp = jvp(nested)")
FUNCGEN("nested_hessian = hessian(nested)")
FUNCGEN("nested_jacrev2 = jacrev(jacrev(nested))")
FUNCGEN("nested_grad_grad = grad(grad(nested))")
FUNCGEN("nested_grad3 = grad(grad(grad(nested)))")
FUNCGEN("nested_third_rev = jacrev(jacrev(jacrev(nested)))")
FUNCGEN("nested_third_fwd = jacfwd(jacrev(jacrev(nested)))")
fg::Tensor nested(const fg::Tensor& x, int n, int m) {
  fg::Tensor h = x;
  int i = 0;
  do {
    for (int j = 0; j < m; ++j) h = (h * 0.9 + 0.1).sin();
    h = h * x;
    ++i;
  } while (i < n);
  return h.sum();
}

// Early returns, as users write them: a guard that returns, a return nested in an if whose other
// path goes on, a helper that returns early, a return that depends on the values, and a tuple.
FUNCGEN("early_grad = grad(early, argnums=(0, 1))")
FUNCGEN("early_jvp = jvp(early)")
FUNCGEN("early_hessian = hessian(early)")
FUNCGEN("early_per_sample = vmap(grad(early), in_dims=(0, None, None))")
fg::Tensor early(const fg::Tensor& x, const fg::Tensor& w, int mode) {
  if (mode == 0) return (x * w).sin().sum();
  fg::Tensor y = x * w;
  if (mode >= 1) {
    const fg::Tensor z = y.tanh();
    if (mode == 2) return (z * x).sum();
    y = z * 3;
  }
  return (y * y).sum();
}

static fg::Tensor clipped(const fg::Tensor& x, double limit) {
  if (limit <= 0) return x;
  return x.clamp(-limit, limit);
}
FUNCGEN("early_helper_grad = grad(early_helper)")
fg::Tensor early_helper(const fg::Tensor& x, double limit) { return (clipped(x, limit) * x.sin()).sum(); }

FUNCGEN("early_data_grad = grad(early_data)")
FUNCGEN("early_data_jacrev = jacrev(early_data)")
fg::Tensor early_data(const fg::Tensor& x) {
  if (x.sum().item<double>() > 0) return (x * x).sum();
  return x.sin().sum();
}

FUNCGEN("early_pair_jacfwd = jacfwd(early_pair)")
FUNCGEN("early_pair_jacrev = jacrev(early_pair)")
std::tuple<fg::Tensor, fg::Tensor> early_pair(const fg::Tensor& x, bool swap) {
  if (swap) return std::make_tuple(x.cos(), x.sin());
  return std::make_tuple(x.sin(), x * x);
}

}  // namespace cf
