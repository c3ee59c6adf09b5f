// Each derivative transform multiplies the code it is given (and jvp doubles the parameters):
// funcgen bounds a spec's nesting from the spec itself, before building anything, with an error at
// the transform that passes the bound, instead of running for minutes and gigabytes (hessian 4
// deep, jvp 50 deep) and writing code no compiler takes. The sizes checked as the transforms run
// and after printing bound what the estimate misses.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("g20 = grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(f))))))))))))))))))))")
// CHECK: size_bound.cpp:[[@LINE-1]]:86: error: 'grad' here nests the derivative transforms deeper than funcgen generates for one spec (each multiplies the code it is given: this nesting about 4096 times the function's, more than 2048); nest fewer transforms, or differentiate a smaller function [funcgen-spec]
FUNCGEN("h4 = hessian(hessian(hessian(hessian(f))))")
// CHECK: size_bound.cpp:[[@LINE-1]]:23: error: 'hessian' here nests the derivative transforms deeper than funcgen generates for one spec (each multiplies the code it is given: this nesting about 4096 times the function's, more than 2048); nest fewer transforms, or differentiate a smaller function [funcgen-spec]
FUNCGEN("j50 = jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(f))))))))))))))))))))))))))))))))))))))))))))))))))")
// CHECK: size_bound.cpp:[[@LINE-1]]:168: error: 'jvp' here nests the derivative transforms deeper than funcgen generates for one spec (each multiplies the code it is given: this nesting about 4096 times the function's, more than 2048); nest fewer transforms, or differentiate a smaller function [funcgen-spec]
// Within the bound, nesting is fine; a spec on an earlier one carries its nesting.
FUNCGEN("h3 = jacfwd(jacfwd(jacrev(f)))")
FUNCGEN("h2 = hessian(hessian(f))")
FUNCGEN("h2_more = jacrev(jacrev(h2))")
// CHECK: size_bound.cpp:[[@LINE-1]]:20: error: 'jacrev' here nests the derivative transforms deeper than funcgen generates for one spec (each multiplies the code it is given: this nesting about 4096 times the function's, more than 2048); nest fewer transforms, or differentiate a smaller function [funcgen-spec]
// A value's vmap levels are a 32-bit mask: 33 levels are refused at the vmap that makes them.
FUNCGEN("v33 = vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(f)))))))))))))))))))))))))))))))))")
// CHECK: size_bound.cpp:[[@LINE-1]]:16: error: 'vmap' here makes 33 nested vmap levels (each vmap is one, jacrev and jacfwd vmap their basis, hessian twice), more than the 32 funcgen generates; nest fewer transforms [funcgen-spec]
fg::Tensor f(const fg::Tensor& x) { return (x.sin() * x.cos()).tanh().sum(); }
FUNCGEN("v20 = vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(g_levels))))))))))))))))))))")
FUNCGEN("v20_more = vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(vmap(v20)))))))))))))")
// CHECK: size_bound.cpp:[[@LINE-1]]:21: error: 'vmap' here makes 33 nested vmap levels (each vmap is one, jacrev and jacfwd vmap their basis, hessian twice), more than the 32 funcgen generates; nest fewer transforms [funcgen-spec]
fg::Tensor g_levels(const fg::Tensor& x) { return x.sin(); }
// CHECK: 6 errors generated.
