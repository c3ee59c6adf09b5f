// Lambdas passed to helper templates, and lambdas called by name, in the forms funcgen cannot
// transform yet: each is an error at the construct that says what to write instead.
// EXIT: 1
#include <funcgen/funcgen.h>

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

// A passed lambda that returns a number, called in the helper.
template <typename F>
double apply_number(const F& f, const fg::Tensor& x) {
  return f(x);
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:10: error: 'f' is a lambda that 'apply_number' is passed, and it returns a number here, which cannot be transformed yet; compute the number where the lambda is defined, or make it return a tensor [funcgen-unsupported]
}
FUNCGEN("g2 = grad(passed_number)")
fg::Tensor passed_number(const fg::Tensor& x) {
  auto norm = [&](const fg::Tensor& t) { return t.sum().item<double>(); };
  return x * apply_number(norm, x);
}

// A helper that returns a number, passed a lambda written in the call.
template <typename F>
double total(const F& f, const fg::Tensor& x) {
  return f(x).sum().template item<double>();
}
FUNCGEN("g3 = grad(number_of_inline)")
fg::Tensor number_of_inline(const fg::Tensor& x) {
  return x * total([&](const fg::Tensor& t) { return t * x; }, x);
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:20: error: 'total' returns a number and is passed a lambda that is written in the call, which cannot be transformed yet; define the lambda as a variable of the annotated function [funcgen-unsupported]
}

// A lambda that returns a number, called by name after a tensor it captures was assigned: it
// would see the tensor's old value in the derivative code.
FUNCGEN("g4 = grad(stale_capture)")
fg::Tensor stale_capture(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  auto dot = [&](const fg::Tensor& r) { return (r * y).sum().item<double>(); };
  y = y * 2;
  const double s = dot(x);
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:20: error: 'dot' returns a number and is called after 'y', a tensor it captures by reference, was assigned: funcgen cannot differentiate that yet; call it before the assignment, or pass 'y' as a parameter [funcgen-unsupported]
  return (x * s).sum();
}

// A lambda made by another lambda, passed to a helper.
FUNCGEN("g5 = grad(held_lambda)")
fg::Tensor held_lambda(const fg::Tensor& x) {
  auto make = [](double k) { return [k](const fg::Tensor& t) { return t * k; }; };
  return apply(make(2.0), x).sum();
// CHECK: lambda_diagnostics.cpp:[[@LINE-1]]:16: error: a lambda passed to 'apply' must be written there or be a variable of this function ('auto name = [...](...) { ... };') to be transformed [funcgen-unsupported]
}

}  // namespace diag
// CHECK: 5 errors generated.
