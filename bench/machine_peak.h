// The machine's measured limits, for printing each benchmark figure beside the peak it could
// reach: FP32/FP64 FMA throughput (one core and all cores) and STREAM-style memory bandwidth.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

namespace fg::bench {

struct MachinePeak {
  int threads = 1;           // OpenMP threads used for the all-core figures
  std::string isa;           // SIMD target the FMA kernel ran on (Highway dynamic dispatch)
  double fp32_core = 0;      // GFLOP/s, one core (an FMA counts as 2 flops)
  double fp32_all = 0;       // GFLOP/s, all cores
  double fp64_core = 0;
  double fp64_all = 0;
  double copy_gbs = 0;       // GB/s (1e9 bytes), c[i] = a[i] over 256 MiB arrays, all cores
  double triad_gbs = 0;      // GB/s, a[i] = b[i] + s * c[i]
};

// Measured on first use (about two seconds), then cached.
const MachinePeak& machine_peak();

// Measures the peak and reports it through benchmark::AddCustomContext (so it heads the
// console output and lands in the JSON "context"), plus `extra` key/value lines.
void add_peak_context();

// Runs `body` once untimed (first-touch page faults, lazy initialization), then for every
// benchmark iteration; returns the wall-clock seconds the timed iterations took.
template <typename Body>
double timed_seconds(benchmark::State& state, Body&& body) {
  body();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace fg::bench
