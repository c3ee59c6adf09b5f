// Each derivative transform multiplies the code it is given; funcgen bounds what one spec may
// generate with an error at the spec that says how large it would be, instead of running for
// minutes and writing code no compiler takes.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("jvp20 = jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(jvp(f))))))))))))))))))))")
// CHECK: size_bound.cpp:[[@LINE-1]]:{{[0-9]+}}: error: 'jvp' here makes about {{[0-9]+}} statements of derivative code, more than the 20000 funcgen generates for one spec; nest fewer transforms (each multiplies the code it is given), or differentiate a smaller function [funcgen-spec]
// Within the bound, nesting is fine.
FUNCGEN("j3 = jacfwd(jacfwd(jacfwd(f)))")
fg::Tensor f(const fg::Tensor& x) { return (x.sin() * x.cos()).tanh(); }
