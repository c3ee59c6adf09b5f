// std::optional<fg::Tensor> parameters: funcgen specializes a function on which of them hold a
// tensor; what it cannot specialize on is an error at the construct, saying what to write instead.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <optional>

namespace diag {

struct Layer {
  fg::Tensor weight, bias;
};

// A std::optional of a structure is not taken apart.
FUNCGEN("g4 = grad(layered)")
fg::Tensor layered(const fg::Tensor& x, const std::optional<Layer>& l) { return (l ? x * l->weight : x).sum(); }
// CHECK: optional_diagnostics.cpp:[[@LINE-1]]:69: error: parameter 'l' cannot be transformed: 'std::optional<diag::Layer>' holds tensors in a std::optional of a structure; use std::optional<fg::Tensor> for each optional tensor [funcgen-unsupported]

FUNCGEN("g1 = grad(unguarded)")
fg::Tensor unguarded(const fg::Tensor& x, const std::optional<fg::Tensor>& b) {
  const bool has_bias = b.has_value();
  fg::Tensor y = x;
  if (has_bias) y = y + *b;
// CHECK: optional_diagnostics.cpp:[[@LINE-1]]:25: error: this reads the tensor of 'b' where it holds none (funcgen specializes the function on which optionals hold tensors); read it only under 'if (b)' [funcgen-unsupported]
  return y.sum();
}

FUNCGEN("b1 = vmap(shifted, in_dims=(0, (0, None)))")
// CHECK: optional_diagnostics.cpp:[[@LINE-1]]:41: error: in_dims gives a tuple for 'b' (std::optional<fg::Tensor>), which holds one tensor or none; give one int or None for it [funcgen-spec]
fg::Tensor shifted(const fg::Tensor& x, const std::optional<fg::Tensor>& b) { return b ? x + *b : x; }

FUNCGEN("g2 = grad(maybe)")
std::optional<fg::Tensor> maybe(const fg::Tensor& x) { return x.sin(); }
// CHECK: optional_diagnostics.cpp:[[@LINE-1]]:1: error: the result of 'maybe' cannot be transformed: a returned std::optional cannot be transformed yet; return the tensor, and whether it holds one separately [funcgen-unsupported]

FUNCGEN("g3 = grad(many)")
// CHECK: optional_diagnostics.cpp:[[@LINE-1]]:15: error: 'many' takes 5 std::optional tensors; funcgen specializes a function once for each combination of those that hold one, for at most 4 of them; pass fewer as optionals [funcgen-unsupported]
fg::Tensor many(const fg::Tensor& x, const std::optional<fg::Tensor>& a, const std::optional<fg::Tensor>& b,
                const std::optional<fg::Tensor>& c, const std::optional<fg::Tensor>& d,
                const std::optional<fg::Tensor>& e) {
  return (a ? x * *a : x).sum();
}

FUNCGEN("g6 = grad(reassigned)")
fg::Tensor reassigned(const fg::Tensor& x, std::optional<fg::Tensor> b) {
  if (!b) b = x * 2.0;
// CHECK: optional_diagnostics.cpp:[[@LINE-1]]:11: error: changing the std::optional 'b' cannot be transformed: funcgen specializes the function on which optionals hold a tensor when it is called; compute the tensor in a local (fg::Tensor t = b ? *b : ...;) [funcgen-unsupported]
  return (x * *b).sum();
}

FUNCGEN("g5 = grad(local)")
fg::Tensor local(const fg::Tensor& x, const std::optional<fg::Tensor>& b) {
  std::optional<fg::Tensor> c = b;
// CHECK: optional_diagnostics.cpp:[[@LINE-1]]:3: error: 'c' is a local std::optional<fg::Tensor>, which cannot be transformed yet: funcgen specializes on the optionals a function is passed; test the parameter itself (if (b)), or name it with 'const auto& c = b;' [funcgen-unsupported]
  return (c ? x * *c : x).sum();
}

// CHECK: 7 errors generated.
}  // namespace diag
