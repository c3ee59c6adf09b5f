// A std::vector of structures of tensors: looped over by const reference, read at a run-time
// index (ls[i].w), a field assigned at a constant one.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <cstddef>
#include <vector>

struct Layer {
  fg::Tensor w;
  fg::Tensor b;
};

FUNCGEN("glayers = grad(layers)")
FUNCGEN("vlayers = vmap(layers)")
FUNCGEN("jlayers = jacfwd(layers)")
fg::Tensor layers(const fg::Tensor& x) {
  std::vector<Layer> ls{{x, x * 2}, {x.sin(), x}};
  fg::Tensor h = x;
  for (const auto& l : ls) h = (h * l.w + l.b).tanh();
  ls[0].w = h;
  for (size_t i = 0; i < ls.size(); ++i) h = (h * ls[i].w + ls[i].b).tanh();
  return h.sum();
}
