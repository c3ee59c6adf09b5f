// A structure of 1000 tensors, as a parameter and as a result: its leaves travel through the
// generated code in std::arrays where a std::tuple would pass the compilers' template depth
// (libstdc++ nests one template per element), so that aggregates of any size compile.
#include <funcgen/funcgen.h>

#include <array>

#include "large.h"

namespace large {

FUNCGEN("reads_grad = grad(reads)")
FUNCGEN("reads_psg = vmap(grad(reads), in_dims=(None, 0))")
FUNCGEN("reads_jvp = jvp(reads)")
fg::Tensor reads(const Weights& ws, const fg::Tensor& x) {
  return (ws[0] * ws[999] * x).sum() + ws[5].sin().sum();
}

FUNCGEN("scaled_vjp = vjp(scaled)")
Weights scaled(const Weights& ws) {
  Weights out = ws;
  out[0] = ws[0] * ws[1];
  return out;
}

}  // namespace large
