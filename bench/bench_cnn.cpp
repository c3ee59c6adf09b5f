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
#include "inputs.h"
#include "machine_peak.h"

namespace {

constexpr int64_t kBatch = 64;

using fg::bench::labels;
using fg::bench::values;

using fg::bench::cnn_model;
constexpr double kForwardFlops = fg::bench::kCnnForwardFlops;

template <typename Body>
void run(benchmark::State& state, double flops, Body&& body) {
  const double s = fg::bench::timed_seconds(state, body);
  state.counters["GFLOP/s"] = flops * static_cast<double>(state.iterations()) / s / 1e9;
  state.counters["ms"] = 1e3 * s / static_cast<double>(state.iterations());
}

void BM_cnn_forward(benchmark::State& state) {
  const auto m = cnn_model();
  const fg::Tensor x = values({kBatch, 1, 28, 28}, 9, 1.0);
  run(state, kBatch * kForwardFlops, [&] { benchmark::DoNotOptimize(m.forward(x)); });
}

void BM_cnn_minibatch_grad(benchmark::State& state) {
  const auto m = cnn_model();
  const fg::Tensor x = values({kBatch, 1, 28, 28}, 9, 1.0), t = labels(kBatch);
  run(state, 3 * kBatch * kForwardFlops, [&] { benchmark::DoNotOptimize(bench_cnn::minibatch_grad(m, x, t)); });
}

void BM_cnn_per_sample_grads(benchmark::State& state) {
  const auto m = cnn_model();
  const fg::Tensor x = values({kBatch, 1, 28, 28}, 9, 1.0), t = labels(kBatch);
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
