// Machine peak measurement. The FMA kernel is compiled for every SIMD target Highway supports
// and dispatched to the best one this CPU runs (AVX-512 here); it keeps kChains independent
// accumulator vectors in flight so that FMA latency is hidden and throughput is the limit.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "machine_peak.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fg_bench_peak {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 12 chains: enough for 2 FMA pipes x 4-5 cycles latency (+ spare), and with the two constants
// it still fits the 16 registers of AVX2.
constexpr int kChains = 12;

template <typename T>
HWY_NOINLINE T FmaChains(int64_t iters) {
  const hn::ScalableTag<T> d;
  const auto m = hn::Set(d, T(0.9999999));
  const auto c = hn::Set(d, T(1e-7));
  auto a0 = hn::Set(d, T(0.1)), a1 = hn::Set(d, T(0.2)), a2 = hn::Set(d, T(0.3));
  auto a3 = hn::Set(d, T(0.4)), a4 = hn::Set(d, T(0.5)), a5 = hn::Set(d, T(0.6));
  auto a6 = hn::Set(d, T(0.7)), a7 = hn::Set(d, T(0.8)), a8 = hn::Set(d, T(0.9));
  auto a9 = hn::Set(d, T(1.0)), a10 = hn::Set(d, T(1.1)), a11 = hn::Set(d, T(1.2));
  for (int64_t i = 0; i < iters; ++i) {
    a0 = hn::MulAdd(a0, m, c);
    a1 = hn::MulAdd(a1, m, c);
    a2 = hn::MulAdd(a2, m, c);
    a3 = hn::MulAdd(a3, m, c);
    a4 = hn::MulAdd(a4, m, c);
    a5 = hn::MulAdd(a5, m, c);
    a6 = hn::MulAdd(a6, m, c);
    a7 = hn::MulAdd(a7, m, c);
    a8 = hn::MulAdd(a8, m, c);
    a9 = hn::MulAdd(a9, m, c);
    a10 = hn::MulAdd(a10, m, c);
    a11 = hn::MulAdd(a11, m, c);
  }
  const auto s = hn::Add(hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), hn::Add(hn::Add(a4, a5), hn::Add(a6, a7))),
                         hn::Add(hn::Add(a8, a9), hn::Add(a10, a11)));
  return hn::GetLane(hn::SumOfLanes(d, s));
}

// Returns a checksum (so the work is not optimized away); *flops_per_iter gets the flops one
// loop iteration performs.
double FmaF32(int64_t iters, double* flops_per_iter) {
  *flops_per_iter = 2.0 * kChains * static_cast<double>(hn::Lanes(hn::ScalableTag<float>()));
  return FmaChains<float>(iters);
}
double FmaF64(int64_t iters, double* flops_per_iter) {
  *flops_per_iter = 2.0 * kChains * static_cast<double>(hn::Lanes(hn::ScalableTag<double>()));
  return FmaChains<double>(iters);
}
const char* TargetHere() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace fg_bench_peak
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "machine_peak.h"

namespace fg_bench_peak {
HWY_EXPORT(FmaF32);
HWY_EXPORT(FmaF64);
HWY_EXPORT(TargetHere);
}  // namespace fg_bench_peak

