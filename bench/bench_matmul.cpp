// Matrix-product throughput: fg::mm on square matrices (float32 and float64, 64..1024; float32
// also through OpenBLAS directly, for comparison), and the batched small-matrix shapes of an MLP
// layer: bmm vs a loop of mm, a batch folded into one gemm, and matmul with a vector. Each figure is printed as GFLOP/s and as a percentage of the
// machine's measured FMA peak (see machine_peak.h; the peaks head the output).
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>

#include <chrono>
#include <vector>

#include "funcgen/funcgen.h"
#include "machine_peak.h"

// OpenBLAS extension (weak: absent from other BLAS builds).
extern "C" char* openblas_get_corename(void);
#pragma weak openblas_get_corename

namespace {


// Runs `body` in the benchmark loop and reports GFLOP/s and its share of the FMA peaks.
// `peak` is the all-core peak of the same precision, used for "%peak". With `bytes_per_iter`
// (the operands' and result's size: the least memory traffic) it also reports GB/s and its share
// of the STREAM triad bandwidth ("%bw"): products with few columns are bound by that, not by FMAs.
template <typename Body>
void run_flops(benchmark::State& state, double flops_per_iter, double peak, Body&& body,
               double bytes_per_iter = 0) {
  const double s = fg::bench::timed_seconds(state, body);
  const double gflops = flops_per_iter * static_cast<double>(state.iterations()) / s / 1e9;
  state.counters["GFLOP/s"] = gflops;
  state.counters["%peak"] = 100.0 * gflops / peak;
  state.counters["%fp32_peak"] = 100.0 * gflops / fg::bench::machine_peak().fp32_all;
  if (bytes_per_iter > 0) {
    const double gbs = bytes_per_iter * static_cast<double>(state.iterations()) / s / 1e9;
    state.counters["GB/s"] = gbs;
    state.counters["%bw"] = 100.0 * gbs / fg::bench::machine_peak().triad_gbs;
  }
}

double peak_of(fg::ScalarType dt) {
  const auto& p = fg::bench::machine_peak();
  return dt == fg::kDouble ? p.fp64_all : p.fp32_all;
}

// ---------------------------------------------------------------- square mm

void BM_mm(benchmark::State& state, fg::ScalarType dt) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n, n}, fg::bench::on_device(dt)), b = fg::rand({n, n}, fg::bench::on_device(dt));
  run_flops(state, 2.0 * n * n * n, peak_of(dt), [&] { benchmark::DoNotOptimize(fg::mm(a, b)); });
}
BENCHMARK_CAPTURE(BM_mm, f32, fg::kFloat)->RangeMultiplier(2)->Range(64, 1024)->UseRealTime();
BENCHMARK_CAPTURE(BM_mm, f64, fg::kDouble)->RangeMultiplier(2)->Range(64, 1024)->UseRealTime();

// The same float32 products through OpenBLAS (cblas_sgemm with whatever kernels it picks here,
// see blas_core; OPENBLAS_CORETYPE=Haswell forces its AVX2 ones), rows split over the OpenMP
// threads as the runtime used to split them: what fg::mm's own AVX-512 gemm is measured against.
void BM_mm_openblas(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n, n}, fg::bench::on_device()), b = fg::rand({n, n}, fg::bench::on_device());
  fg::Tensor c = fg::empty({n, n}, fg::bench::on_device());
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  run_flops(state, 2.0 * n * n * n, peak_of(fg::kFloat), [&] {
#pragma omp parallel
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t lo = n * t / nt / 16 * 16, hi = t == nt - 1 ? n : n * (t + 1) / nt / 16 * 16;
      if (hi > lo)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(hi - lo), static_cast<int>(n),
                    static_cast<int>(n), 1.0f, pa + lo * n, static_cast<int>(n), pb, static_cast<int>(n), 0.0f,
                    pc + lo * n, static_cast<int>(n));
    }
    benchmark::ClobberMemory();
  });
}
BENCHMARK(BM_mm_openblas)->Arg(256)->Arg(512)->Arg(1024)->UseRealTime();

