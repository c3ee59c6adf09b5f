// A spec on a member function: the generated free function would not see the members.
// EXPECT: reject
#include <funcgen/funcgen.h>

struct Model {
  double k = 2;
  FUNCGEN("vforward = vmap(forward)")
  fg::Tensor forward(const fg::Tensor& x) const { return x * k; }
//           ^
};
