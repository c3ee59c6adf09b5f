// UX Limitations, "Mutation: out= PyTorch Operations": vmap does not support out= operations.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("batched_f = vmap(f)")
fg::Tensor f(const fg::Tensor& x, const fg::Tensor& y) {
  fg::Tensor out = fg::empty({3});
  fg::add_out(out, x, y);
// CHECK: out_variant.cpp:[[@LINE-1]]:3: error: 'fg::add_out' writes into its 'out' argument, which vmap does not support; use the functional 'fg::add' and assign its result [funcgen-out-variant]
// CHECK: fix-it:"{{.*}}out_variant.cpp":{{[{]}}[[@LINE-2]]:3-[[@LINE-2]]:25{{[}]}}:"out = fg::add(x, y)"
  return out;
}
