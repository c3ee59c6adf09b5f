// A spec on a member function of a class without tensors: its object cannot be taken apart as
// the function's first argument (classes of tensors can: tests/generator/structures).
// EXPECT: reject
#include <funcgen/funcgen.h>

struct Model {
  double k = 2;
  FUNCGEN("vforward = vmap(forward)")
  fg::Tensor forward(const fg::Tensor& x) const { return x * k; }
//           ^
};
