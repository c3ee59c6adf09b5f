// Each derivative transform multiplies the code it is given; funcgen bounds what one spec may
// generate with an error at the transform that crosses the bound, with the size, instead of
// running for minutes (grad nested 20 deep doubles its code 20 times) and writing code no compiler
// takes.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("g20 = grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(f))))))))))))))))))))")
// CHECK: size_bound.cpp:[[@LINE-1]]:76: error: 'grad' here makes about 51636 statements of derivative code, more than the 20000 funcgen generates for one spec; nest fewer transforms (each multiplies the code it is given), or differentiate a smaller function [funcgen-spec]
// Within the bound, nesting is fine.
FUNCGEN("h3 = jacfwd(jacfwd(jacrev(f)))")
fg::Tensor f(const fg::Tensor& x) { return (x.sin() * x.cos()).tanh().sum(); }
