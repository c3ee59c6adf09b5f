// A vector held as its elements (it is assigned whole) given another length in a loop: its
// tensors are held one by one, so its length must stay the one it is declared with.
// EXPECT: reject
#include <funcgen/funcgen.h>
#include <vector>

FUNCGEN("ggrown = grad(grown)")
fg::Tensor grown(const fg::Tensor& x) {
  std::vector<fg::Tensor> state{x, x * 2};
  for (int i = 0; i < 3; ++i) state = {state[0] * state[1], state[1].sin(), x};
//                            ^
  return (state[0] + state[1]).sum();
}
