// Constructs of containers of tensors, each in a function of one tensor (3x4) that returns a
// scalar, run by test_constructs.cpp through every transform against finite differences in float64
// and the loop of unbatched calls (as constructs_functions.cpp's): a std::vector of tensors
// assigned whole in a loop (the LSTM idiom: `state = new_state;`, `state = {a, b};`,
// `state = std::move(n);`), a std::vector of structures of tensors, and range-for loops over C arrays.
#include <funcgen/funcgen.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace cs {

// ---- a vector of tensors assigned whole, each trip of a loop: a new state from the old one
FUNCGEN("whole_state_grad = grad(whole_state)")
FUNCGEN("whole_state_jvp = jvp(whole_state)")
FUNCGEN("whole_state_jacfwd = jacfwd(whole_state)")
FUNCGEN("whole_state_hessian = hessian(whole_state)")
FUNCGEN("whole_state_jacrev2 = jacrev(jacrev(whole_state))")
FUNCGEN("whole_state_hvp = jvp(grad(whole_state))")
FUNCGEN("whole_state_vmap = vmap(whole_state)")
FUNCGEN("whole_state_psg = vmap(grad(whole_state))")
FUNCGEN("whole_state_vjacrev = vmap(jacrev(whole_state))")
fg::Tensor whole_state(const fg::Tensor& x) {
  std::vector<fg::Tensor> state{x, x * 2};
  for (int i = 0; i < 3; ++i) {
    std::vector<fg::Tensor> new_state{state[0] * state[1].cos(), state[1].sin() + state[0] * 0.5};
    state = new_state;
  }
  std::vector<fg::Tensor> last{state[1], state[0]};
  for (int i = 0; i < 2; ++i) {
    std::vector<fg::Tensor> next{last[1].tanh(), last[0] * last[1]};
    last = std::move(next);
  }
  return (state[0] + state[1]).sum() + (last[0] * last[1]).sum() + double(state.size());
}

// ---- assigned braced lists (both elements read before either is assigned), read at a run-time index
FUNCGEN("braced_state_grad = grad(braced_state)")
FUNCGEN("braced_state_jvp = jvp(braced_state)")
FUNCGEN("braced_state_jacfwd = jacfwd(braced_state)")
FUNCGEN("braced_state_hessian = hessian(braced_state)")
FUNCGEN("braced_state_jacrev2 = jacrev(jacrev(braced_state))")
FUNCGEN("braced_state_hvp = jvp(grad(braced_state))")
FUNCGEN("braced_state_vmap = vmap(braced_state)")
FUNCGEN("braced_state_psg = vmap(grad(braced_state))")
FUNCGEN("braced_state_vjacrev = vmap(jacrev(braced_state))")
fg::Tensor braced_state(const fg::Tensor& x) {
  std::vector<fg::Tensor> state{x, x.exp() * 0.25};
  for (int i = 0; i < 3; ++i) state = {state[0] * state[1], state[1].sin()};
  fg::Tensor total = state.front() + state.back();
  for (size_t k = 0; k < 4; ++k) total = total + state[k % 2] * double(k);
  for (const auto& s : state) total = total * s.cos();
  return total.sum();
}

// ---- a vector of structures of tensors: a range-for, an index loop, fields assigned
struct Layer {
  fg::Tensor w;
  fg::Tensor b;
};
FUNCGEN("layer_vector_grad = grad(layer_vector)")
FUNCGEN("layer_vector_jvp = jvp(layer_vector)")
FUNCGEN("layer_vector_jacfwd = jacfwd(layer_vector)")
FUNCGEN("layer_vector_hessian = hessian(layer_vector)")
FUNCGEN("layer_vector_jacrev2 = jacrev(jacrev(layer_vector))")
FUNCGEN("layer_vector_hvp = jvp(grad(layer_vector))")
FUNCGEN("layer_vector_vmap = vmap(layer_vector)")
FUNCGEN("layer_vector_psg = vmap(grad(layer_vector))")
FUNCGEN("layer_vector_vjacrev = vmap(jacrev(layer_vector))")
fg::Tensor layer_vector(const fg::Tensor& x) {
  std::vector<Layer> ls{{x, x * 2}, {x.sin(), x}};
  fg::Tensor h = x;
  for (const auto& l : ls) h = (h * l.w + l.b).tanh();
  for (size_t i = 0; i < ls.size(); ++i) h = (h * ls[i].w + ls[i].b).tanh();
  ls[1].b = h * 0.5;
  for (const Layer& l : ls) h = h * l.w.cos() + l.b;
  return h.sum();
}

// ---- a vector of structures passed to a helper by const reference (lowered for its length)
static fg::Tensor run_layers(const std::vector<Layer>& ls, const fg::Tensor& x) {
  fg::Tensor h = x;
  for (const auto& l : ls) h = h * l.w.sin() + l.b;
  for (size_t i = 0; i < ls.size(); ++i) h = h * ls[i].b.cos();
  return h;
}
FUNCGEN("layer_helper_grad = grad(layer_helper)")
FUNCGEN("layer_helper_jvp = jvp(layer_helper)")
FUNCGEN("layer_helper_jacfwd = jacfwd(layer_helper)")
FUNCGEN("layer_helper_hessian = hessian(layer_helper)")
FUNCGEN("layer_helper_jacrev2 = jacrev(jacrev(layer_helper))")
FUNCGEN("layer_helper_hvp = jvp(grad(layer_helper))")
FUNCGEN("layer_helper_vmap = vmap(layer_helper)")
FUNCGEN("layer_helper_psg = vmap(grad(layer_helper))")
FUNCGEN("layer_helper_vjacrev = vmap(jacrev(layer_helper))")
fg::Tensor layer_helper(const fg::Tensor& x) {
  std::vector<Layer> ls{{x, x * 2}, {x.sin(), x * 0.5}, {x.cos(), x}};
  return (run_layers(ls, x) * ls[2].w).sum();
}

// ---- range-based for loops over C arrays: of numbers (the weights of a stencil), of tensors
FUNCGEN("array_loops_grad = grad(array_loops)")
FUNCGEN("array_loops_jvp = jvp(array_loops)")
FUNCGEN("array_loops_jacfwd = jacfwd(array_loops)")
FUNCGEN("array_loops_hessian = hessian(array_loops)")
FUNCGEN("array_loops_jacrev2 = jacrev(jacrev(array_loops))")
FUNCGEN("array_loops_hvp = jvp(grad(array_loops))")
FUNCGEN("array_loops_vmap = vmap(array_loops)")
FUNCGEN("array_loops_psg = vmap(grad(array_loops))")
FUNCGEN("array_loops_vjacrev = vmap(jacrev(array_loops))")
fg::Tensor array_loops(const fg::Tensor& x) {
  const double weights[] = {0.25, 0.5, 0.25};
  fg::Tensor s = x;
  for (double w : weights) s = s * 0.5 + (x * w).sin();
  fg::Tensor parts[2] = {x.cos(), s};
  for (const fg::Tensor& p : parts) s = s * p + 0.1;
  return s.sum();
}

}  // namespace cs
