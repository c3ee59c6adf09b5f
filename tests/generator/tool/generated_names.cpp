// A spec declares its function and, for vjp and linearize, the type named after it (README:
// `g_pullback`, `g_jvp_fn`); each name must be free, whichever comes first. Names like fg ops are
// fine: generated code calls functions from the global namespace (tests/generator/hygiene).
// EXIT: 1
#include <funcgen/funcgen.h>

struct taken_pullback {};

FUNCGEN("lin = linearize(f)")
FUNCGEN("lin_jvp_fn = grad(f)")
// CHECK: generated_names.cpp:[[@LINE-1]]:10: error: the name 'lin_jvp_fn' is the type that the spec 'lin' generates; give the generated function another name [funcgen-spec]
FUNCGEN("back_pullback = grad(f)")
FUNCGEN("back = vjp(f)")
// CHECK: generated_names.cpp:[[@LINE-1]]:10: error: 'back' would also declare the type 'back_pullback', which is already defined; give the generated function another name [funcgen-spec]
FUNCGEN("taken = vjp(f)")
// CHECK: generated_names.cpp:[[@LINE-1]]:10: error: 'taken' would also declare the type 'taken_pullback', and 'taken_pullback' is already declared in this file (a type); give the generated function another name [funcgen-spec]
FUNCGEN("f = grad(f)")
// CHECK: generated_names.cpp:[[@LINE-1]]:10: error: the name 'f' is already defined; give the generated function another name [funcgen-spec]
FUNCGEN("class = grad(f)")
// CHECK: generated_names.cpp:[[@LINE-1]]:10: error: 'class' is a C++ keyword and cannot name a function; pick another name for the generated function [funcgen-spec]
FUNCGEN("relu = vjp(f)")
FUNCGEN("ge = linearize(f)")
fg::Tensor f(const fg::Tensor& x) { return x.sin().sum(); }
// CHECK: 5 errors generated.
