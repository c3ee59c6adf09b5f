// UX Limitations, "Dynamic shape operations (nonzero and friends)": every example's result must
// have the same shape.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("batched_nonzero = vmap(nonzero_of)")
fg::Tensor nonzero_of(const fg::Tensor& x) { return fg::nonzero(x); }
// CHECK: dynamic_shape.cpp:[[@LINE-1]]:53: error: 'nonzero' on batched tensor 'x' gives a shape that depends on its values, which differ per example; vmap needs every example's result to have the same shape [funcgen-dynamic-shape]
// CHECK: dynamic_shape.cpp:[[@LINE-2]]:53: note: use a mask with fg::where, or a fixed-size alternative
