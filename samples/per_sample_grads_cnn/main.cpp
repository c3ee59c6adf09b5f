// Per-sample gradients of the tutorial's CNN: every parameter's gradient for each example of a
// minibatch of 28x28 images in one batched computation (vmap(grad(loss))), checked as the
// tutorial checks it, against a loop of one-example gradients. In float64, so that it prints
// what torch.func computes for the same inputs (tests/golden/make_golden.py; the end-to-end test
// compares).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "model.funcgen.h"
#include "model.h"

// Deterministic values: sin(0.37 * (i + 1) + seed) * scale over the flattened shape.
static fg::Tensor input(std::vector<int64_t> shape, int seed, double scale) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> data;
  for (int64_t i = 0; i < n; ++i) data.push_back(std::sin(0.37 * static_cast<double>(i + 1) + seed) * scale);
  return fg::tensor(data, fg::kDouble).reshape(shape);
}

static std::string shape(const fg::Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// Every parameter's gradient, flattened into one vector.
static fg::Tensor flat(const cnn::SimpleCNN& g) {
  return fg::cat({g.conv1.weight.flatten(), g.conv1.bias.flatten(), g.conv2.weight.flatten(), g.conv2.bias.flatten(),
                  g.fc1.weight.flatten(), g.fc1.bias.flatten(), g.fc2.weight.flatten(), g.fc2.bias.flatten()});
}

int main() {
  const int64_t batch = 8;
  // weights scaled by 1 / sqrt(fan_in), as torch's default initialization roughly is
  const cnn::SimpleCNN model{{input({32, 1, 3, 3}, 1, 1.0 / 3), input({32}, 2, 0.1)},
                             {input({64, 32, 3, 3}, 3, 1.0 / std::sqrt(288.0)), input({64}, 4, 0.1)},
                             {input({128, 9216}, 5, 1.0 / 96), input({128}, 6, 0.1)},
                             {input({10, 128}, 7, 1.0 / std::sqrt(128.0)), input({10}, 8, 0.1)}};
  const fg::Tensor data = input({batch, 1, 28, 28}, 9, 1.0);
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < batch; ++i) labels.push_back((3 * i + 1) % 10);
  const fg::Tensor targets = fg::tensor(labels);

  const cnn::SimpleCNN g = cnn::per_sample_grads(model, data, targets);
  std::printf("per-sample gradients: conv1.weight %s, conv2.weight %s, fc1.weight %s, fc2.bias %s\n",
              shape(g.conv1.weight).c_str(), shape(g.conv2.weight).c_str(), shape(g.fc1.weight).c_str(),
              shape(g.fc2.bias).c_str());

  // The tutorial's check: the same gradients, one example at a time.
  double worst = 0;
  for (int64_t i = 0; i < batch; ++i) {
    const cnn::SimpleCNN one = cnn::example_grad(model, data[i], targets[i]);
    const cnn::SimpleCNN row{{g.conv1.weight[i], g.conv1.bias[i]}, {g.conv2.weight[i], g.conv2.bias[i]},
                             {g.fc1.weight[i], g.fc1.bias[i]}, {g.fc2.weight[i], g.fc2.bias[i]}};
    const fg::Tensor a = flat(row), b = flat(one);
    const double diff = (a - b).abs().max().item<double>() / (b.abs().max().item<double>() + 1e-30);
    worst = diff > worst ? diff : worst;
    std::printf("example %lld: gradient norm %.8f\n", static_cast<long long>(i), a.norm().item<double>());
  }
  std::printf("the same as the loop of single-example gradients: %s\n", worst < 1e-10 ? "yes" : "no");
  return worst < 1e-10 ? 0 : 1;
}
