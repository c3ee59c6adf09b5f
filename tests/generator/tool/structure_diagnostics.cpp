// Structured parameters and results (torch.func's pytrees) that funcgen cannot take apart are
// errors at the construct, saying what to write instead.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <list>
#include <map>
#include <string>
#include <tuple>
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

// A vector read at run-time indices is a list: vmap cannot map it in chunks, its gradient is not
// differentiated again (hessian; more in list_diagnostics.cpp).
FUNCGEN("v1 = vmap(layers, in_dims=(0, 0), chunk_size=2)")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:15: error: vmap with chunk_size mapping the vector 'ws', which 'layers' reads at run-time indices, cannot be generated yet; leave out chunk_size [funcgen-unsupported]
FUNCGEN("j1 = hessian(layers)")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:15: error: hessian w.r.t. the vector 'ws' cannot be generated yet: 'layers' reads it at run-time indices, and the gradient of such a vector is not differentiated again yet; take jacrev or jacfwd w.r.t. it, or keep its tensors in a struct or a std::array [funcgen-unsupported]
FUNCGEN("h1 = jvp(grad(layers))")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:10: error: the gradient of a vector of tensors read at run-time indices cannot be differentiated again yet; differentiate w.r.t. the other arguments (argnums), or keep the vector's tensors in a struct or a std::array [funcgen-unsupported]
fg::Tensor layers(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) {
  fg::Tensor h = x;
  for (size_t i = 0; i < ws.size(); ++i) h = fg::matmul(ws[i], h).tanh();
  return h.sum();
}

// A vector's elements changed in place, a derivative of a vmap w.r.t. a vector, a vector mapped by a
// vmap inside a transform, chunks of a vector result.
FUNCGEN("g9 = grad(doubled, argnums=1)")
fg::Tensor doubled(std::vector<fg::Tensor> ws, const fg::Tensor& x) {
  for (auto& w : ws) w.mul_(2);
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:22: error: in-place 'mul_' on an element of a vector of tensors cannot be differentiated yet (later reads of the vector would not see it); compute a new tensor (w = w * 2) instead [funcgen-unsupported]
  fg::Tensor r = x.sum();
  for (size_t i = 0; i < ws.size(); ++i) r = r + (ws[i] * x).sum();
  return r;
}
FUNCGEN("a10 = jvp(vmap(layered, in_dims=(None, 0)))")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:20: error: differentiating a vmap of 'layered' w.r.t. the vector 'ws' (read at run-time indices) cannot be generated yet; differentiate w.r.t. the other arguments (argnums) [funcgen-unsupported]
FUNCGEN("a11 = jacrev(vmap(layered, in_dims=(0, 0)), argnums=1)")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:23: error: a vmap inside a transform cannot map the vector 'ws' yet (it is read at run-time indices); give it in_dims None there, or make this vmap the outermost transform [funcgen-unsupported]
fg::Tensor layered(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) {
  fg::Tensor h = x;
  for (const auto& w : ws) h = fg::matmul(w, h).tanh();
  return h.sum();
}

FUNCGEN("a12 = vmap(grad(chunked), in_dims=(None, 0), chunk_size=2)")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:16: error: vmap with chunk_size of a function that returns a vector of tensors (the gradient of a vector read at run-time indices) cannot be generated yet; leave out chunk_size [funcgen-unsupported]
fg::Tensor chunked(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) {
  fg::Tensor h = x;
  for (const auto& w : ws) h = fg::matmul(w, h).tanh();
  return h.sum();
}

FUNCGEN("g2 = grad(stacked)")
fg::Tensor stacked(const std::vector<fg::Tensor>& ws) { return fg::stack(ws).sum(); }
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:74: error: 'stack' of the whole vector 'ws' cannot be differentiated yet: funcgen differentiates a vector where its elements are read; read them (ws[i]) and combine those, or stack the vector in the function that fills it with push_back (held stacked there) [funcgen-unsupported]

