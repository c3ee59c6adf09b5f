// An empty spec is reported inside its own string, not at the next FUNCGEN's (whose text the
// location search used to run on into).
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("")
// CHECK: empty_spec.cpp:[[@LINE-1]]:10: error: expected the name of the generated function; a spec reads 'name = transform(f, ...)' [funcgen-spec]
// CHECK-NEXT: {{^}}FUNCGEN(""){{$}}
// CHECK-NEXT: {{^}}         ^{{$}}
FUNCGEN("g = grad(f)")
fg::Tensor f(const fg::Tensor& x) { return x.sin().sum(); }
// CHECK: 1 error generated.
