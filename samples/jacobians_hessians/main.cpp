// Jacobians (reverse and forward mode, single and batched), a hessian and a Hessian-vector product
// of the tutorial's linear(x, w, b).tanh(). tests/golden/make_golden.py computes the same numbers
// with torch.func (expected_output.txt), and the end-to-end test compares.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "model.funcgen.h"

// Deterministic inputs: x[i] = sin(0.37 * (i + 1) + seed) * 0.8 (the golden script's input()).
static fg::Tensor input(std::vector<int64_t> shape, int seed) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> data;
  for (int64_t i = 0; i < n; ++i) data.push_back(std::sin(0.37 * static_cast<double>(i + 1) + seed) * 0.8);
  return fg::tensor(data, fg::kDouble).reshape(shape);
}

static void print_matrix(const char* title, const fg::Tensor& m) {
  std::printf("%s\n", title);
  for (int64_t i = 0; i < m.size(0); ++i) {
    for (int64_t j = 0; j < m.size(1); ++j) std::printf(" %11.8f", m[i][j].item<double>());
    std::printf("\n");
  }
}

int main() {
  const int64_t d = 4, batch = 3;
  const fg::Tensor weight = input({d, d}, 20), bias = input({d}, 21), x = input({d}, 22);
  const fg::Tensor xs = input({batch, d}, 23);

  const fg::Tensor jr = model::jacobian_rev(weight, bias, x);
  const fg::Tensor jf = model::jacobian_fwd(weight, bias, x);
  print_matrix("jacrev(predict, argnums=2):", jr);
  std::printf("jacfwd agrees with jacrev: %s\n", fg::allclose(jr, jf, 1e-12, 1e-12) ? "yes" : "no");

  const fg::Tensor bjr = model::batch_jacobian_rev(weight, bias, xs);
  const fg::Tensor bjf = model::batch_jacobian_fwd(weight, bias, xs);
  std::printf("batched jacobians: [%lld, %lld, %lld], jacfwd agrees: %s\n", static_cast<long long>(bjr.size(0)),
              static_cast<long long>(bjr.size(1)), static_cast<long long>(bjr.size(2)),
              fg::allclose(bjr, bjf, 1e-12, 1e-12) ? "yes" : "no");
  print_matrix("jacobian of example 2:", bjr[2]);

  const fg::Tensor h = model::hessian_x(weight, bias, x);
  std::printf("hessian: [%lld, %lld, %lld]\n", static_cast<long long>(h.size(0)), static_cast<long long>(h.size(1)),
              static_cast<long long>(h.size(2)));
  print_matrix("hessian of output 0:", h[0]);

  const fg::Tensor v = input({d}, 31);
  auto [g, hv] = model::hvp(x, v);
  print_matrix("grad(energy) and hvp(energy, v) as rows:", fg::stack({g, hv}));
}
