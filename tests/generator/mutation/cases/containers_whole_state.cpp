// A std::vector of tensors assigned whole each trip of a loop (the LSTM idiom): a copy of another
// vector, braces, std::move; held as its elements, each a new version per trip.
// EXPECT: accept
#include <funcgen/funcgen.h>
#include <utility>
#include <vector>

FUNCGEN("gstate = grad(state_steps)")
FUNCGEN("vstate = vmap(state_steps)")
FUNCGEN("jstate = jvp(state_steps)")
fg::Tensor state_steps(const fg::Tensor& x) {
  std::vector<fg::Tensor> state{x, x * 2};
  for (int i = 0; i < 3; ++i) {
    std::vector<fg::Tensor> new_state{state[0] * state[1], state[1].sin()};
    state = new_state;
  }
  for (int i = 0; i < 2; ++i) state = {state[1].tanh(), state[0] + state[1]};
  for (int i = 0; i < 2; ++i) {
    std::vector<fg::Tensor> n{state[1], state[0] * 0.5};
    state = std::move(n);
  }
  return (state[0] + state[1]).sum();
}
