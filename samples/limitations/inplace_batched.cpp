// UX Limitations, "Mutation: in-place PyTorch Operations": an in-place op cannot write batched
// values into a tensor that is not batched.
// EXIT: 1
#include <funcgen/funcgen.h>

// x is not mapped (in_dims None) but y is: x cannot hold one result per example.
FUNCGEN("add_unbatched = vmap(f, in_dims=(None, 0))")
// Both mapped: fine.
FUNCGEN("add_batched = vmap(f, in_dims=(0, 0))")
fg::Tensor f(const fg::Tensor& x, const fg::Tensor& y) {
  x.add_(y);
// CHECK: inplace_batched.cpp:[[@LINE-1]]:5: error: in-place 'add_' writes batched values of 'y' into 'x', which is not batched; under vmap it cannot hold one result per example [funcgen-inplace-batched]
// CHECK: inplace_batched.cpp:[[@LINE-3]]:32: note: 'x' is not mapped: its in_dim is None; map it too, or use the out-of-place form ('x = x + ...')
  return x;
}

// fg::zeros creates an unbatched tensor; copying batched `vec` into its diagonal fails.
FUNCGEN("batched_diag_embed = vmap(diag_embed)")
fg::Tensor diag_embed(const fg::Tensor& vec) {
  fg::Tensor result = fg::zeros({vec.size(0), vec.size(0)});
  result.diagonal().copy_(vec);
// CHECK: inplace_batched.cpp:[[@LINE-1]]:21: error: in-place 'copy_' writes batched values of 'vec' into 'result.diagonal()', which is not batched; under vmap it cannot hold one result per example [funcgen-inplace-batched]
// CHECK: inplace_batched.cpp:[[@LINE-3]]:23: note: 'result' is created by 'fg::zeros', which is not batched; create it with 'vec.new_zeros' so that it is batched like 'vec'
// CHECK: fix-it:"{{.*}}inplace_batched.cpp":{{[{]}}[[@LINE-4]]:23-[[@LINE-4]]:32{{[}]}}:"vec.new_zeros"
  return result;
}
