// A spec error beside a valid nested spec on the same function: the error is reported and the other
// spec is still checked and generated (this ended in std::bad_alloc, std::length_error or SIGSEGV).
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("bad = vmap(f, in_dims=(0, 0, 0))")
// CHECK: spec_error_beside_nesting.cpp:[[@LINE-1]]:32: error: in_dims has 3 entries but 'f' takes 2 arguments [funcgen-spec]
// CHECK: spec_error_beside_nesting.cpp:[[@LINE-2]]:32: note: give one int or None per argument, None for arguments that are not mapped
FUNCGEN("j = jacrev(vmap(f, in_dims=(0, None)), argnums=(0, 1))")
FUNCGEN("jj = jacrev(vmap(jacrev(f, argnums=(0, 1)), in_dims=(0, None)), argnums=(0, 1))")
fg::Tensor f(const fg::Tensor& x, const fg::Tensor& y) { return (x * y).sin(); }
