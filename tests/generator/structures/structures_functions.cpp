// The torch.func tutorials ported to C++ the way their authors keep parameters: in a struct or a
// std::map, as the tutorials keep them in a dict (functional_call(model, params, x)). funcgen
// transforms them leaf by leaf and returns gradients in the same structures; test_structures.cpp
// checks the values against torch.func's (tests/golden) and finite differences.
#include "structures.h"

namespace structured {

// ---- per-sample gradients, with the parameters in a struct
static fg::Tensor mlp(const Mlp& p, const fg::Tensor& x) {
  fg::Tensor h = fg::linear(x, p.w1, p.b1).relu();
  return fg::linear(h, p.w2, p.b2);
}

FUNCGEN("per_sample_grads = vmap(grad(example_loss), in_dims=(None, 0, 0))")
FUNCGEN("example_grad = grad(example_loss)")
fg::Tensor example_loss(const Mlp& params, const fg::Tensor& x, const fg::Tensor& target) {
  fg::Tensor logp = mlp(params, x).log_softmax(-1);
  return -logp.gather(0, target.reshape({1})).sum();
}

// ---- per-sample gradients, with the parameters in a dict as named_parameters() gives them
static fg::Tensor mlp_dict(const ParamDict& params, const fg::Tensor& x) {
  fg::Tensor h = fg::linear(x, params.at("fc1.weight"), params.at("fc1.bias")).relu();
  return fg::linear(h, params.at("fc2.weight"), params.at("fc2.bias"));
}

FUNCGEN("per_sample_grads_dict = vmap(grad(example_loss_dict), in_dims=(None, 0, 0))")
fg::Tensor example_loss_dict(const ParamDict& params, const fg::Tensor& x, const fg::Tensor& target) {
  fg::Tensor logp = mlp_dict(params, x).log_softmax(-1);
  return -logp.gather(0, target.reshape({1})).sum();
}

FUNCGEN("linear_jacrev = jacrev(affine, argnums=(0, 1))")
fg::Tensor Linear::affine(const fg::Tensor& x) const { return fg::matmul(weight, x) + bias; }

// ---- per-sample gradients and ensembling of a model written as a class (libtorch's style): the
// object is the functions' first argument, as functional_call(model, params, x) takes the module
FUNCGEN("classifier_ensemble = vmap(forward, in_dims=(0, None))")
// in_dims over the fields, as torch.func's in_dims pytrees: an ensemble of first layers sharing one head
FUNCGEN("shared_head_ensemble = vmap(forward, in_dims=(((0, 0), None), None))")
FUNCGEN("classifier_ntk_jacobians = vmap(jacrev(forward), in_dims=(None, 0))")  // the NTK tutorial's jac1, jac2
fg::Tensor Classifier::forward(const fg::Tensor& x) const { return fc2.forward(fc1.forward(x).relu()); }

FUNCGEN("classifier_per_sample_grads = vmap(grad(loss), in_dims=(None, 0, 0))")
fg::Tensor Classifier::loss(const fg::Tensor& x, const fg::Tensor& target) const {
  fg::Tensor logp = forward(x).log_softmax(-1);
  return -logp.gather(0, target.reshape({1})).sum();
}

// ---- model ensembling: the models' parameters stacked in one struct
FUNCGEN("ensemble = vmap(mlp_forward, in_dims=(0, None))")
fg::Tensor mlp_forward(const Mlp& params, const fg::Tensor& x) { return mlp(params, x); }

// ---- jacobians and hessians of a linear layer held in a struct
FUNCGEN("jac_rev_wx = jacrev(predict, argnums=(0, 1))")
FUNCGEN("jac_fwd_wx = jacfwd(predict, argnums=(0, 1))")
FUNCGEN("jac_rev_layer = jacrev(predict)")
FUNCGEN("hess = hessian(predict, argnums=1)")
FUNCGEN("batch_jac_fwd = vmap(jacfwd(predict, argnums=1), in_dims=(None, 0))")
FUNCGEN("predict_jvp = jvp(predict)")
FUNCGEN("predict_vjp = vjp(predict)")              // the pullback returns a Linear and a tensor
FUNCGEN("predict_linearize = linearize(predict)")  // jvp_fn takes a Linear of tangents
FUNCGEN("batched_jvp = vmap(jvp(predict), in_dims=(None, 0, None, 0))")
FUNCGEN("per_weight_jacobians = vmap(jacrev(predict, argnums=1), in_dims=((0, None), 0))")  // one weight per example
fg::Tensor predict(const Linear& layer, const fg::Tensor& x) { return fg::linear(x, layer.weight, layer.bias).tanh(); }

// ---- a structured result, batched
FUNCGEN("batched_heads = vmap(heads, in_dims=(None, 0))")
FUNCGEN("heads_vjp = vjp(heads)")  // cotangents structured as the result
Heads heads(const Linear& layer, const fg::Tensor& x) {
  fg::Tensor z = fg::linear(x, layer.weight, layer.bias);
  return Heads{z, z.softmax(-1)};
}

// ---- nesting, scalars passed through, std::array, std::pair, std::tuple, std::vector
FUNCGEN("scaled_grad = grad(scaled_loss, argnums=(0, 1))")
FUNCGEN("scaled_vjp = vjp(scaled_loss)")  // the gradient keeps the scale
fg::Tensor scaled_loss(const Scaled& s, const std::array<fg::Tensor, 2>& xs) {
  fg::Tensor y = fg::linear(xs[0], s.layer.weight, s.layer.bias) * s.scale;
  if (s.scale > 1.0) y = y.sin();
  return (y * xs[1]).sum();
}

FUNCGEN("pair_grad = grad(pair_loss)")
fg::Tensor pair_loss(const std::pair<fg::Tensor, fg::Tensor>& ab, const fg::Tensor& x) {
  return (ab.first * x.exp() + std::get<1>(ab) * x).pow(2).sum();
}

// A std::tuple of tensors, read with std::get and a structured binding; the helper it
// is passed on to takes the tuple too.
static fg::Tensor tuple_part(const std::tuple<fg::Tensor, fg::Tensor>& p) { return std::get<1>(p) * 1.5; }
FUNCGEN("tuple_grad = grad(tuple_loss)")
FUNCGEN("tuple_vmap = vmap(tuple_loss, in_dims=(0, None))")
fg::Tensor tuple_loss(const std::tuple<fg::Tensor, fg::Tensor>& abs, const fg::Tensor& x) {
  const auto& [a, b] = abs;
  return (std::get<0>(abs) * x.exp() + tuple_part(abs) * x + a * b).pow(2).sum();
}

FUNCGEN("vector_grad = grad(vector_loss)")
FUNCGEN("vector_jacrev = jacrev(vector_loss, argnums=(0, 1))")
fg::Tensor vector_loss(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) {
  fg::Tensor h = x;
  h = fg::matmul(ws[0], h).tanh();
  h = fg::matmul(ws[1], h).tanh();
  return h.sum() * static_cast<double>(ws.size());
}

// A helper that takes its layers as a vector, called with a braced list.
static fg::Tensor two_layers(const std::vector<fg::Tensor>& ws, const fg::Tensor& x) {
  return fg::matmul(ws[1], fg::matmul(ws[0], x).tanh()).sum();
}
FUNCGEN("list_grad = grad(list_loss, argnums=(0, 1))")
FUNCGEN("batched_list = vmap(list_loss, in_dims=(None, None, 0))")
fg::Tensor list_loss(const fg::Tensor& a, const fg::Tensor& b, const fg::Tensor& x) { return two_layers({a, b}, x); }

FUNCGEN("tuple_jacfwd = jacfwd(tuple_fn)")
std::tuple<fg::Tensor, fg::Tensor> tuple_fn(const std::tuple<fg::Tensor, Linear>& t) {
  const Linear& layer = std::get<1>(t);
  return {fg::linear(std::get<0>(t), layer.weight, layer.bias), std::get<0>(t).sum()};
}

// ---- std::optional<fg::Tensor>: libtorch's optional bias, tested, dereferenced and passed on
// A helper that takes the optional too: specialized at each call on what it is passed.
static fg::Tensor gated(const fg::Tensor& x, const fg::Tensor& w, const std::optional<fg::Tensor>& bias) {
  fg::Tensor y = fg::linear(x, w, bias).tanh();  // passed on as F::linear takes it
  if (bias.has_value()) y = y * bias->sigmoid();
  return y;
}

FUNCGEN("dense_grad = grad(dense_loss, argnums=(1, 2))")
FUNCGEN("dense_jacfwd = jacfwd(dense_loss, argnums=1)")
FUNCGEN("dense_hessian = hessian(dense_loss)")
FUNCGEN("dense_input_grad = grad(dense_loss)")
FUNCGEN("dense_jvp = jvp(dense_loss)")
FUNCGEN("dense_vjp = vjp(dense_loss)")
FUNCGEN("dense_linearize = linearize(dense_loss)")
FUNCGEN("dense_per_example = vmap(dense_loss, in_dims=(0, None, None))")
FUNCGEN("dense_per_example_grads = vmap(grad(dense_loss, argnums=(1, 2)), in_dims=(0, None, None))")
fg::Tensor dense_loss(const fg::Tensor& x, const fg::Tensor& w, const std::optional<fg::Tensor>& bias) {
  const fg::Tensor y = gated(x, w, bias);
  return (y * y).sum() + gated(x.cos(), w, std::nullopt).sum();
}

FUNCGEN("layer_grad = grad(layer_loss)")
FUNCGEN("layer_vjp = vjp(layer_loss)")
FUNCGEN("layer_jacrev = jacrev(layer_loss, argnums=(0, 2))")
FUNCGEN("batched_layer = vmap(layer_loss, in_dims=(None, 0, 0))")
fg::Tensor layer_loss(const Dense& layer, const fg::Tensor& x, const std::optional<fg::Tensor>& scale) {
  fg::Tensor h = layer.forward(x);  // a member function reading the optional field: specialized too
  if (layer.bias) h = h + *layer.bias * 0.5;
  if (scale == std::nullopt) return h.tanh().sum();  // an early return where it holds none
  return (h.tanh() * scale.value()).sum() + scale.value_or(h).pow(2).sum();
}

// The ways a user tests and passes an optional: `!b`, `||`, `!=`, a flag beside it, a default of
// std::nullopt, a switch whose cases return, and a plain tensor passed for an optional parameter.
static fg::Tensor shift(const fg::Tensor& x, const std::optional<fg::Tensor>& by = std::nullopt) {
  if (by != std::nullopt) return x + *by;
  return x;
}
FUNCGEN("tested_grad = grad(tested_loss, argnums=(0, 1))")
FUNCGEN("tested_bias_grad = grad(tested_loss, argnums=1)")
FUNCGEN("tested_mapped_bias = vmap(tested_loss, in_dims=(None, 0, None, None))")
fg::Tensor tested_loss(const fg::Tensor& x, const std::optional<fg::Tensor>& b, bool use_bias, int mode) {
  fg::Tensor y = shift(x);  // the default: std::nullopt
  if (use_bias && b) y = shift(y, *b);  // a tensor for the optional parameter
  if (mode < 0 || !b) return y.pow(2).sum();
  switch (mode) {
    case 0:
      return (y * *b).sum();
    case 1: {
      const fg::Tensor z = y.sin() * b.value();
      return z.sum();
    }
    default:
      break;
  }
  return shift(y, b).exp().sum();
}

// has_aux=True with the parameters in a struct: the logits come back beside the gradient.
FUNCGEN("aux_grad = grad(aux_loss, has_aux=True)")
FUNCGEN("aux_grad_and_value = grad_and_value(aux_loss, argnums=(0, 1), has_aux=True)")
FUNCGEN("aux_jacfwd = jacfwd(aux_loss, argnums=(0, 1), has_aux=True)")
std::tuple<fg::Tensor, fg::Tensor> aux_loss(const Mlp& params, const fg::Tensor& x) {
  const fg::Tensor logits = mlp(params, x);
  return {logits.pow(2).sum(), logits};
}

// has_aux=True with a structured aux (torch.func's aux pytree): the model's heads in a struct, and
// a tuple of tensors.
FUNCGEN("heads_aux_grad = grad(heads_aux_loss, has_aux=True)")
FUNCGEN("heads_aux_grad_and_value = grad_and_value(heads_aux_loss, has_aux=True)")
FUNCGEN("heads_aux_jacrev = jacrev(heads_aux_loss, argnums=1, has_aux=True)")
FUNCGEN("heads_aux_jacfwd = jacfwd(heads_aux_loss, has_aux=True)")
FUNCGEN("heads_aux_jvp = jvp(heads_aux_loss, has_aux=True)")
FUNCGEN("heads_aux_vjp = vjp(heads_aux_loss, has_aux=True)")
// Per-sample gradients, losses and heads at once: vmap of a result of nested tuples.
FUNCGEN("heads_aux_psg = vmap(grad_and_value(heads_aux_loss, has_aux=True), in_dims=(None, 0))")
std::tuple<fg::Tensor, Heads> heads_aux_loss(const Linear& layer, const fg::Tensor& x) {
  const fg::Tensor logits = fg::linear(x, layer.weight, layer.bias);
  const fg::Tensor probs = logits.softmax(-1);
  return {probs.pow(2).sum(), Heads{logits, probs}};
}
FUNCGEN("tuple_aux_grad = grad(tuple_aux_loss, has_aux=True)")
FUNCGEN("tuple_aux_grad_and_value = grad_and_value(tuple_aux_loss, has_aux=True)")
FUNCGEN("tuple_aux_jacrev = jacrev(tuple_aux_loss, has_aux=True)")
FUNCGEN("tuple_aux_psg = vmap(grad(tuple_aux_loss, has_aux=True), in_dims=1, out_dims=1)")
std::tuple<fg::Tensor, std::tuple<fg::Tensor, fg::Tensor>> tuple_aux_loss(const fg::Tensor& x) {
  const fg::Tensor y = x.sin();
  return {y.sum(), {y, x.cos()}};
}

// Only the result is structured: the flat function takes the same parameters, so it has a name of
// its own (an overload would be the same function).
FUNCGEN("two_heads_vmap = vmap(two_heads)")
FUNCGEN("two_heads_jacrev = jacrev(two_heads)")
FUNCGEN("two_heads_jvp = jvp(two_heads)")
Heads two_heads(const fg::Tensor& x) { return Heads{x.sin() * x, x.cos()}; }

// A case that returns where the optional holds none (what follows it up to the next case is not
// run then), and a switch on an enum inside a branch (AD declares its selector before the branch).
FUNCGEN("case_grad = grad(case_loss)")
fg::Tensor case_loss(const fg::Tensor& x, const std::optional<fg::Tensor>& b, Mode mode, bool twice) {
  fg::Tensor y = x;
  if (twice) {
    switch (mode) {
      case Mode::Scale:
        if (!b) return y.sin().sum();
        y = y * *b;
        break;
      case Mode::Keep: {
        const fg::Tensor z = y.cos();
        return z.sum();
      }
    }
    y = y * 2.0;
  }
  return y.exp().sum();
}

FUNCGEN("two_layer_grad = grad(two_layer_loss)")
FUNCGEN("two_layer_per_example_grads = vmap(grad(two_layer_loss), in_dims=(None, 0))")
fg::Tensor two_layer_loss(const TwoLayers& net, const fg::Tensor& x) { return net(x).pow(2).sum(); }

// A local layer copied from a part of the model, then assigned another part whole (the struct's own
// copy assignment: leaf by leaf).
FUNCGEN("chosen_layer_grad = grad(chosen_layer_loss)")
FUNCGEN("chosen_layer_per_example_grads = vmap(grad(chosen_layer_loss), in_dims=(None, 0))")
fg::Tensor chosen_layer_loss(const TwoLayers& net, const fg::Tensor& x) {
  Affine layer = net.fc1;
  fg::Tensor h = layer(x);
  if (h.size(0) == 4) layer = net.fc2;
  return layer(h).pow(2).sum() + net.fc1(x).sum();
}

FUNCGEN("dense_forward_jacrev = jacrev(forward)")
fg::Tensor Dense::forward(const fg::Tensor& x) const {
  return bias ? fg::matmul(weight, x) + *bias : fg::matmul(weight, x);
}

// A dict of results (a model's named heads) and a list of them, built where they are returned: a map
// of jacobians, of tangents, of batched values; a dict aux.
FUNCGEN("named_heads_vmap = vmap(named_heads)")
FUNCGEN("named_heads_jacrev = jacrev(named_heads)")
FUNCGEN("named_heads_jacfwd = jacfwd(named_heads)")
FUNCGEN("named_heads_jvp = jvp(named_heads)")
ParamDict named_heads(const fg::Tensor& x) {
  if (x.dim() > 1) return {{"mean", x.mean()}, {"norm", x.norm()}};
  return {{"norm", (x * x).sum().sqrt()}, {"mean", x.mean()}};  // the same keys, in another order
}

FUNCGEN("dict_aux_grad = grad(dict_aux, has_aux=True)")
FUNCGEN("dict_aux_psg = vmap(grad(dict_aux, has_aux=True))")
std::tuple<fg::Tensor, ParamDict> dict_aux(const fg::Tensor& x) {
  const fg::Tensor loss = (x.sin() * x).sum();
  return {loss, {{"loss", loss}, {"max", x.max()}}};
}

FUNCGEN("listed_vmap = vmap(listed)")
FUNCGEN("listed_jacrev = jacrev(listed)")
std::vector<fg::Tensor> listed(const fg::Tensor& x) { return {x.sin(), x.cos() * 2, x.sum()}; }


// Lambdas over the parameters, as a training script writes them: one that captures the model by
// reference (passed to a helper template that applies it twice), one that captures a copy, one that
// captures a part through a reference and calls its member function, one that takes a layer; a map
// of named parameters captured whole.
template <typename F>
fg::Tensor applied_twice(F f, const fg::Tensor& x) {
  return f(f(x));
}

FUNCGEN("captured_grad = grad(captured_loss, argnums=(0, 1))")
FUNCGEN("captured_psg = vmap(grad(captured_loss), in_dims=(None, 0))")
FUNCGEN("captured_hessian = hessian(captured_loss, argnums=1)")
fg::Tensor captured_loss(const Scaled& s, const fg::Tensor& x) {
  auto dense = [](const Linear& l, const fg::Tensor& z) { return fg::tanh(fg::linear(z, l.weight, l.bias)); };
  const Linear& layer = s.layer;
  auto step = [&](const fg::Tensor& z) { return dense(s.layer, z) * s.scale + z; };
  auto copied = [s](const fg::Tensor& z) { return fg::linear(z, s.layer.weight, s.layer.bias) * s.scale; };
  auto by_part = [&layer](const fg::Tensor& z) { return layer.forward(z).sin(); };
  return (applied_twice(step, x) + copied(x) + by_part(x)).pow(2).sum();
}

FUNCGEN("captured_dict_grad = grad(captured_dict_loss)")
FUNCGEN("captured_dict_psg = vmap(grad(captured_dict_loss), in_dims=(None, 0))")
fg::Tensor captured_dict_loss(const ParamDict& p, const fg::Tensor& x) {
  auto layer = [&](const fg::Tensor& z) { return fg::linear(z, p.at("fc1.weight"), p.at("fc1.bias")).tanh(); };
  return applied_twice(layer, x).pow(2).sum();
}


// A structure that a helper and a lambda build and return, kept in a local: under vmap they run
// unbatched (nothing they read is mapped), and their tensors are read off the structure.
inline Linear merged(const Scaled& s) { return Linear{s.layer.weight * s.scale, s.layer.bias.sin()}; }
FUNCGEN("merged_vmap = vmap(merged_loss, in_dims=(None, 0))")
FUNCGEN("merged_psg = vmap(grad(merged_loss), in_dims=(None, 0))")
FUNCGEN("merged_grad = grad(merged_loss)")
fg::Tensor merged_loss(const Scaled& s, const fg::Tensor& x) {
  const Linear m = merged(s);
  auto shifted = [&](double by) { return Linear{s.layer.weight + by, s.layer.bias}; };
  const double result = 0.5;  // (the name generated code reading a returned structure must not hide)
  const Linear n = shifted(result);
  return m.forward(x).tanh().pow(2).sum() + n.forward(x).sum();
}

// A structure the function takes by non-const reference and assigns a tensor of: the generated
// functions take it as the user does (a wrapper taking it const could not pass its leaves on).
FUNCGEN("accumulated_grad = grad(accumulated_loss, argnums=1)")
FUNCGEN("accumulated_grads = grad(accumulated_loss, argnums=(0, 1))")
fg::Tensor accumulated_loss(Linear& acc, const fg::Tensor& x) {
  acc.weight = acc.weight * x.sin();
  return (acc.weight * acc.bias + x * x).sum();
}

}  // namespace structured
