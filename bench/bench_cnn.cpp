// The per-sample-gradients tutorial's CNN on a minibatch of 64 28x28 images, float32: the forward
// pass, the minibatch's gradient (grad: forward and backward) and per-sample gradients
// (vmap(grad)), as funcgen generates them. GFLOP/s counts the convolutions' and linear layers'
// multiply-adds (2 flops each; 3x the forward's for a gradient). bench/cnn_torch.py times the same
// in torch (and torch.func) with the same thread count, for the ratios (bench/README.md).
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "cnn_model.funcgen.h"
#include "cnn_model.h"
#include "machine_peak.h"

namespace {

constexpr int64_t kBatch = 64;

// sin(0.37 * (i + 1) + seed) * scale, the inputs bench/cnn_torch.py builds too.
fg::Tensor values(std::vector<int64_t> shape, int seed, double scale) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return ((fg::arange(n, fg::kDouble) + 1) * 0.37 + seed).sin().mul(scale).to(fg::kFloat).reshape(shape);
}

bench_cnn::SimpleCNN model() {
  return {values({32, 1, 3, 3}, 1, 1.0 / 3),    values({32}, 2, 0.1),
          values({64, 32, 3, 3}, 3, 0.06),      values({64}, 4, 0.1),
          values({128, 9216}, 5, 1.0 / 96),     values({128}, 6, 0.1),
          values({10, 128}, 7, 0.09),           values({10}, 8, 0.1)};
}

fg::Tensor targets() {
  std::vector<int64_t> t;
  for (int64_t i = 0; i < kBatch; ++i) t.push_back(i * 3 % 10);
  return fg::tensor(t);
}

// Multiply-adds of one example's forward: conv1 26x26x32x9, conv2 24x24x64x288, fc1, fc2.
constexpr double kForwardFlops = 2.0 * (26 * 26 * 32 * 9 + 24 * 24 * 64 * 288 + 9216 * 128 + 128 * 10);

template <typename Body>
void run(benchmark::State& state, double flops, Body&& body) {
  const double s = fg::bench::timed_seconds(state, body);
  state.counters["GFLOP/s"] = flops * static_cast<double>(state.iterations()) / s / 1e9;
  state.counters["ms"] = 1e3 * s / static_cast<double>(state.iterations());
}

void BM_cnn_forward(benchmark::State& state) {
  const auto m = model();
  const fg::Tensor x = values({kBatch, 1, 28, 28}, 9, 1.0);
  run(state, kBatch * kForwardFlops, [&] { benchmark::DoNotOptimize(m.forward(x)); });
}

void BM_cnn_minibatch_grad(benchmark::State& state) {
  const auto m = model();
  const fg::Tensor x = values({kBatch, 1, 28, 28}, 9, 1.0), t = targets();
  run(state, 3 * kBatch * kForwardFlops, [&] { benchmark::DoNotOptimize(bench_cnn::minibatch_grad(m, x, t)); });
}

void BM_cnn_per_sample_grads(benchmark::State& state) {
  const auto m = model();
  const fg::Tensor x = values({kBatch, 1, 28, 28}, 9, 1.0), t = targets();
  run(state, 3 * kBatch * kForwardFlops, [&] { benchmark::DoNotOptimize(bench_cnn::per_sample_grads(m, x, t)); });
}

BENCHMARK(BM_cnn_forward)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cnn_minibatch_grad)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cnn_per_sample_grads)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fg::bench::add_peak_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
