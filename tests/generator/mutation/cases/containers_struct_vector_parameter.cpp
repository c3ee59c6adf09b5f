// A std::vector of structs as a parameter of the transformed function: its length is known only
// at run time, so its tensors cannot be held one by one (a helper may take one: it is transformed
// for the length of the local vector it is passed).
// EXPECT: reject
#include <funcgen/funcgen.h>
#include <vector>

struct Layer {
  fg::Tensor w;
  fg::Tensor b;
};

FUNCGEN("gstacked = grad(stacked, argnums=1)")
fg::Tensor stacked(const std::vector<Layer>& ls, const fg::Tensor& x) {
//                                           ^
  fg::Tensor h = x;
  for (const auto& l : ls) h = h * l.w + l.b;
  return h.sum();
}
