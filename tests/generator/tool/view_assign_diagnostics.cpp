// Assignment into a view (`y[i] = v`) is lowered as the in-place copy_ (fill_ for a number) that
// fg::Tensor's rvalue operator= runs, so it goes through every transform
// (tests/generator/ad/test_view_assign.cpp); what an in-place write cannot do is an error at the
// assignment, never silently wrong code.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <vector>

// Writing into a ?: of tensors.
FUNCGEN("chosen_grad = grad(chosen)")
fg::Tensor chosen(const fg::Tensor& x, bool c) {
  fg::Tensor a = x * 2, b = x * 3;
  (c ? a : b)[0] = x[1];
  return (a * b).sum();
}
// CHECK: view_assign_diagnostics.cpp:[[@LINE-3]]:4: error: a '?:' that chooses between tensors where it is written to, or inside a side of a '?:' on numbers, cannot be differentiated yet; use an if/else instead [funcgen-unsupported]

// Into a view of a view that an if carried: the write would not reach y.
FUNCGEN("carried_grad = grad(carried)")
fg::Tensor carried(const fg::Tensor& x, bool second) {
  fg::Tensor y = x * 2;
  fg::Tensor row = y[0];
  if (second) row = y[1];
  row[0] = x[2][2];
  return (y * y.sin()).sum();
}
// CHECK: view_assign_diagnostics.cpp:[[@LINE-3]]:3: error: in-place 'copy_' writes into a view of 'row', a view that an 'if' or a loop carried, which cannot be differentiated yet; take the view where it is written [funcgen-unsupported]

// Into what contiguous(), reshape() or detach() returned: the input itself, a copy, or memory
// without derivatives, which funcgen cannot tell apart.
FUNCGEN("layout_dependent_grad = grad(layout_dependent)")
fg::Tensor layout_dependent(const fg::Tensor& x) {
  fg::Tensor y = x * 2;
  y.contiguous()[0] = x[1];
  return (y * y.sin()).sum();
}
// CHECK: view_assign_diagnostics.cpp:[[@LINE-3]]:3: error: in-place 'copy_' writes into a view of what 'contiguous' returned, which is its input's memory or a copy depending on the input's layout, so funcgen cannot tell whether the write changes the input; write into the input itself (or a view() of it), or into a clone() [funcgen-unsupported]

FUNCGEN("reshaped_grad = grad(reshaped)")
fg::Tensor reshaped(const fg::Tensor& x) {
  fg::Tensor y = x.t() * 2;
  fg::Tensor flat = y.reshape({-1});
  flat.narrow(0, 0, 2) = 0.0;
  return (y * y.sin()).sum();
}
// CHECK: view_assign_diagnostics.cpp:[[@LINE-3]]:3: error: in-place 'fill_' writes into a view of what 'reshape' returned, which is its input's memory or a copy depending on the input's layout, so funcgen cannot tell whether the write changes the input; write into the input itself (or a view() of it), or into a clone() [funcgen-unsupported]

FUNCGEN("detached_grad = grad(detached)")
fg::Tensor detached(const fg::Tensor& x) {
  fg::Tensor y = x * 2;
  y.detach()[1] = x[0];
  return (y * y.sin()).sum();
}
// CHECK: view_assign_diagnostics.cpp:[[@LINE-3]]:3: error: in-place 'copy_' writes into a view of what 'detach' returned, which shares its input's memory but not its derivatives, so the write cannot be differentiated; write into the input itself, or into a clone() [funcgen-unsupported]

// Into a view of an element of a vector of tensors.
FUNCGEN("listed_grad = grad(listed)")
fg::Tensor listed(const fg::Tensor& x) {
  std::vector<fg::Tensor> v{x * 2, x * 3};
  v[0][1] = x[2];
  return (v[0] * v[1].sin()).sum();
}
// CHECK: view_assign_diagnostics.cpp:[[@LINE-3]]:3: error: in-place 'copy_' on a view of an element of a vector of tensors cannot be differentiated yet (later reads of the vector would not see it); compute a new tensor (w = w * 2) instead [funcgen-unsupported]

// Into an expanded view (it overlaps itself: the runtime refuses it, as PyTorch does).
FUNCGEN("expanded_grad = grad(expanded)")
fg::Tensor expanded(const fg::Tensor& x) {
  fg::Tensor y = x[0] * 2;
  y.expand({3, 4})[0] = x[1];
  return (y * y).sum();
}
// CHECK: view_assign_diagnostics.cpp:[[@LINE-3]]:3: error: in-place 'copy_' writes into a view of 'y' made by 'expand', which cannot be differentiated; clone() the view first [funcgen-unsupported]

// Under vmap, batched values into a row of a tensor that is not batched (torch.func's in-place error).
FUNCGEN("into_fresh_vmap = vmap(into_fresh)")
fg::Tensor into_fresh(const fg::Tensor& x) {
  fg::Tensor y = fg::zeros({3, 4}, fg::kDouble);
  y[0] = x[1];
  return y;
}
// CHECK: view_assign_diagnostics.cpp:[[@LINE-3]]:8: error: in-place 'copy_' writes batched values of 'x[1]' into 'y[0]', which is not batched; under vmap it cannot hold one result per example [funcgen-inplace-batched]
// CHECK: view_assign_diagnostics.cpp:[[@LINE-5]]:18: note: 'y' is created by 'fg::zeros', which is not batched; create it with 'x.new_zeros' so that it is batched like 'x'
// CHECK: fix-it:"{{.*}}view_assign_diagnostics.cpp":{[[@LINE-6]]:18-[[@LINE-6]]:27}:"x.new_zeros"