namespace fg::bench {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

volatile double g_sink = 0;

using FmaFn = double (*)(int64_t, double*);

// GFLOP/s of `fn` on `threads` threads (each runs the same iteration count), best of 7 short
// runs: on a shared machine the best run is the one least disturbed by other processes.
double fma_gflops(FmaFn fn, int threads) {
  double flops_per_iter = 0;
  // Calibrate to about 0.05 s per run on one thread.
  int64_t iters = 1 << 20;
  for (;;) {
    const auto t0 = Clock::now();
    g_sink = g_sink + fn(iters, &flops_per_iter);
    const double s = seconds_since(t0);
    if (s > 0.05) {
      iters = static_cast<int64_t>(static_cast<double>(iters) * 0.05 / s);
      break;
    }
    iters *= 4;
  }
  double best = 0;
  for (int rep = 0; rep < 7; ++rep) {
    const auto t0 = Clock::now();
    double sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    { sink += fn(iters, &flops_per_iter); }
    const double s = seconds_since(t0);
    g_sink = g_sink + sink;
    best = std::max(best, static_cast<double>(threads) * static_cast<double>(iters) * flops_per_iter / s / 1e9);
  }
  return best;
}

struct Freer {
  void operator()(double* p) const { std::free(p); }
};

// STREAM copy and triad over three 256 MiB arrays of doubles, all threads, best of 5.
void stream(double* copy_gbs, double* triad_gbs) {
  const size_t n = (size_t{256} << 20) / sizeof(double);
  std::unique_ptr<double, Freer> a(static_cast<double*>(std::aligned_alloc(64, n * sizeof(double))));
  std::unique_ptr<double, Freer> b(static_cast<double*>(std::aligned_alloc(64, n * sizeof(double))));
  std::unique_ptr<double, Freer> c(static_cast<double*>(std::aligned_alloc(64, n * sizeof(double))));
  double* pa = a.get();
  double* pb = b.get();
  double* pc = c.get();
  const int64_t len = static_cast<int64_t>(n);
  // First touch by the threads that will use each part.
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < len; ++i) {
    pa[i] = 1.0;
    pb[i] = 2.0;
    pc[i] = 0.0;
  }
  double best_copy = 0, best_triad = 0;
  const double scalar = 3.0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < len; ++i) pc[i] = pa[i];
    double s = seconds_since(t0);
    best_copy = std::max(best_copy, 2.0 * static_cast<double>(n * sizeof(double)) / s / 1e9);
    t0 = Clock::now();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < len; ++i) pa[i] = pb[i] + scalar * pc[i];
    s = seconds_since(t0);
    best_triad = std::max(best_triad, 3.0 * static_cast<double>(n * sizeof(double)) / s / 1e9);
  }
  g_sink = g_sink + pa[n / 2] + pc[n / 3];
  *copy_gbs = best_copy;
  *triad_gbs = best_triad;
}

MachinePeak measure() {
  MachinePeak p;
  p.threads = omp_get_max_threads();
  p.isa = HWY_DYNAMIC_DISPATCH(fg_bench_peak::TargetHere)();
  const FmaFn f32 = [](int64_t iters, double* fpi) { return HWY_DYNAMIC_DISPATCH(fg_bench_peak::FmaF32)(iters, fpi); };
  const FmaFn f64 = [](int64_t iters, double* fpi) { return HWY_DYNAMIC_DISPATCH(fg_bench_peak::FmaF64)(iters, fpi); };
  // The first dispatched call picks the target (not thread-safe): make it here, on one thread.
  double unused = 0;
  g_sink = g_sink + HWY_DYNAMIC_DISPATCH(fg_bench_peak::FmaF32)(16, &unused) +
           HWY_DYNAMIC_DISPATCH(fg_bench_peak::FmaF64)(16, &unused);
  p.fp32_core = fma_gflops(f32, 1);
  p.fp32_all = fma_gflops(f32, p.threads);
  p.fp64_core = fma_gflops(f64, 1);
  p.fp64_all = fma_gflops(f64, p.threads);
  stream(&p.copy_gbs, &p.triad_gbs);
  return p;
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

}  // namespace

const MachinePeak& machine_peak() {
  static const MachinePeak peak = measure();
  return peak;
}

void add_peak_context() {
  const MachinePeak& p = machine_peak();
  benchmark::AddCustomContext("peak_isa", p.isa);
  benchmark::AddCustomContext("peak_threads", std::to_string(p.threads));
  benchmark::AddCustomContext("peak_fp32_fma_GFLOP/s",
                              fmt(p.fp32_all) + " all cores, " + fmt(p.fp32_core) + " one core");
  benchmark::AddCustomContext("peak_fp64_fma_GFLOP/s",
                              fmt(p.fp64_all) + " all cores, " + fmt(p.fp64_core) + " one core");
  benchmark::AddCustomContext(
      "peak_mem_GB/s", "copy " + fmt(p.copy_gbs) + ", triad " + fmt(p.triad_gbs) + " (256 MiB arrays, all cores)");
}

namespace {
Device& chosen_device() {
  static Device d(kCPU);
  return d;
}
}  // namespace

void parse_device(int* argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    if (arg == "--device" && i + 1 < *argc)
      value = argv[++i];
    else if (arg.rfind("--device=", 0) == 0)
      value = arg.substr(9);
    else {
      argv[kept++] = argv[i];
      continue;
    }
    if (value != "cpu" && value != "cuda") {
      std::fprintf(stderr, "--device takes cpu or cuda, got '%s'\n", value.c_str());
      std::exit(2);
    }
    if (value == "cuda" && !fg::cuda::is_available()) {
      std::fprintf(stderr, "--device cuda: %s\n", fg::cuda::unavailable_reason().c_str());
      std::exit(1);
    }
    chosen_device() = Device(value);
  }
  *argc = kept;
  argv[kept] = nullptr;
  benchmark::AddCustomContext("device", chosen_device().str());
}

Device device() { return chosen_device(); }

}  // namespace fg::bench
#endif  // HWY_ONCE
