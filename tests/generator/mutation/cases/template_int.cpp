// A `template <int N>` helper: N is the instance's value in the generated code.
// EXPECT: accept
#include <funcgen/funcgen.h>

template <int N>
fg::Tensor power(const fg::Tensor& x) {
  fg::Tensor r = x;
  for (int i = 1; i < N; ++i) r = r * x;
  return r;
}

FUNCGEN("vcubes = vmap(cubes)")
FUNCGEN("gcubes = grad(cubes)")
fg::Tensor cubes(const fg::Tensor& x) { return (power<3>(x) + power<2>(x)).sum(); }
