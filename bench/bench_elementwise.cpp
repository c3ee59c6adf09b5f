// Element-wise, reduction, softmax and normalization throughput on float32, 1K to 16M elements:
// GB/s of the minimum memory traffic each op needs (inputs read once, output written once), and
// that as a percentage of the machine's STREAM triad bandwidth (see machine_peak.h). Small sizes
// run from cache and can exceed 100%.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>

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
  const fg::Tensor a = fg::rand({n}, fg::bench::on_device()), b = fg::rand({n}, fg::bench::on_device());
  run_bytes(state, n, 3 * n * kF, [&] { benchmark::DoNotOptimize(fg::add(a, b)); });
}
void BM_mul(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n}, fg::bench::on_device()), b = fg::rand({n}, fg::bench::on_device());
  run_bytes(state, n, 3 * n * kF, [&] { benchmark::DoNotOptimize(fg::mul(a, b)); });
}
// Into a preallocated output: the same op without the allocation.
void BM_add_out(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n}, fg::bench::on_device()), b = fg::rand({n}, fg::bench::on_device());
  fg::Tensor out = fg::empty({n}, fg::bench::on_device());
  run_bytes(state, n, 3 * n * kF, [&] { benchmark::DoNotOptimize(fg::add_out(out, a, b)); });
}

// ---------------------------------------------------------------- binary, broadcast
// [n/1024, 1024] (op) [1024]: a bias row added to every row.
void BM_add_broadcast(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n / kRow, kRow}, fg::bench::on_device()), b = fg::rand({kRow}, fg::bench::on_device());
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::add(a, b)); });
}
void BM_mul_broadcast(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n / kRow, kRow}, fg::bench::on_device()), b = fg::rand({kRow}, fg::bench::on_device());
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::mul(a, b)); });
}
// [n/1024, 1024] (op) [n/1024, 1]: one value per row (a column broadcast).
void BM_mul_broadcast_column(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n / kRow, kRow}, fg::bench::on_device()), b = fg::rand({n / kRow, 1}, fg::bench::on_device());
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::mul(a, b)); });
}

// ---------------------------------------------------------------- unary
void BM_exp(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n}, fg::bench::on_device());
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::exp(a)); });
}
void BM_tanh(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n}, fg::bench::on_device());
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::tanh(a)); });
}
void BM_sigmoid(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n}, fg::bench::on_device());
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::sigmoid(a)); });
}

// ---------------------------------------------------------------- reductions
void BM_sum(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n}, fg::bench::on_device());
  run_bytes(state, n, n * kF, [&] { benchmark::DoNotOptimize(fg::sum(a)); });
}
// Softmax over rows of 1024.
void BM_softmax(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n / kRow, kRow}, fg::bench::on_device());
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::softmax(a, -1)); });
}

// ---------------------------------------------------------------- normalization and attention
// layer_norm over rows of 1024 with weight and bias.
void BM_layer_norm(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n / kRow, kRow}, fg::bench::on_device()), w = fg::rand({kRow}, fg::bench::on_device()), b = fg::rand({kRow}, fg::bench::on_device());
  run_bytes(state, n, 2 * n * kF, [&] { benchmark::DoNotOptimize(fg::layer_norm(a, {kRow}, w, b)); });
}
// group_norm of [N, 64, 16, 16] in 8 groups, with weight and bias.
void BM_group_norm(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({std::max<int64_t>(1, n / (64 * 256)), 64, 16, 16}, fg::bench::on_device()), w = fg::rand({64}, fg::bench::on_device()), b = fg::rand({64}, fg::bench::on_device());
  run_bytes(state, a.numel(), 2 * a.numel() * kF, [&] { benchmark::DoNotOptimize(fg::group_norm(a, 8, w, b)); });
}
// batch_norm of [N, 64, 16, 16] in training, updating running statistics.
void BM_batch_norm(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({std::max<int64_t>(2, n / (64 * 256)), 64, 16, 16}, fg::bench::on_device()), w = fg::rand({64}, fg::bench::on_device()), b = fg::rand({64}, fg::bench::on_device());
  fg::Tensor mean = fg::zeros({64}, fg::bench::on_device()), var = fg::ones({64}, fg::bench::on_device());
  run_bytes(state, a.numel(), 2 * a.numel() * kF,
            [&] { benchmark::DoNotOptimize(fg::batch_norm(a, w, b, mean, var, true, 0.1, 1e-5)); });
}
// Masked softmax as scaled_dot_product_attention computes it (scale, causal mask, softmax in one
// pass per row), measured through the op with a head dim of 1, whose products are thin: [n/1024]
// queries of 1024 keys. Traffic counted: the scores read and the weights written once.
void BM_attention_causal(benchmark::State& state) {
  const int64_t n = state.range(0), L = std::max<int64_t>(1, n / kRow);
  const fg::Tensor q = fg::rand({L, 1}, fg::bench::on_device()), k = fg::rand({kRow, 1}, fg::bench::on_device()), v = fg::rand({kRow, 1}, fg::bench::on_device());
  run_bytes(state, L * kRow, 2 * L * kRow * kF,
            [&] { benchmark::DoNotOptimize(fg::scaled_dot_product_attention(q, k, v, {}, 0.0, true)); });
}
// The same softmax unfused, as the ops AD's decomposition runs: scale, masked_fill, softmax.
void BM_attention_causal_unfused(benchmark::State& state) {
  const int64_t n = state.range(0), L = std::max<int64_t>(1, n / kRow);
  const fg::Tensor scores = fg::rand({L, kRow}, fg::bench::on_device()), mask = fg::ad::causal_mask(L, kRow);
  run_bytes(state, L * kRow, 2 * L * kRow * kF,
            [&] { benchmark::DoNotOptimize((scores * 0.125).masked_fill(mask, -INFINITY).softmax(-1)); });
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
BENCHMARK(BM_layer_norm) FG_SIZES;
BENCHMARK(BM_group_norm) FG_SIZES;
BENCHMARK(BM_batch_norm) FG_SIZES;
BENCHMARK(BM_attention_causal) FG_SIZES;
BENCHMARK(BM_attention_causal_unfused) FG_SIZES;

}  // namespace

int main(int argc, char** argv) {
  fg::bench::parse_device(&argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fg::bench::add_peak_context();
  benchmark::AddCustomContext("simd_isa", fg::cpu::current_isa());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
