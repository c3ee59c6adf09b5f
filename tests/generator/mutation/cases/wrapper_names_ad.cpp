// Parameters and locals named like the locals of the generated jacrev / jacfwd / vjp wrappers
// (forward, out, basis, rows, columns, example, shape) and a global named like one.
// EXPECT: accept
#include <funcgen/funcgen.h>

const double basis = 0.75;

FUNCGEN("jr_wrapped = jacrev(wrapped)")
FUNCGEN("jf_wrapped = jacfwd(wrapped)")
FUNCGEN("vjp_wrapped = vjp(wrapped)")
FUNCGEN("g_wrapped = grad(wrapped)")
fg::Tensor wrapped(const fg::Tensor& out, const fg::Tensor& forward) {
  fg::Tensor rows = out * forward, columns = out.sin() * basis, example = forward.cos(), shape = rows + columns;
  return (shape * example + out).sum();
}
