// Structured parameters and results (torch.func's pytrees) that funcgen cannot take apart are
// errors at the construct, saying what to write instead.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <list>
#include <map>
#include <vector>

namespace diag {

struct Layer {
  fg::Tensor weight, bias;
};

// A class with a constructor cannot be rebuilt from its leaves.
class Opaque {
 public:
  explicit Opaque(fg::Tensor w) : w_(w) {}
  fg::Tensor w_;
};
FUNCGEN("g3 = grad(uses_class)")
fg::Tensor uses_class(const Opaque& o) { return o.w_.sum(); }
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:37: error: parameter 'o' cannot be transformed: 'diag::Opaque' is not an aggregate (it has constructors, base classes or private members), so funcgen cannot rebuild it; use a struct of public fields without constructors [funcgen-unsupported]

// A container funcgen cannot see into.
FUNCGEN("g4 = grad(uses_list)")
fg::Tensor uses_list(const std::list<fg::Tensor>& l) { return l.front().sum(); }
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:51: error: parameter 'l' cannot be transformed: 'std::list<fg::Tensor>' holds tensors in a type funcgen cannot see into; use a struct, std::tuple, std::array, std::vector or std::map of fg::Tensor [funcgen-unsupported]

// A vector read at an index computed at run time: its leaves are not known when generating.
FUNCGEN("g1 = grad(layers)")
fg::Tensor layers(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) {
  fg::Tensor h = x;
  for (size_t i = 0; i < 2; ++i) h = fg::matmul(ws[i], h).tanh();
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:49: error: funcgen passes a vector parameter as the tensors it holds, so it must be read at constant indices (ws[0], ws[1]); an index computed at run time cannot be transformed yet: use a std::array or a struct, or write the indices out [funcgen-unsupported]
  return h.sum();
}

// A vector used as a whole: its size is known only at run time.
FUNCGEN("g2 = grad(stacked)")
fg::Tensor stacked(const std::vector<fg::Tensor>& ws) { return fg::stack(ws).sum(); }
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:74: error: a std::vector parameter used as a whole cannot be transformed yet: its size is known only at run time; read its elements at constant indices (ws[0]), or take a std::array [funcgen-unsupported]

// A helper that returns a structure.
static Layer scaled(const Layer& l) { return Layer{l.weight * 2, l.bias * 2}; }
FUNCGEN("g5 = grad(calls_scaled)")
fg::Tensor calls_scaled(const Layer& l) { return scaled(l).weight.sum(); }
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:50: error: 'scaled' returns a structure, which funcgen cannot take apart in its caller yet; return std::tuple or tensors from helpers [funcgen-unsupported]

// vjp returns a function; with structures it cannot be generated yet.
FUNCGEN("v6 = vjp(layer_out)")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:15: error: vjp of a function with structured parameters or results cannot be generated yet; take the tensors as parameters, or use grad or jacrev [funcgen-unsupported]
fg::Tensor layer_out(const Layer& l, const fg::Tensor& x) { return fg::linear(x, l.weight, l.bias); }

// A jacobian of a structured result w.r.t. a structure would nest structures in tensors' places.
struct Pair {
  fg::Tensor a, b;
};
FUNCGEN("j7 = jacrev(pair_out)")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:15: error: jacrev of a function that returns 'diag::Pair' with respect to a structure would put a structure in each of its tensors' places; return std::tuple, or differentiate with respect to tensors [funcgen-unsupported]
Pair pair_out(const Layer& l, const fg::Tensor& x) { return Pair{l.weight.matmul(x), l.bias * 2}; }

// A returned structure may hold only tensors.
struct WithCount {
  fg::Tensor t;
  int count;
};
FUNCGEN("v8 = vmap(counted)")
WithCount counted(const fg::Tensor& x) { return WithCount{x * 2, 1}; }
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:1: error: the result of 'counted' cannot be transformed: a returned structure may hold only tensors (and structures of them); return the other values separately [funcgen-unsupported]

// CHECK: 8 errors generated.
}  // namespace diag
