// JAX's autodiff cookbook in C++: an MLP whose layers live in vectors, trained by gradient descent
// with grad, its per-example gradients by vmap(grad), and jacobians and hessians w.r.t. its input.
#include <iomanip>
#include <iostream>
#include <vector>

#include "model.funcgen.h"
#include "model.h"

using cookbook::Layers;

int main() {
  // init_random_params(scale=0.5, layer_sizes=[1, 16, 16, 1]), in float64
  const std::vector<int64_t> sizes = {1, 16, 16, 1};
  fg::manual_seed(0);
  Layers ws, bs;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    ws.push_back(fg::randn({sizes[i], sizes[i + 1]}, fg::kDouble) * 0.5);
    bs.push_back(fg::randn({sizes[i + 1]}, fg::kDouble) * 0.5);
  }
  // Fit sin on [-2, 2].
  const fg::Tensor inputs = (fg::arange(32, fg::kDouble) * (4.0 / 31) - 2.0).reshape({32, 1});
  const fg::Tensor targets = inputs.sin();

  const double first = cookbook::loss(ws, bs, inputs, targets).item<double>();
  for (int step = 0; step < 300; ++step) {
    const auto [dws, dbs] = cookbook::loss_grad(ws, bs, inputs, targets);
    for (size_t i = 0; i < ws.size(); ++i) {
      ws[i] = ws[i] - 0.002 * dws[i];
      bs[i] = bs[i] - 0.002 * dbs[i];
    }
  }
  const double last = cookbook::loss(ws, bs, inputs, targets).item<double>();
  std::cout << std::fixed << std::setprecision(4) << ws.size() << " layers in vectors; loss " << first
            << " before 300 steps of gradient descent, " << last << " after\n";

  // The loss sums over examples: the per-example gradients sum to the batch gradient.
  const auto [pws, pbs] = cookbook::per_example_grads(ws, bs, inputs, targets);
  const auto [dws, dbs] = cookbook::loss_grad(ws, bs, inputs, targets);
  bool sums = true;
  for (size_t i = 0; i < ws.size(); ++i)
    sums = sums && fg::allclose(pws[i].sum(0), dws[i], 1e-9, 1e-12) && fg::allclose(pbs[i].sum(0), dbs[i], 1e-9, 1e-12);
  std::cout << "per-example gradients " << pws[0].sizes() << ", summing to the batch gradient: " << (sums ? "yes" : "no")
            << "\n";

  // Forward and reverse mode agree; the hessian is symmetric.
  const fg::Tensor x = inputs.slice(0, 0, 4);
  const fg::Tensor jr = cookbook::input_jacrev(ws, bs, x), jf = cookbook::input_jacfwd(ws, bs, x);
  const fg::Tensor h = cookbook::input_hessian(ws, bs, x, targets.slice(0, 0, 4)).reshape({4, 4});
  const bool agree = fg::allclose(jr, jf, 1e-10, 1e-12), symmetric = fg::allclose(h, h.t(), 1e-10, 1e-12);
  std::cout << "jacrev == jacfwd " << jr.sizes() << ": " << (agree ? "yes" : "no") << "; hessian " << h.sizes()
            << " symmetric: " << (symmetric ? "yes" : "no") << "\n";
  return last < first && sums && agree && symmetric ? 0 : 1;
}
