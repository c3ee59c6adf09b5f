// funcgen-spec: malformed specs are reported at the byte inside the string literal.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <list>

FUNCGEN("batched = vmap(f, in_dims=(0, 0, None))")
FUNCGEN("bad = vmapp(f)")
// CHECK: spec_errors.cpp:[[@LINE-1]]:16: error: unknown transform 'vmapp'; did you mean 'vmap'? [funcgen-spec]
// CHECK-NEXT: FUNCGEN("bad = vmapp(f)")
// CHECK-NEXT: {{^}}               ^~~~~{{$}}
// CHECK-NEXT: {{^}}               vmap{{$}}
// CHECK: spec_errors.cpp:[[@LINE-5]]:16: note: transforms are grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp, vmap
FUNCGEN("g = grad(f, argnums=2)")
// CHECK: spec_errors.cpp:[[@LINE-1]]:30: error: argnums 2 selects argument 'n' (int) of 'f', which cannot be differentiated; only fg::Tensor arguments can [funcgen-spec]
FUNCGEN("h = vmap(f, in_dims=(0, 0))")
// CHECK: spec_errors.cpp:[[@LINE-1]]:30: error: in_dims has 2 entries but 'f' takes 3 arguments [funcgen-spec]
// CHECK: spec_errors.cpp:[[@LINE-2]]:30: note: give one int or None per argument, None for arguments that are not mapped
FUNCGEN("i = vmap(f, in_dims=(0, 0, 1))")
// CHECK: spec_errors.cpp:[[@LINE-1]]:37: error: in_dims entry 2 maps argument 'n' (int) of 'f', which is not a tensor; use None [funcgen-spec]
FUNCGEN("j = vmap(f, randomness='sometimes')")
// CHECK: spec_errors.cpp:[[@LINE-1]]:33: error: randomness must be one of 'error', 'different', 'same' [funcgen-spec]
FUNCGEN("k = vmap(f, in_dims=(0, 0, None)")
// CHECK: spec_errors.cpp:[[@LINE-1]]:42: error: expected ')' to close the call to 'vmap' [funcgen-spec]
// CHECK: spec_errors.cpp:[[@LINE-2]]:18: note: the call opens here
FUNCGEN("batched = grad(f)")
// CHECK: spec_errors.cpp:[[@LINE-1]]:10: error: the name 'batched' is already defined; give the generated function another name [funcgen-spec]
fg::Tensor f(const fg::Tensor& x, const fg::Tensor& y, int n) {
  return (x * y).sum() * n;
}

FUNCGEN("m = vmap(unknown_fn)")
// CHECK: spec_errors.cpp:[[@LINE-1]]:19: error: unknown function 'unknown_fn'; name the annotated function or a spec defined earlier in this file [funcgen-spec]
FUNCGEN("n = vmap(batched, in_dim=0)")
// CHECK: spec_errors.cpp:[[@LINE-1]]:28: error: unknown option 'in_dim' for vmap; did you mean 'in_dims'? [funcgen-spec]
// CHECK-NEXT: {{^}}FUNCGEN("n = vmap(batched, in_dim=0)"){{$}}
// CHECK-NEXT: {{^}}                           ^~~~~~{{$}}
// CHECK-NEXT: {{^}}                           in_dims{{$}}
// CHECK: spec_errors.cpp:[[@LINE-5]]:14: note: vmap takes in_dims, out_dims, randomness, chunk_size, control_flow
fg::Tensor g2(fg::Tensor x) { return x.sin(); }

// A spec on a function whose signature cannot be transformed: a container funcgen cannot see into.
FUNCGEN("p = vmap(takes_list)")
fg::Tensor takes_list(const std::list<fg::Tensor>& v) { return fg::zeros({1}); }
// CHECK: spec_errors.cpp:[[@LINE-1]]:52: error: parameter 'v' cannot be transformed: 'std::list<fg::Tensor>' holds tensors in a type funcgen cannot see into; use a struct, std::tuple, std::array, std::vector or std::map of fg::Tensor [funcgen-unsupported]
// CHECK: 10 errors generated.
