// User-given derivative rules (FUNCGEN("custom_vjp(f)") / FUNCGEN("custom_jvp(f)") before the rule)
// for the AD tests (test_custom_rules.cpp). Each rule gives a result the body's derivative would
// not, so the tests can tell that the rule was used.
#include <funcgen/funcgen.h>

namespace custom {

// The identity, whose gradient is clipped to [-1, 1] (JAX's clip_gradient example).
FUNCGEN("clipped_jacrev = jacrev(clip_gradient)")
fg::Tensor clip_gradient(const fg::Tensor& x) { return x.clone(); }

FUNCGEN("custom_vjp(clip_gradient)")
fg::Tensor clip_gradient_vjp(const fg::Tensor& x, const fg::Tensor& result, const fg::Tensor& grad) {
  return grad.clamp(-1, 1);
}

FUNCGEN("clipped_grad = grad(clipped_loss)")
FUNCGEN("clipped_per_sample = vmap(grad(clipped_loss))")
fg::Tensor clipped_loss(const fg::Tensor& x) { return (clip_gradient(x * 3) * x).sum(); }

// log(1 + exp(x)): its derivative exp(x) / (1 + exp(x)) overflows to nan for large x; the rule
// is the stable sigmoid (JAX's log1pexp example).
fg::Tensor log1pexp(const fg::Tensor& x) { return (x.exp() + 1).log(); }

FUNCGEN("custom_jvp(log1pexp)")
fg::Tensor log1pexp_jvp(const fg::Tensor& x, const fg::Tensor& x_tangent) { return x_tangent * x.sigmoid(); }

FUNCGEN("custom_vjp(log1pexp)")
fg::Tensor log1pexp_vjp(const fg::Tensor& x, const fg::Tensor& result, const fg::Tensor& grad) {
  return grad * x.sigmoid();
}

FUNCGEN("softplus_jvp = jvp(softplus_sum)")
FUNCGEN("softplus_grad = grad(softplus_sum)")
FUNCGEN("softplus_hessian = hessian(softplus_sum)")
fg::Tensor softplus_sum(const fg::Tensor& x) { return log1pexp(x).sum(); }

// Two tensor arguments: the rule returns one gradient each. Written in fg ops, the rule is
// differentiated again for second derivatives.
fg::Tensor weighted(const fg::Tensor& x, const fg::Tensor& w) { return x * x * w; }

FUNCGEN("custom_vjp(weighted)")
std::tuple<fg::Tensor, fg::Tensor> weighted_vjp(const fg::Tensor& x, const fg::Tensor& w, const fg::Tensor& result,
                                                const fg::Tensor& grad) {
  return std::make_tuple(grad * x * w * 2, grad * x * x);
}

FUNCGEN("weighted_grad = grad(weighted_loss, argnums=(0, 1))")
FUNCGEN("weighted_second = grad(grad(weighted_loss))")
FUNCGEN("weighted_per_sample = vmap(grad(weighted_loss, argnums=(0, 1)), in_dims=(0, None))")
fg::Tensor weighted_loss(const fg::Tensor& x, const fg::Tensor& w) { return weighted(x.sin(), w).sum(); }

}  // namespace custom