// One thread (omp_set_num_threads(1): the runtime's products use OpenMP threads and a
// single-threaded BLAS): the gemm kernel's efficiency against the one-core peak ("%core_peak").
void BM_mm_1thread(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor a = fg::rand({n, n}, fg::bench::on_device()), b = fg::rand({n, n}, fg::bench::on_device());
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  run_flops(state, 2.0 * n * n * n, fg::bench::machine_peak().fp32_all,
            [&] { benchmark::DoNotOptimize(fg::mm(a, b)); });
  omp_set_num_threads(saved);
  state.counters["%core_peak"] = 100.0 * state.counters["GFLOP/s"] / fg::bench::machine_peak().fp32_core;
}
BENCHMARK(BM_mm_1thread)->Arg(512)->UseRealTime();

// ---------------------------------------------------------------- batched small matrices
// The hidden layer of an MLP on MNIST: 64 micro-batches of 128 rows, 784 inputs, 10 outputs.
constexpr int64_t kB = 64, kM = 128, kK = 784, kN = 10;
constexpr double kBatchFlops = 2.0 * kB * kM * kK * kN;
constexpr double kF32 = sizeof(float);
// Bytes of the operands and result: separate weights per item, or one shared weight.
constexpr double kBatchBytes = kF32 * (kB * kM * kK + kB * kK * kN + kB * kM * kN);
constexpr double kSharedBytes = kF32 * (kB * kM * kK + kK * kN + kB * kM * kN);

// One bmm over 64 different weight matrices: parallel over the batch.
void BM_bmm_64x128x784x10(benchmark::State& state) {
  const fg::Tensor a = fg::rand({kB, kM, kK}, fg::bench::on_device()), b = fg::rand({kB, kK, kN}, fg::bench::on_device());
  run_flops(state, kBatchFlops, peak_of(fg::kFloat), [&] { benchmark::DoNotOptimize(fg::bmm(a, b)); }, kBatchBytes);
}
BENCHMARK(BM_bmm_64x128x784x10)->UseRealTime();

// The same products as 64 separate mm calls.
void BM_mm_loop_64x128x784x10(benchmark::State& state) {
  const fg::Tensor a = fg::rand({kB, kM, kK}, fg::bench::on_device()), b = fg::rand({kB, kK, kN}, fg::bench::on_device());
  std::vector<fg::Tensor> as, bs;
  for (int64_t i = 0; i < kB; ++i) {
    as.push_back(a.select(0, i));
    bs.push_back(b.select(0, i));
  }
  run_flops(
      state, kBatchFlops, peak_of(fg::kFloat),
      [&] {
        for (int64_t i = 0; i < kB; ++i) benchmark::DoNotOptimize(fg::mm(as[i], bs[i]));
      },
      kBatchBytes);
}
BENCHMARK(BM_mm_loop_64x128x784x10)->UseRealTime();

// [64,128,784] @ [784,10]: one shared weight, folded into a single [8192,784] @ [784,10] gemm.
void BM_matmul_folded_64x128x784x10(benchmark::State& state) {
  const fg::Tensor x = fg::rand({kB, kM, kK}, fg::bench::on_device()), w = fg::rand({kK, kN}, fg::bench::on_device());
  run_flops(state, kBatchFlops, peak_of(fg::kFloat), [&] { benchmark::DoNotOptimize(fg::matmul(x, w)); }, kSharedBytes);
}
BENCHMARK(BM_matmul_folded_64x128x784x10)->UseRealTime();

// The shared-weight product as 64 mm calls, what folding saves.
void BM_mm_loop_shared_64x128x784x10(benchmark::State& state) {
  const fg::Tensor x = fg::rand({kB, kM, kK}, fg::bench::on_device()), w = fg::rand({kK, kN}, fg::bench::on_device());
  std::vector<fg::Tensor> xs;
  for (int64_t i = 0; i < kB; ++i) xs.push_back(x.select(0, i));
  run_flops(
      state, kBatchFlops, peak_of(fg::kFloat),
      [&] {
        for (int64_t i = 0; i < kB; ++i) benchmark::DoNotOptimize(fg::mm(xs[i], w));
      },
      kSharedBytes);
}
BENCHMARK(BM_mm_loop_shared_64x128x784x10)->UseRealTime();

// [64,128,784] @ [784]: one folded gemv, bound by reading x (GB/s against the triad bandwidth).
void BM_matmul_vec_64x128x784(benchmark::State& state) {
  const fg::Tensor x = fg::rand({kB, kM, kK}, fg::bench::on_device()), v = fg::rand({kK}, fg::bench::on_device());
  run_flops(
      state, 2.0 * kB * kM * kK, peak_of(fg::kFloat), [&] { benchmark::DoNotOptimize(fg::matmul(x, v)); },
      kF32 * (kB * kM * kK + kK + kB * kM));
}
BENCHMARK(BM_matmul_vec_64x128x784)->UseRealTime();

