// Empirical neural tangent kernels of a CNN, as torch.func's tutorial computes them: the full
// kernel [N1, N2, 10, 10] and its trace [N1, N2] by contracting per-example jacobians, and the
// full kernel again by the implicit method (jvps of vjps, without jacobians), which must agree.
#include <cmath>
#include <cstdio>
#include <vector>

#include "model.funcgen.h"
#include "model.h"

using ntk::CNN;

// Deterministic values: sin(0.37 * (i + 1) + seed) * scale over the flattened shape (float64).
static fg::Tensor input(std::vector<int64_t> shape, int seed, double scale) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> data;
  for (int64_t i = 0; i < n; ++i) data.push_back(std::sin(0.37 * static_cast<double>(i + 1) + seed) * scale);
  return fg::tensor(data, fg::kDouble).reshape(shape);
}

// Every parameter of a CNN-shaped value, in order.
static std::vector<fg::Tensor> leaves(const CNN& m) {
  return {m.conv1.weight, m.conv1.bias, m.conv2.weight, m.conv2.bias,
          m.conv3.weight, m.conv3.bias, m.fc.weight,    m.fc.bias};
}

// The tutorial's empirical_ntk_jacobian_contraction: sum over the parameters of the jacobians'
// contraction ("Naf,Mbf->NMab" for the full kernel, "Naf,Maf->NM" for its trace).
static fg::Tensor contract(const CNN& j1, const CNN& j2, const char* equation) {
  const std::vector<fg::Tensor> a = leaves(j1), b = leaves(j2);
  fg::Tensor total;
  for (size_t k = 0; k < a.size(); ++k) {
    const fg::Tensor term = fg::einsum(equation, {a[k].flatten(2), b[k].flatten(2)});
    total = total.defined() ? total + term : term;
  }
  return total;
}

// The implicit method: J(x1)^T e_b for every x1 and output b, then J(x2) of each of those.
static fg::Tensor implicit_ntk(const CNN& model, const fg::Tensor& x1, const fg::Tensor& x2) {
  const int64_t n1 = x1.size(0), outputs = 10;
  const fg::Tensor basis = fg::eye(outputs, fg::kDouble);
  const CNN pulled = ntk::vjps(model, x1, basis);  // each parameter [n1, outputs, ...]
  const auto flat = [&](const fg::Tensor& t) { return t.flatten(0, 1); };  // [n1 * outputs, ...]
  const CNN tangents{{flat(pulled.conv1.weight), flat(pulled.conv1.bias)},
                     {flat(pulled.conv2.weight), flat(pulled.conv2.bias)},
                     {flat(pulled.conv3.weight), flat(pulled.conv3.bias)},
                     {flat(pulled.fc.weight), flat(pulled.fc.bias)}};
  const auto [outputs2, pushed] = ntk::jvps(model, x2, tangents, fg::zeros({3, 12, 12}, fg::kDouble));
  // pushed[j][i * outputs + b][a] = J(x2_j)_a . J(x1_i)_b: the kernel's [i, j, b, a]
  return pushed.reshape({x2.size(0), n1, outputs, outputs}).permute({1, 0, 2, 3});
}

int main() {
  // weights scaled by 1 / sqrt(fan_in), as torch's default initialization roughly is
  const CNN model{{input({32, 3, 3, 3}, 1, 1.0 / std::sqrt(27.0)), input({32}, 2, 0.1)},
                  {input({32, 32, 3, 3}, 3, 1.0 / std::sqrt(288.0)), input({32}, 4, 0.1)},
                  {input({32, 32, 3, 3}, 5, 1.0 / std::sqrt(288.0)), input({32}, 6, 0.1)},
                  {input({10, 1152}, 7, 1.0 / std::sqrt(1152.0)), input({10}, 8, 0.1)}};
  const fg::Tensor x_train = input({4, 3, 12, 12}, 9, 1.0), x_test = input({2, 3, 12, 12}, 10, 1.0);

  const CNN j_test = ntk::jacobians(model, x_test), j_train = ntk::jacobians(model, x_train);
  const fg::Tensor full = contract(j_test, j_train, "Naf,Mbf->NMab");
  const fg::Tensor trace = contract(j_test, j_train, "Naf,Maf->NM");
  std::printf("jacobian of fc.weight for the test images: [%lld, %lld, %lld, %lld]\n",
              static_cast<long long>(j_test.fc.weight.size(0)), static_cast<long long>(j_test.fc.weight.size(1)),
              static_cast<long long>(j_test.fc.weight.size(2)), static_cast<long long>(j_test.fc.weight.size(3)));
  std::printf("ntk (trace) of the test images against the training images:\n");
  for (int64_t i = 0; i < trace.size(0); ++i) {
    for (int64_t j = 0; j < trace.size(1); ++j) std::printf(" %12.6f", trace[i][j].item<double>());
    std::printf("\n");
  }
  std::printf("full ntk [%lld, %lld, 10, 10]; block (test 1, train 2), outputs 0..3:\n",
              static_cast<long long>(full.size(0)), static_cast<long long>(full.size(1)));
  for (int64_t a = 0; a < 4; ++a) {
    for (int64_t b = 0; b < 4; ++b) std::printf(" %12.6f", full[1][2][a][b].item<double>());
    std::printf("\n");
  }
  const bool traces = fg::allclose(full.diagonal(0, 2, 3).sum(-1), trace, 1e-10, 1e-10);
  std::printf("the trace kernel is the full kernel's trace: %s\n", traces ? "yes" : "no");
  const fg::Tensor implicit = implicit_ntk(model, x_test, x_train);
  const bool agree = fg::allclose(implicit, full, 1e-9, 1e-9);
  std::printf("the implicit method (jvps of vjps) agrees with the jacobian contraction: %s\n", agree ? "yes" : "no");
  return traces && agree ? 0 : 1;
}
