// Jacobians w.r.t. a std::vector<fg::Tensor> read at run-time indices (a list): jacrev and the
// outermost jacfwd take them; what differentiates them again, or maps the list's basis inside
// another transform, is an error at the transform, saying what to write instead.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <array>
#include <vector>

namespace diag {

FUNCGEN("j1 = jacrev(jacfwd(layers))")
// CHECK: list_diagnostics.cpp:[[@LINE-1]]:22: error: jacfwd w.r.t. the vector 'ws', which 'layers' reads at run-time indices, cannot be generated inside another transform yet; use jacrev there, or keep the vector's tensors in a struct or a std::array [funcgen-unsupported]
FUNCGEN("j2 = jacfwd(jacrev(layers))")
// CHECK: list_diagnostics.cpp:[[@LINE-1]]:10: error: the gradient of a vector of tensors read at run-time indices cannot be differentiated again yet; differentiate w.r.t. the other arguments (argnums), or keep the vector's tensors in a struct or a std::array [funcgen-unsupported]
FUNCGEN("j4 = jacrev(layers, chunk_size=2)")
// CHECK: list_diagnostics.cpp:[[@LINE-1]]:15: error: jacrev with chunk_size w.r.t. the vector 'ws', which 'layers' reads at run-time indices, cannot be generated yet; leave out chunk_size [funcgen-unsupported]
FUNCGEN("j3 = jacrev(jacrev(layers))")
// CHECK: list_diagnostics.cpp:[[@LINE-1]]:10: error: the gradient of a vector of tensors read at run-time indices cannot be differentiated again yet; differentiate w.r.t. the other arguments (argnums), or keep the vector's tensors in a struct or a std::array [funcgen-unsupported]
// w.r.t. the input only, the nesting goes through.
FUNCGEN("ok = jacrev(jacfwd(layers, argnums=1), argnums=1)")
fg::Tensor layers(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) {
  fg::Tensor h = x;
  for (size_t i = 0; i < ws.size(); ++i) h = fg::matmul(ws[i], h).tanh();
  return h;
}

// A std::array read at run-time indices: the diagnostic names the std::array and what to take.
FUNCGEN("ga = grad(total)")
fg::Tensor total(const std::array<fg::Tensor, 3>& xs) {
  fg::Tensor s = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) s = s + xs[i];
  // CHECK: list_diagnostics.cpp:[[@LINE-1]]:50: error: funcgen passes a std::array parameter as the tensors it holds, so it must be read at constant indices (ws[0], ws[1]); an index computed at run time cannot be transformed yet: take a std::vector<fg::Tensor> (read at run-time indices as a list), or write the indices out [funcgen-unsupported]
  return s.sum();
}

// CHECK: 5 errors generated.
}  // namespace diag