// Narrow products, [8192, 784] @ [784, n]: fg::matmul (its narrow-product kernel for n <= 24)
// against OpenBLAS gemm calls on the same data, rows split over the OpenMP threads as the
// runtime splits large products (the runtime keeps OpenBLAS itself on one thread).
void BM_narrow(benchmark::State& state) {
  const int64_t n = state.range(0);
  const fg::Tensor x = fg::rand({kB * kM, kK}, fg::bench::on_device()), w = fg::rand({kK, n}, fg::bench::on_device());
  run_flops(
      state, 2.0 * kB * kM * kK * n, peak_of(fg::kFloat), [&] { benchmark::DoNotOptimize(fg::matmul(x, w)); },
      kF32 * (kB * kM * kK + kK * n + kB * kM * n));
}
BENCHMARK(BM_narrow)->Arg(2)->Arg(4)->Arg(10)->Arg(16)->Arg(24)->Arg(32)->UseRealTime();

void BM_narrow_openblas(benchmark::State& state) {
  const int64_t n = state.range(0), m = kB * kM;
  const fg::Tensor x = fg::rand({m, kK}, fg::bench::on_device()), w = fg::rand({kK, n}, fg::bench::on_device());
  fg::Tensor c = fg::empty({m, n}, fg::bench::on_device());
  const float* px = x.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  run_flops(state, 2.0 * m * kK * n, peak_of(fg::kFloat), [&] {
#pragma omp parallel
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t lo = m * t / nt, hi = m * (t + 1) / nt;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(hi - lo), static_cast<int>(n),
                  static_cast<int>(kK), 1.0f, px + lo * kK, static_cast<int>(kK), pw, static_cast<int>(n), 0.0f,
                  pc + lo * n, static_cast<int>(n));
    }
    benchmark::ClobberMemory();
  }, kF32 * (m * kK + kK * n + m * n));
}
BENCHMARK(BM_narrow_openblas)->Arg(2)->Arg(4)->Arg(10)->Arg(16)->Arg(24)->Arg(32)->UseRealTime();

// Many tiny matrices: per-product overhead dominates.
void BM_bmm_tiny(benchmark::State& state) {
  const int64_t b = state.range(0), n = state.range(1);
  const fg::Tensor x = fg::rand({b, n, n}, fg::bench::on_device()), y = fg::rand({b, n, n}, fg::bench::on_device());
  run_flops(state, 2.0 * b * n * n * n, peak_of(fg::kFloat), [&] { benchmark::DoNotOptimize(fg::bmm(x, y)); });
}
BENCHMARK(BM_bmm_tiny)->Args({4096, 8})->Args({1024, 32})->Args({256, 64})->UseRealTime();

void BM_mm_loop_tiny(benchmark::State& state) {
  const int64_t b = state.range(0), n = state.range(1);
  const fg::Tensor x = fg::rand({b, n, n}, fg::bench::on_device()), y = fg::rand({b, n, n}, fg::bench::on_device());
  std::vector<fg::Tensor> xs, ys;
  for (int64_t i = 0; i < b; ++i) {
    xs.push_back(x.select(0, i));
    ys.push_back(y.select(0, i));
  }
  run_flops(state, 2.0 * b * n * n * n, peak_of(fg::kFloat), [&] {
    for (int64_t i = 0; i < b; ++i) benchmark::DoNotOptimize(fg::mm(xs[i], ys[i]));
  });
}
BENCHMARK(BM_mm_loop_tiny)->Args({4096, 8})->Args({1024, 32})->Args({256, 64})->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  fg::bench::parse_device(&argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // The first product selects the BLAS kernels (see runtime/src/linalg.cpp); report which.
  benchmark::DoNotOptimize(fg::mm(fg::ones({2, 2}, fg::bench::on_device()), fg::ones({2, 2}, fg::bench::on_device())));
  benchmark::AddCustomContext("blas_core", openblas_get_corename ? openblas_get_corename() : "not OpenBLAS");
  fg::bench::add_peak_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
