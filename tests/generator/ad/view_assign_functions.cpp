// Assignment into views, as libtorch writes it (`y[i] = v`, `y.select(1, j) = v`,
// `y.narrow(1, 0, 2) = 0.0`, `y[i][j] = v`): fg::Tensor's rvalue operator= copies into the view,
// and funcgen lowers it as the in-place copy_ (fill_ for a number) that it is, so that every
// transform sees the write: the gradient flows to the value at the view's elements and not to what
// it overwrote. test_view_assign.cpp checks every transform against finite differences in float64
// and the loop of unbatched calls.
#include <funcgen/funcgen.h>

#include <cstdint>

namespace va {

#define VIEW_ASSIGN_SPECS(f)                        \
  FUNCGEN(#f "_grad = grad(" #f ")")                \
  FUNCGEN(#f "_vjp = vjp(" #f ")")                  \
  FUNCGEN(#f "_jvp = jvp(" #f ")")                  \
  FUNCGEN(#f "_jacrev = jacrev(" #f ")")            \
  FUNCGEN(#f "_jacfwd = jacfwd(" #f ")")            \
  FUNCGEN(#f "_hessian = hessian(" #f ")")          \
  FUNCGEN(#f "_vmap = vmap(" #f ")")                \
  FUNCGEN(#f "_psg = vmap(grad(" #f "))")

// ---- a row of a computed tensor, and a number into columns
VIEW_ASSIGN_SPECS(row_assign)
fg::Tensor row_assign(const fg::Tensor& x) {
  fg::Tensor y = x * 2.0;
  y[1] = x[0].sin() * 3.0;
  y.narrow(1, 0, 2) = 0.0;
  return (y * y.cos()).sum();
}

// ---- select along dim 1, the value broadcast from a 0-d element
VIEW_ASSIGN_SPECS(select_assign)
fg::Tensor select_assign(const fg::Tensor& x) {
  fg::Tensor y = x.exp();
  y.select(1, 2) = x.select(1, 0) * x.select(1, 3);
  y.select(1, 0) = x[2][1];
  return (y * x).sum();
}

// ---- elements of a fresh tensor made like x (batched like x under vmap)
VIEW_ASSIGN_SPECS(element_assign)
fg::Tensor element_assign(const fg::Tensor& x) {
  fg::Tensor y = x.new_zeros({3, 4});
  y[0][1] = x[1][2] * x[0][0];
  y[2][3] = x.sum();
  y[1] = x[1].sin();
  y[2][0] = 1.5;
  return (y * x).sum() + y.pow(2).sum();
}

// ---- a view held in a variable, a transposed view, reads of the view after its base changed, and
// the variable assigned (rebound, as libtorch's lvalue assignment)
VIEW_ASSIGN_SPECS(view_chain)
fg::Tensor view_chain(const fg::Tensor& x) {
  fg::Tensor y = x.clone();
  fg::Tensor r = y[1];
  r.narrow(0, 1, 2) = x[0].narrow(0, 0, 2).exp();
  y[2] = r * 0.5;
  y.t()[3] = x.select(1, 1).cos();
  const fg::Tensor read = r.sum();
  r = x[2] * 3.0;  // a named tensor: rebinds r, y keeps its row
  return (y.sin() * read).sum() + (r * y[1]).sum();
}

// ---- in a loop, and through a helper that writes into a view of what it is passed
static void set_row(const fg::Tensor& t, int64_t i, const fg::Tensor& v) { t[i] = v; }

VIEW_ASSIGN_SPECS(loop_assign)
fg::Tensor loop_assign(const fg::Tensor& x) {
  fg::Tensor y = x.tanh();
  for (int64_t i = 1; i < y.size(0); ++i) y[i] = y[i - 1] * x[i].sin() + y[i];
  set_row(y, 0, x[2].exp());
  return (y * y).sum();
}

// ---- a tensor result: jacobians of the written tensor itself
FUNCGEN("assigned_vjp = vjp(assigned)")
FUNCGEN("assigned_jvp = jvp(assigned)")
FUNCGEN("assigned_jacrev = jacrev(assigned)")
FUNCGEN("assigned_jacfwd = jacfwd(assigned)")
FUNCGEN("assigned_vmap = vmap(assigned)")
fg::Tensor assigned(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  y[0] = x[2] * x[1];
  y.select(1, 3) = 2.0;
  return y;
}

}  // namespace va
