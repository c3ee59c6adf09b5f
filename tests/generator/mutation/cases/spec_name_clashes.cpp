// Spec targets that clash with what the file or its headers declare.
// EXPECT: reject
#include <funcgen/funcgen.h>
#include <cmath>

struct Model {};
namespace layers {}
int counter = 0;
fg::Tensor helper(const fg::Tensor& x) { return x + 1; }

FUNCGEN("std = vmap(f)")
//       ^
FUNCGEN("size_t = vmap(f)")
//       ^
FUNCGEN("sin = vmap(f)")
//       ^
FUNCGEN("Model = vmap(f)")
//       ^
FUNCGEN("layers = vmap(f)")
//       ^
FUNCGEN("counter = vmap(f)")
//       ^
FUNCGEN("helper = vmap(f)")
//       ^
FUNCGEN("later = vmap(f)")
//       ^
fg::Tensor f(const fg::Tensor& x) { return helper(x) * 2; }

double later(double v) { return v; }
