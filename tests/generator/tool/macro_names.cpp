// A generated function's name that is a macro of the annotated file (its own, a header's, the
// standard library's) would be replaced wherever the generated code declares or calls it: the spec
// is refused at the name, with where the macro comes from.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <cassert>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>

#define SQUARED_GRAD g2

FUNCGEN("NULL = grad(f)")
// CHECK: macro_names.cpp:[[@LINE-1]]:10: error: 'NULL' is a macro (<{{.*}}> defines it), which would replace the generated function's name; pick another name for the generated function [funcgen-spec]
FUNCGEN("EOF = grad(f)")
// CHECK: macro_names.cpp:[[@LINE-1]]:10: error: 'EOF' is a macro (<{{.*}}> defines it), which would replace the generated function's name; pick another name for the generated function [funcgen-spec]
FUNCGEN("errno = grad(f)")
// CHECK: macro_names.cpp:[[@LINE-1]]:10: error: 'errno' is a macro (<{{.*}}> defines it), which would replace the generated function's name; pick another name for the generated function [funcgen-spec]
FUNCGEN("INT_MAX = grad(f)")
// CHECK: macro_names.cpp:[[@LINE-1]]:10: error: 'INT_MAX' is a macro (<{{.*}}> defines it), which would replace the generated function's name; pick another name for the generated function [funcgen-spec]
FUNCGEN("assert = grad(f)")
// CHECK: macro_names.cpp:[[@LINE-1]]:10: error: 'assert' is a macro (<{{.*}}> defines it), which would replace the generated function's name; pick another name for the generated function [funcgen-spec]
FUNCGEN("offsetof = grad(f)")
// CHECK: macro_names.cpp:[[@LINE-1]]:10: error: 'offsetof' is a macro (<{{.*}}> defines it), which would replace the generated function's name; pick another name for the generated function [funcgen-spec]
FUNCGEN("FUNCGEN = grad(f)")
// CHECK: macro_names.cpp:[[@LINE-1]]:10: error: 'FUNCGEN' is a macro (<funcgen.h> defines it), which would replace the generated function's name; pick another name for the generated function [funcgen-spec]
FUNCGEN("SQUARED_GRAD = grad(f)")
// CHECK: macro_names.cpp:[[@LINE-1]]:10: error: 'SQUARED_GRAD' is a macro (this file defines it), which would replace the generated function's name; pick another name for the generated function [funcgen-spec]
// A macro defined after the spec still stands where the generated code is compiled.
FUNCGEN("LATER = grad(f)")
// CHECK: macro_names.cpp:[[@LINE-1]]:10: error: 'LATER' is a macro (this file defines it), which would replace the generated function's name; pick another name for the generated function [funcgen-spec]
FUNCGEN("fine = grad(f)")
fg::Tensor f(const fg::Tensor& x) { return x.sin().sum(); }
#define LATER 1
// CHECK: 9 errors generated.
