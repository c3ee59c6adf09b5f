// Element-wise, reduction and softmax throughput on float32, 1K to 16M elements: GB/s of the
// minimum memory traffic each op needs (inputs read once, output written once), and that as a
// percentage of the machine's STREAM triad bandwidth (see machine_peak.h). Small sizes run from
// cache and can exceed 100%.
#include <benchmark/benchmark.h>

#include <chrono>

#include "funcgen/funcgen.h"
#include "machine_peak.h"

namespace {

constexpr int64_t kRow = 1024;  // row length of the broadcast and softmax shapes

template <typename Body>
void run_bytes(benchmark::State& state, int64_t n, double bytes_per_iter, Body&& body) {
  const double s = fg::bench::timed_seconds(state, body);
  const double gbs = bytes_per_iter * static_cast<double>(state.iterations()) / s / 1e9;
  state.counters["GB/s"] = gbs;
  state.counters["%bw"] = 100.0 * gbs / fg::bench::machine_peak().triad_gbs;
  state.SetItemsProcessed(state.iterations() * n);
}

constexpr double kF = sizeof(float);

// ---------------------------------------------------------------- binary, same shape
void BM_add(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n}), b = fg::rand({n});
  run_bytes(state, n, 3 * n * kF, [&] { benchmark::DoNotOptimize(fg::add(a, b)); });
}
void BM_mul(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n}), b = fg::rand({n});
  run_bytes(state, n, 3 * n * kF, [&] { benchmark::DoNotOptimize(fg::mul(a, b)); });
}
// Into a preallocated output: the same op without the allocation.
void BM_add_out(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n}), b = fg::rand({n});
  fg::Tensor out = fg::empty({n});
  run_bytes(state, n, 3 * n * kF, [&] { benchmark::DoNotOptimize(fg::add_out(out, a, b)); });
}

// ---------------------------------------------------------------- binary, broadcast
// [n/1024, 1024] (op) [1024]: a bias row added to every row.
void BM_add_broadcast(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n / kRow, kRow}), b = fg::rand({kRow});
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::add(a, b)); });
}
void BM_mul_broadcast(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n / kRow, kRow}), b = fg::rand({kRow});
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::mul(a, b)); });
}
// [n/1024, 1024] (op) [n/1024, 1]: one value per row (a column broadcast).
void BM_mul_broadcast_column(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n / kRow, kRow}), b = fg::rand({n / kRow, 1});
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::mul(a, b)); });
}

// ---------------------------------------------------------------- unary
void BM_exp(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n});
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::exp(a)); });
}
void BM_tanh(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n});
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::tanh(a)); });
}
void BM_sigmoid(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n});
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::sigmoid(a)); });
}

// ---------------------------------------------------------------- reductions
void BM_sum(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n});
  run_bytes(state, n, n * kF, [&] { benchmark::DoNotOptimize(fg::sum(a)); });
}
// Softmax over rows of 1024.
void BM_softmax(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n / kRow, kRow});
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::softmax(a, -1)); });
}

#define FG_SIZES ->RangeMultiplier(16)->Range(1 << 10, 1 << 24)->UseRealTime()
BENCHMARK(BM_add) FG_SIZES;
BENCHMARK(BM_mul) FG_SIZES;
BENCHMARK(BM_add_out) FG_SIZES;
BENCHMARK(BM_add_broadcast) FG_SIZES;
BENCHMARK(BM_mul_broadcast) FG_SIZES;
BENCHMARK(BM_mul_broadcast_column) FG_SIZES;
BENCHMARK(BM_exp) FG_SIZES;
BENCHMARK(BM_tanh) FG_SIZES;
BENCHMARK(BM_sigmoid) FG_SIZES;
BENCHMARK(BM_sum) FG_SIZES;
BENCHMARK(BM_softmax) FG_SIZES;

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fg::bench::add_peak_context();
  benchmark::AddCustomContext("simd_isa", fg::cpu::current_isa());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
