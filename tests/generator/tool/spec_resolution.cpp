// One resolution of the name a spec transforms, for the spec check and the generator alike: the
// function the FUNCGEN stands before, or an earlier spec. Naming another function of the file is
// an error (before, the check used that function's signature and the generator differentiated
// the annotated one: exit 0 with the gradient of the wrong function, or a crash with argnums
// beyond its parameters).
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("gf = grad(f)")
fg::Tensor f(const fg::Tensor& x, const fg::Tensor& y) { return (x * y).sin().sum(); }

FUNCGEN("g2 = grad(f)")
// CHECK: spec_resolution.cpp:[[@LINE-1]]:20: error: 'f' is another function; this FUNCGEN stands before 'h', so name 'h' or move the FUNCGEN before 'f' [funcgen-spec]
FUNCGEN("g3 = grad(f, argnums=1)")
// CHECK: spec_resolution.cpp:[[@LINE-1]]:20: error: 'f' is another function; this FUNCGEN stands before 'h', so name 'h' or move the FUNCGEN before 'f' [funcgen-spec]
FUNCGEN("v = vmap(gf)")
fg::Tensor h(const fg::Tensor& x) { return x.cos().sum(); }