// A helper that returns a vector of tensors built where it is returned (a local vector it fills,
// a struct, pair, array or tuple go through).
static std::vector<fg::Tensor> both(const Layer& l) { return {l.weight * 2, l.bias * 2}; }
FUNCGEN("g5 = grad(calls_both)")
fg::Tensor calls_both(const Layer& l) { return both(l)[0].sum(); }
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:48: error: 'both' returns a std::vector of tensors other than a local vector it fills, which funcgen cannot take apart in its caller yet; declare the vector in 'both' and return it by name (std::vector<fg::Tensor> out{...}; return out;) [funcgen-unsupported]

// vjp's pullback keeps the numbers of a structure to put them in its gradient; other values it cannot keep yet.
struct Named {
  fg::Tensor w;
  std::string name;
};
FUNCGEN("v6 = vjp(named_out)")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:15: error: vjp of a function whose argument 'n' holds 'n.name', neither a tensor nor a number, cannot be generated yet; keep only tensors and numbers in it [funcgen-unsupported]
fg::Tensor named_out(const Named& n, const fg::Tensor& x) { return n.w * x; }

// An aux pytree of tensors is returned as it is; one holding other values is not yet.
FUNCGEN("v7 = vjp(layer_aux, has_aux=True)")
std::tuple<fg::Tensor, Named> layer_aux(const Layer& l, const fg::Tensor& x) {
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:1: error: the result of 'layer_aux' cannot be transformed: a returned structure may hold only tensors (and structures of them); return the other values separately [funcgen-unsupported]
  return {fg::linear(x, l.weight, l.bias).sum(), Named{x, "x"}};
}

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

// in_dims over a structure matches its fields, as torch.func matches in_dims pytrees.
FUNCGEN("v9 = vmap(layer_sum, in_dims=((0, None, 0), 0))")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:40: error: in_dims gives 3 entries for 'l' (diag::Layer), which has 2; give one int or None per field, or one for the whole structure [funcgen-spec]
FUNCGEN("v10 = vmap(layer_sum, in_dims=((0, (0, None)), 0))")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:45: error: in_dims gives a tuple for 'l.bias' (fg::Tensor), which is one tensor; give one int or None for it [funcgen-spec]
fg::Tensor layer_sum(const Layer& l, const fg::Tensor& x) { return (fg::linear(x, l.weight, l.bias)).sum(); }

FUNCGEN("v11 = vmap(dict_sum, in_dims=((0, None), 0))")
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:40: error: in_dims gives a tuple for 'params' (std::map<std::string, fg::Tensor>), which holds as many elements as the caller passes; give one int or None for it [funcgen-spec]
fg::Tensor dict_sum(const std::map<std::string, fg::Tensor>& params, const fg::Tensor& x) {
  return (params.at("w") * x + params.at("b")).sum();
}

// A function this file generates, called inside another transformed function (the neural tangent
// kernel tutorial's composition), declared by the user so that the file compiles.
fg::Tensor tangent_jac(const fg::Tensor& x);
FUNCGEN("tangent_jac = jacrev(tangent_features)")
fg::Tensor tangent_features(const fg::Tensor& x) { return x.sin() * 2.0; }
FUNCGEN("kernel_grad = grad(kernel)")
fg::Tensor kernel(const fg::Tensor& a, const fg::Tensor& b) { return fg::matmul(tangent_jac(a), tangent_jac(b).t()).sum(); }
// CHECK: structure_diagnostics.cpp:[[@LINE-1]]:81: error: 'tangent_jac' is what this file's spec 'tangent_jac = jacrev(tangent_features)' generates, which funcgen cannot differentiate again from inside another function yet; nest the transforms in one spec of the function they start from (jacrev(jacrev(f)), hessian(f), jvp(grad(f))), or call that function here [funcgen-unsupported]

// CHECK: 19 errors generated.
}  // namespace diag
