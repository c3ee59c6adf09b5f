// The machine's measured limits, for printing each benchmark figure beside the peak it could
// reach: FP32/FP64 FMA throughput (one core and all cores) and STREAM-style memory bandwidth.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "funcgen/funcgen.h"

namespace fg::bench {

struct MachinePeak {
  int threads = 1;       // OpenMP threads used for the all-core figures
  std::string isa;       // SIMD target the FMA kernel ran on (Highway dynamic dispatch)
  double fp32_core = 0;  // GFLOP/s, one core (an FMA counts as 2 flops)
  double fp32_all = 0;   // GFLOP/s, all cores
  double fp64_core = 0;
  double fp64_all = 0;
  double copy_gbs = 0;   // GB/s (1e9 bytes), c[i] = a[i] over 256 MiB arrays, all cores
  double triad_gbs = 0;  // GB/s, a[i] = b[i] + s * c[i]
};

// Measured on first use (about two seconds), then cached.
const MachinePeak& machine_peak();

// Measures the peak and reports it through benchmark::AddCustomContext (so it heads the
// console output and lands in the JSON "context"), plus `extra` key/value lines.
void add_peak_context();

// `--device cpu|cuda` (or --device=cuda): where the benchmarks' tensors live, taken out of argv
// before Google Benchmark reads it. Asking for cuda where it cannot run exits with the reason.
void parse_device(int* argc, char** argv);
Device device();
// `options` on the benchmarks' device.
inline TensorOptions on_device(TensorOptions options = {}) { return options.device(device()); }

// Runs `body` once untimed (first-touch page faults, lazy initialization), then for every
// benchmark iteration; returns the wall-clock seconds the timed iterations took (on CUDA, until
// the queued kernels have finished). An op that does not run on the device skips the benchmark
// with its fg::Error (returning 1 second, so that the caller's counters stay finite).
template <typename Body>
double timed_seconds(benchmark::State& state, Body&& body) {
  try {
    body();
    if (device().is_cuda()) fg::cuda::synchronize();
  } catch (const fg::Error& e) {
    state.SkipWithError(e.what());
    return 1.0;
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) body();
  if (device().is_cuda()) fg::cuda::synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace fg::bench
