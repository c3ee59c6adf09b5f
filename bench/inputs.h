// The deterministic inputs of the benchmarks, which the Python side (cnn_torch.py,
// tutorials_ref.py) builds the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "cnn_model.h"
#include "funcgen/funcgen.h"

namespace fg::bench {

// sin(0.37 * (i + 1) + seed) * scale, computed in double, stored as float32.
inline Tensor values(std::vector<int64_t> shape, int seed, double scale) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return ((arange(n, kDouble) + 1) * 0.37 + seed).sin().mul(scale).to(kFloat).reshape(shape);
}

// Class labels i * 3 % 10.
inline Tensor labels(int64_t n) {
  std::vector<int64_t> t;
  for (int64_t i = 0; i < n; ++i) t.push_back(i * 3 % 10);
  return tensor(t);
}

// The per-sample-gradients tutorial's CNN (cnn_model.h) with these inputs as parameters, and the
// multiply-adds (2 flops each) of one 1x28x28 example's forward: conv1 26x26x32x9, conv2
// 24x24x64x288, fc1, fc2.
inline bench_cnn::SimpleCNN cnn_model() {
  return {
      values({32, 1, 3, 3}, 1, 1.0 / 3), values({32}, 2, 0.1),  values({64, 32, 3, 3}, 3, 0.06), values({64}, 4, 0.1),
      values({128, 9216}, 5, 1.0 / 96),  values({128}, 6, 0.1), values({10, 128}, 7, 0.09),      values({10}, 8, 0.1)};
}
constexpr double kCnnForwardFlops = 2.0 * (26 * 26 * 32 * 9 + 24 * 24 * 64 * 288 + 9216 * 128 + 128 * 10);

}  // namespace fg::bench
