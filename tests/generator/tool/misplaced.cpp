// A FUNCGEN that does not stand right before a function definition is an error, not a spec that
// silently generates nothing.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("b = vmap(f)")
int counter = 0;
// CHECK: misplaced.cpp:[[@LINE-2]]:1: error: FUNCGEN must stand right before a function definition, not before this declaration [funcgen-spec]
// CHECK: misplaced.cpp:[[@LINE-2]]:5: note: the annotation applies to this declaration
fg::Tensor f(const fg::Tensor& x) { return x; }

FUNCGEN("c = vmap(g)")
fg::Tensor g(const fg::Tensor& x);
// CHECK: misplaced.cpp:[[@LINE-2]]:1: error: FUNCGEN stands before a declaration of 'g' without a body; put it before the function's definition [funcgen-spec]
// CHECK: misplaced.cpp:[[@LINE-2]]:12: note: the annotation applies to this declaration
