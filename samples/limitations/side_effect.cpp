// UX Limitations, "Mutation: Arbitrary mutation of Python data structures": vmap runs the
// function once for the whole batch, so side effects happen once, not once per example.
// EXIT: 0
#include <funcgen/funcgen.h>

#include <cstdio>
#include <vector>

std::vector<int> lst = {0, 1, 2, 3};

// Prints "hello!" once and pops one element, however large the batch.
FUNCGEN("batched_f = vmap(f)")
fg::Tensor f(const fg::Tensor& x) {
  lst.pop_back();
// CHECK: side_effect.cpp:[[@LINE-1]]:3: warning: 'lst' is modified by 'pop_back' once for the whole batch, not once per example: vmap runs 'f' a single time [funcgen-side-effect]
// CHECK: side_effect.cpp:[[@LINE-7]]:18: note: 'lst' is declared here
// CHECK: side_effect.cpp:[[@LINE-5]]:10: note: return the values instead, or move the side effect out of the function that 'batched_f' transforms
  std::printf("hello!\n");
// CHECK: side_effect.cpp:[[@LINE-1]]:3: warning: output runs once for the whole batch, not once per example: vmap runs 'f' a single time [funcgen-side-effect]
// CHECK: side_effect.cpp:[[@LINE-8]]:10: note: return the values instead, or move the side effect out of the function that 'batched_f' transforms
  return x.sum(0);
}

// Counts calls through a reference parameter: once per batch, not per example.
FUNCGEN("batched_g = vmap(g, in_dims=(0, None))")
fg::Tensor g(const fg::Tensor& x, int& calls) {
  calls += 1;
// CHECK: side_effect.cpp:[[@LINE-1]]:3: warning: 'calls' is modified once for the whole batch, not once per example: vmap runs 'g' a single time [funcgen-side-effect]
// CHECK: side_effect.cpp:[[@LINE-3]]:40: note: 'calls' refers to state outside 'g'
// CHECK: side_effect.cpp:[[@LINE-5]]:10: note: return the values instead, or move the side effect out of the function that 'batched_g' transforms
  return x.sum(0);
}

// The page's example with the list passed in: a parameter of any type with in_dims None is passed
// through as it is, as torch.func takes any Python object there.
FUNCGEN("batched_h = vmap(h, in_dims=(0, None))")
fg::Tensor h(const fg::Tensor& x, std::vector<int>& list) {
  list.pop_back();
// CHECK: side_effect.cpp:[[@LINE-1]]:3: warning: 'list' is modified by 'pop_back' once for the whole batch, not once per example: vmap runs 'h' a single time [funcgen-side-effect]
// CHECK: side_effect.cpp:[[@LINE-3]]:53: note: 'list' refers to state outside 'h'
// CHECK: side_effect.cpp:[[@LINE-5]]:10: note: return the values instead, or move the side effect out of the function that 'batched_h' transforms
  std::printf("hello!\n");
// CHECK: side_effect.cpp:[[@LINE-1]]:3: warning: output runs once for the whole batch, not once per example: vmap runs 'h' a single time [funcgen-side-effect]
// CHECK: side_effect.cpp:[[@LINE-8]]:10: note: return the values instead, or move the side effect out of the function that 'batched_h' transforms
  return x.sum(0);
}

// A count passed on by reference to a function that increments it: once per batch, too.
static void tick(int& n) { n += 1; }
FUNCGEN("batched_k = vmap(k, in_dims=(0, None))")
fg::Tensor k(const fg::Tensor& x, int& calls) {
  tick(calls);
// CHECK: side_effect.cpp:[[@LINE-1]]:8: warning: 'calls' is passed by reference to 'tick', which may modify it once for the whole batch, not once per example: vmap runs 'k' a single time [funcgen-side-effect]
// CHECK: side_effect.cpp:[[@LINE-3]]:40: note: 'calls' refers to state outside 'k'
// CHECK: side_effect.cpp:[[@LINE-5]]:10: note: return the values instead, or move the side effect out of the function that 'batched_k' transforms
  return x.sum(0);
}
