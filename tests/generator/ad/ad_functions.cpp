// Functions differentiated by funcgen's grad; tests/generator/ad/test_ad.cpp checks each gradient
// against central finite differences in float64.
#include "ad_functions.h"

#include <vector>

namespace adtest {

FUNCGEN("sin_exp_grad = grad(sin_exp)")
fg::Tensor sin_exp(const fg::Tensor& x) { return (x.sin() * x.exp()).sum(); }

FUNCGEN("broadcast_arith_grad = grad(broadcast_arith, argnums=(0, 1))")
fg::Tensor broadcast_arith(const fg::Tensor& x, const fg::Tensor& y) { return (x * y + x / y - y).mean(); }

FUNCGEN("mlp_loss_grad = grad(mlp_loss, argnums=(0, 1))")
FUNCGEN("mlp_loss_grad_and_value = grad_and_value(mlp_loss)")
FUNCGEN("mlp_loss_grad_x = grad(mlp_loss, argnums=2)")
fg::Tensor mlp_loss(const fg::Tensor& w, const fg::Tensor& b, const fg::Tensor& x, const fg::Tensor& y) {
  fg::Tensor h = fg::linear(x, w, b).tanh();
  h = h * 2 - 1;
  return fg::mse_loss(h, y);
}

FUNCGEN("batched_matvec_grad = grad(batched_matvec, argnums=(0, 1))")
fg::Tensor batched_matvec(const fg::Tensor& a, const fg::Tensor& v) { return a.matmul(v).pow(2).sum(); }

FUNCGEN("vec_mat_grad = grad(vec_mat, argnums=(0, 1))")
fg::Tensor vec_mat(const fg::Tensor& v, const fg::Tensor& m) { return fg::matmul(v, m).sigmoid().sum(); }

FUNCGEN("classifier_grad = grad(classifier, argnums=(0, 1))")
fg::Tensor classifier(const fg::Tensor& x, const fg::Tensor& w) {
  const fg::Tensor logits = x.mm(w);
  return (logits.log_softmax(1) * logits.softmax(-1)).sum();
}

FUNCGEN("reductions_grad = grad(reductions)")
fg::Tensor reductions(const fg::Tensor& x) {
  const fg::Tensor rows = x.sum(1).sigmoid();
  const fg::Tensor cols = x.mean({0}, true).exp();
  return rows.sum() + (cols * cols).sum() + x.mean();
}

FUNCGEN("scalar_left_grad = grad(scalar_left)")
fg::Tensor scalar_left(const fg::Tensor& x) {
  const fg::Tensor a = (2 - x).pow(3);
  const fg::Tensor b = 1 / (x * x + 1);
  return (a + b + (x * x + 1).sqrt() + (x * x + 1).log() - x.cos() + x.tanh()).sum();
}

FUNCGEN("shapes_grad = grad(shapes, argnums=(0, 1))")
fg::Tensor shapes(const fg::Tensor& x, const fg::Tensor& y) {
  const fg::Tensor z = x.t().matmul(y).reshape({-1}).unsqueeze(0);
  return (z * z).sum() + x.transpose(0, 1).sin().sum();
}

FUNCGEN("reassigned_grad = grad(reassigned)")
fg::Tensor reassigned(const fg::Tensor& x, double s) {
  fg::Tensor y = x * s;
  y = y.sin() + x;
  y = y * y;
  return y.sum();
}

FUNCGEN("linalg_grad = grad(linalg, argnums=(0, 1, 2))")
fg::Tensor linalg(const fg::Tensor& a, const fg::Tensor& b, const fg::Tensor& v) {
  return a.mv(v).sum() + fg::dot(v, v) + a.mm(b).tanh().sum() + fg::relu(a - 0.25).sum();
}

// Where finite differences do not apply (ties, kinks, a zero norm): test_ad.cpp compares with the
// values torch 1.13 computes. amax/amin and max()/min() split the gradient evenly among ties.
FUNCGEN("extremes_grad = grad(extremes)")
FUNCGEN("extremes_jvp = jvp(extremes)")
fg::Tensor extremes(const fg::Tensor& x) {
  return x.amax({1}).sum() + x.max() * 2 + fg::amin(x) * 3 + x.amin({0}, true).sum();
}

// max(x, y) / min(x, y) are maximum / minimum: ties go to x.
FUNCGEN("pair_extremes_grad = grad(pair_extremes, argnums=(0, 1))")
fg::Tensor pair_extremes(const fg::Tensor& x, const fg::Tensor& y) { return (fg::max(x, y) * 2 + fg::min(x, y)).sum(); }

// A zero norm has a zero subgradient.
FUNCGEN("norms_at_zero_grad = grad(norms_at_zero)")
fg::Tensor norms_at_zero(const fg::Tensor& x) { return x.norm(2, {1}).sum() + x.norm(3) + x.select(0, 0).norm(); }

// The norm's order is a run-time value: orders the rule does not cover throw when differentiated.
FUNCGEN("norm_p_grad = grad(norm_p)")
fg::Tensor norm_p(const fg::Tensor& x, double p) { return fg::norm(x, p, {0}).sum(); }

// max/min along a dim give (values, indices): the values' gradient goes to the selected elements,
// the indices are constants (here they pick a second value from x).
FUNCGEN("top_rows_grad = grad(top_rows)")
fg::Tensor top_rows(const fg::Tensor& x) {
  auto [top, where] = x.max(1);
  const fg::Tensor low = std::get<0>(fg::min(x * x, 0, true));
  return (top * top).sum() + x.gather(1, where.unsqueeze(1)).sin().sum() + low.sum();
}

// Not a scalar: grad refuses at run time, naming the function and the shape.
FUNCGEN("row_sums_grad = grad(row_sums)")
fg::Tensor row_sums(const fg::Tensor& x) { return x.sum(1); }

// Writes through views and copies, functionalized as PyTorch's grad does: the base and its other
// views see a write into a view, a copy sees a write into the tensor it copies.
FUNCGEN("base_write_grad = grad(base_write)")
fg::Tensor base_write(const fg::Tensor& x) {
  fg::Tensor y = x * 2;
  fg::Tensor row = y.select(0, 0);
  y.mul_(3);  // row sees it
  return row.sum();
}
FUNCGEN("view_write_grad = grad(view_write)")
FUNCGEN("view_write_hessian = hessian(view_write)")
fg::Tensor view_write(const fg::Tensor& x) {
  fg::Tensor y = x * 2;
  fg::Tensor row = y.select(0, 0);
  fg::Tensor other = y.select(0, 0);
  row.mul_(x.select(0, 1));  // y and other see it
  return (y * y).sum() + other.exp().sum();
}
FUNCGEN("fill_rows_grad = grad(fill_rows)")
FUNCGEN("fill_rows_jacfwd = jacfwd(fill_rows)")
fg::Tensor fill_rows(const fg::Tensor& x, int n) {
  fg::Tensor out = fg::zeros({n, 3}, x.options());
  for (int i = 0; i < n; ++i) {
    fg::Tensor row = out.select(0, i);
    row.copy_(x.sin() * (i + 1));  // (i + 1): a scalar expression as an operand keeps its parentheses
  }
  return (out * out).sum();
}
FUNCGEN("temporary_view_write_grad = grad(temporary_view_write)")
fg::Tensor temporary_view_write(const fg::Tensor& x) {
  fg::Tensor y = x * 2;
  y.select(0, 0).mul_(x.select(0, 2));  // a view written where it is made
  y.t().narrow(0, 1, 2).add_(x.narrow(0, 0, 2).exp());
  return (y * y).sum();
}
FUNCGEN("aliased_grad = grad(aliased)")
fg::Tensor aliased(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  fg::Tensor z = y;
  z.mul_(y);  // y sees it
  return y.sum();
}
FUNCGEN("view_of_view_grad = grad(view_of_view)")
fg::Tensor view_of_view(const fg::Tensor& x) {
  fg::Tensor y = x * 1.5;
  fg::Tensor col = y.t().narrow(0, 1, 1);
  col.mul_(col);
  return (y.exp() * 0.5).sum() + y.select(0, 0).sum();
}

// dropout: differentiated with the forward's mask, as torch.func does (x * dropout_mask(x, p, train))
FUNCGEN("dropout_loss_grad = grad(dropout_loss, argnums=(0, 1))")
FUNCGEN("dropout_loss_jvp = jvp(dropout_loss)")
FUNCGEN("dropout_loss_psg = vmap(grad(dropout_loss), in_dims=(0, None), randomness='different')")
fg::Tensor dropout_loss(const fg::Tensor& x, const fg::Tensor& w) {
  return (fg::dropout(x * w, 0.5, true).tanh() * w).sum() + fg::dropout(x, 0.3, false).sum();
}

// feature_dropout: whole channels dropped, with the forward's mask ([N, C, 1]; [C, 1] per example)
FUNCGEN("channel_dropout_loss_grad = grad(channel_dropout_loss, argnums=(0, 1))")
FUNCGEN("channel_dropout_loss_psg = vmap(grad(channel_dropout_loss), in_dims=(0, None), randomness='different')")
fg::Tensor channel_dropout_loss(const fg::Tensor& x, const fg::Tensor& w) {
  return (fg::feature_dropout(x * w, 0.5, true).tanh() * w).sum();
}

// linearize replays a forward pass with control flow from the primals it keeps, the int among them
FUNCGEN("pushed_powers_linearize = linearize(pushed_powers)")
fg::Tensor pushed_powers(const fg::Tensor& x, int k) {
  std::vector<fg::Tensor> hs;
  fg::Tensor h = x;
  for (int i = 0; i < k; ++i) {
    h = h.sin() * x;
    hs.push_back(h);
  }
  return fg::stack(hs).sum();
}

}  // namespace adtest
