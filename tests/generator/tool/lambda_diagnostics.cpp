// Lambdas passed to helper templates in the forms funcgen cannot transform yet: each is an error
// at the construct that says what to write instead.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <algorithm>
#include <vector>

namespace diag {

struct Params {
  fg::Tensor w;
};

template <typename F>
fg::Tensor apply(const F& f, const fg::Tensor& x) {
  return f(x);
}

// A lambda that captures a structure, passed to a helper.
FUNCGEN("g1 = grad(captures_structure)")
fg::Tensor captures_structure(const fg::Tensor& x, const Params& p) {
  return apply([&](const fg::Tensor& t) { return t * p.w; }, x).sum();
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:16: error: the lambda passed to 'apply' captures the structure 'p', which cannot be transformed yet; copy the tensors it reads into variables of their own and capture those [funcgen-unsupported]
}

// A helper that copies the lambda it is passed.
template <typename F>
fg::Tensor copied(F f, const fg::Tensor& z) {
  auto g = f;
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:3: error: 'g' holds a lambda defined elsewhere, which cannot be transformed; call that lambda by its own name [funcgen-unsupported]
  return g(z);
}
FUNCGEN("g2 = grad(copies)")
fg::Tensor copies(const fg::Tensor& x) {
  const fg::Tensor w = x.cos();
  auto f = [&](const fg::Tensor& t) { return t * w; };
  return copied(f, x).sum();
}

// A helper's lambda that calls the lambda the helper is passed.
template <typename F>
fg::Tensor doubled(F f, const fg::Tensor& z) {
  auto h = [&](const fg::Tensor& t) { return f(t) * 2; };
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:46: error: a lambda that calls the lambda 'f' it captures cannot be transformed yet; call 'f' outside it, or write the two as one lambda [funcgen-unsupported]
  return h(z);
}
FUNCGEN("g3 = grad(calls_captured)")
fg::Tensor calls_captured(const fg::Tensor& x) {
  const fg::Tensor w = x.cos();
  auto f = [&](const fg::Tensor& t) { return t * w; };
  return doubled(f, x).sum();
}

// A lambda with an init-capture, passed to a helper.
FUNCGEN("g4 = grad(init_capture)")
fg::Tensor init_capture(const fg::Tensor& x) {
  const fg::Tensor w = x.cos();
  return apply([s = w * 2](const fg::Tensor& t) { return t * s; }, x).sum();
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:16: error: the lambda's init-capture 's' cannot be transformed yet; declare it as a variable before the lambda and capture that [funcgen-unsupported]
}

// A lambda made by another lambda, passed to a helper.
FUNCGEN("g5 = grad(held_lambda)")
fg::Tensor held_lambda(const fg::Tensor& x) {
  auto make = [](double k) { return [k](const fg::Tensor& t) { return t * k; }; };
  return apply(make(2.0), x).sum();
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:16: error: a lambda passed to 'apply' must be written there or be a variable of this function ('auto name = [...](...) { ... };') to be transformed [funcgen-unsupported]
}

// A lambda that captures tensors, passed to a function funcgen does not see into.
FUNCGEN("g6 = grad(counted)")
fg::Tensor counted(const fg::Tensor& x) {
  const fg::Tensor w = x.sin();
  auto positive = [&](int64_t i) { return w[i].item<double>() > 0; };
  std::vector<int64_t> idx{0, 1, 2};
  const auto n = std::count_if(idx.begin(), idx.end(), positive);
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:56: error: a lambda that captures tensors passed to 'std::count_if' cannot be transformed: funcgen transforms only the calls it sees, and under a transform the lambda would read the tensors as they are not (the whole batch, or a value from before an assignment); call the lambda in a loop of this function instead [funcgen-unsupported]
  return (w * x).sum() * double(n);
}

// A lambda that uses tensors and returns a container.
FUNCGEN("g7 = grad(listed)")
fg::Tensor listed(const fg::Tensor& x) {
  const fg::Tensor w = x.sin();
  auto values = [&] { return std::vector<double>{w[0].item<double>(), w[1].item<double>()}; };
  const std::vector<double> v = values();
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:33: error: a lambda that uses tensors and returns neither tensors nor a number cannot be transformed yet; make it return tensors or a number, and build the rest outside it [funcgen-unsupported]
  return (w * x).sum() * v[0];
}

// A lambda that calls itself.
FUNCGEN("g8 = grad(recursive)")
fg::Tensor recursive(const fg::Tensor& x) {
  const fg::Tensor w = x.sin();
  auto depth = [&](auto& self, int n) -> double { return n <= 0 ? 0.0 : double(w.size(0)) + self(self, n - 1); };
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:16: error: a lambda that calls itself (directly or through other functions) cannot be transformed; write the recursion as a loop [funcgen-unsupported]
  return (w * x).sum() * depth(depth, 2);
}

}  // namespace diag
// CHECK: 8 errors generated.
