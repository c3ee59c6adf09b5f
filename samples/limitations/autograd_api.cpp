// UX Limitations, "torch.autograd APIs": eager autograd calls inside a transformed function cannot
// be transformed; use the functional transforms instead.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <vector>

// Stand-ins for libtorch's eager autograd API, as code that also links libtorch would see it.
namespace torch::autograd {
std::vector<fg::Tensor> grad(const std::vector<fg::Tensor>& outputs, const std::vector<fg::Tensor>& inputs);
namespace functional {
fg::Tensor jacobian(fg::Tensor (*f)(const fg::Tensor&), const fg::Tensor& x);
}  // namespace functional
}  // namespace torch::autograd

// Don't do this: the gradient is taken eagerly, inside the batched function.
FUNCGEN("batched_grad_norm = vmap(grad_norm)")
fg::Tensor grad_norm(const fg::Tensor& x) {
  fg::Tensor y = (x * x).sum();
  return torch::autograd::grad({y}, {x})[0].norm();
// CHECK: autograd_api.cpp:[[@LINE-1]]:10: error: 'torch::autograd::grad' is an eager autograd API that funcgen's transforms cannot see through; use funcgen's grad or vjp transform instead [funcgen-autograd-api]
// CHECK: autograd_api.cpp:[[@LINE-4]]:12: note: funcgen's equivalent is a spec on 'grad_norm', e.g. FUNCGEN("grad_norm_grad = grad(grad_norm)")
}

// Do this: differentiate with a spec, e.g. FUNCGEN("per_example_grads = vmap(grad(squared_norm))"),
// which funcgen's AD transforms generate at compile time.
