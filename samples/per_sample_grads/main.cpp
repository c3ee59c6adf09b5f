// Per-sample gradients: the gradient of the loss of each example with respect to every parameter,
// for a whole minibatch in one batched computation (vmap(grad(loss))). Prints each example's
// gradient norm; tests/golden/make_golden.py computes the same numbers with torch.func
// (expected_output.txt), and the end-to-end test compares.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "model.funcgen.h"
#include "model.h"

// Deterministic inputs: x[i] = sin(0.37 * (i + 1) + seed) * 0.8 (the golden script's input()).
static fg::Tensor input(std::vector<int64_t> shape, int seed) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> data;
  for (int64_t i = 0; i < n; ++i) data.push_back(std::sin(0.37 * static_cast<double>(i + 1) + seed) * 0.8);
  return fg::tensor(data, fg::kDouble).reshape(shape);
}

static std::string shape(const fg::Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

int main() {
  const int64_t in = 8, hidden = 16, classes = 4, batch = 6;
  const mlp::Mlp model{{input({hidden, in}, 1), input({hidden}, 2)}, {input({classes, hidden}, 3), input({classes}, 4)}};
  const fg::Tensor x = input({batch, in}, 5);
  const fg::Tensor target = fg::tensor(std::vector<int64_t>{0, 1, 2, 3, 0, 1});

  const mlp::Mlp g = mlp::per_sample_grads(model, x, target);
  std::printf("per-sample gradients: w1 %s, b1 %s, w2 %s, b2 %s\n", shape(g.fc1.weight).c_str(),
              shape(g.fc1.bias).c_str(), shape(g.fc2.weight).c_str(), shape(g.fc2.bias).c_str());
  for (int64_t i = 0; i < batch; ++i) {
    const fg::Tensor all =
        fg::cat({g.fc1.weight[i].flatten(), g.fc1.bias[i].flatten(), g.fc2.weight[i].flatten(), g.fc2.bias[i].flatten()});
    std::printf("example %lld: gradient norm %.8f\n", static_cast<long long>(i), all.norm().item<double>());
  }
}
