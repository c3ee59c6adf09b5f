// Lambdas passed to helper templates in the forms funcgen cannot transform yet: each is an error
// at the construct that says what to write instead.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace diag {

template <typename F>
fg::Tensor apply(const F& f, const fg::Tensor& x) {
  return f(x);
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

// A lambda with an init-capture by reference (one by copy goes through).
FUNCGEN("g4 = grad(init_capture)")
fg::Tensor init_capture(const fg::Tensor& x) {
  const fg::Tensor w = x.cos();
  return apply([&s = w](const fg::Tensor& t) { return t * s; }, x).sum();
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:18: error: the lambda's init-capture '&s' is a reference, which cannot be transformed yet; declare the reference before the lambda (const auto& s = ...;) and capture that [funcgen-unsupported]
}

// A lambda that captures a structure holding an optional tensor.
struct Dense {
  fg::Tensor w;
  std::optional<fg::Tensor> b;
};
FUNCGEN("g10 = grad(captures_optional)")
fg::Tensor captures_optional(const Dense& d, const fg::Tensor& x) {
  auto f = [&](const fg::Tensor& t) { return fg::matmul(d.w, t).tanh(); };
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:57: error: the lambda captures 'd', which holds a std::optional, and cannot be transformed yet; read the tensors it needs into variables before the lambda and capture those [funcgen-unsupported]
  return f(x).sum();
}

// A copy of a structure captured, then a field of the structure assigned (the lambda would read
// the new value).
struct Layer {
  fg::Tensor w;
};
FUNCGEN("g11 = grad(copy_then_assigned)")
fg::Tensor copy_then_assigned(const fg::Tensor& x) {
  Layer m{x.cos()};
  auto f = [m](const fg::Tensor& t) { return t * m.w; };
  m.w = m.w * 3;
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:3: error: 'm' is assigned after a lambda captured a copy of it, which cannot be transformed; capture it by reference or pass it as a parameter [funcgen-unsupported]
  return f(x).sum();
}
FUNCGEN("g13 = grad(init_copy_then_assigned)")
fg::Tensor init_copy_then_assigned(const fg::Tensor& x) {
  Layer m{x.cos()};
  auto f = [l = m](const fg::Tensor& t) { return t * l.w; };
  m = Layer{x.sin()};
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:3: error: 'm' is assigned after a lambda captured a copy of it, which cannot be transformed; capture it by reference or pass it as a parameter [funcgen-unsupported]
  return f(x).sum();
}

// A generic lambda that captures a structure, passed to a helper that calls it with a tensor and
// with a number.
template <typename F>
fg::Tensor both_kinds(F f, const fg::Tensor& x) {
  return f(x) + f(x.sum().item<double>()) * x;
}
FUNCGEN("g12 = grad(generic_twice)")
fg::Tensor generic_twice(const Layer& l, const fg::Tensor& x) {
  auto f = [&](const auto& z) { return (z * l.w.sum()).sin(); };
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:12: error: a generic lambda ('auto' parameters) that is passed to a helper or captured, and called with arguments of different types, cannot be transformed yet; give its parameters types (const fg::Tensor& z) [funcgen-unsupported]
  return both_kinds(f, x).sum();
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
// CHECK: 10 errors generated.
