// The torch.func tutorials' workloads as funcgen generates them (tutorials_model.cpp, cnn_model.cpp),
// float32, timed one workload at a time. Prints one JSON line per workload (median µs per call,
// and the floor: the time the FLOPs take at the measured FMA peak or the bytes at the measured
// bandwidth, whichever is longer), then a table. `--out DIR` writes every output as raw float32
// (`<workload>.<k>.f32`, shapes in `<workload>.json`) for tutorials_ref.py to check against
// torch.func and JAX; bench/run_tutorials.sh runs all three side by side.
//
//   bench_tutorials [--filter SUBSTRING] [--min-time SECONDS] [--out DIR]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "cnn_model.funcgen.h"
#include "cnn_model.h"
#include "inputs.h"
#include "machine_peak.h"
#include "tutorials_model.funcgen.h"
#include "tutorials_model.h"

namespace {

using Outputs = std::vector<fg::Tensor>;

struct Workload {
  std::string name;
  double flops = 0;  // multiply-adds count 2
  double bytes = 0;  // the least traffic: inputs read once, outputs written once
  std::function<Outputs()> run;
};

using fg::bench::labels;
using fg::bench::values;

constexpr double kF = 4;  // bytes per float32

Workload per_sample_grads_mlp() {
  const int64_t b = 64, in = 784, hidden = 128, classes = 10;
  const tutorials::Mlp p{values({hidden, in}, 1, 1.0 / 28), values({hidden}, 2, 0.1),
                         values({classes, hidden}, 3, 1.0 / 11), values({classes}, 4, 0.1)};
  const fg::Tensor x = values({b, in}, 5, 1.0), t = labels(b);
  const double f1 = in * hidden, f2 = hidden * classes, params = f1 + hidden + f2 + classes;
  // Forward 2(f1 + f2); backward: w2's gradient and the hidden's (2 f2 each), w1's (2 f1).
  return {"per_sample_grads_mlp", b * 2.0 * (2 * f1 + 3 * f2), kF * (b * params + b * in + params), [=] {
            const tutorials::Mlp g = tutorials::per_sample_grads(p, x, t);
            return Outputs{g.w1, g.b1, g.w2, g.b2};
          }};
}

// tanh(linear(x)): a jacobian costs the forward (2 out in) and scaling W's rows (out in).
double predict_flops(int64_t out, int64_t in) { return 3.0 * static_cast<double>(out * in); }
double predict_bytes(int64_t out, int64_t in) { return kF * static_cast<double>(2 * out * in + 2 * out + in); }

template <typename Jacobian>
Workload jacobian(const std::string& name, int64_t out, int64_t in, Jacobian jac) {
  const fg::Tensor w = values({out, in}, 1, 1.0 / std::sqrt(static_cast<double>(in)));
  const fg::Tensor bias = values({out}, 2, 0.1), x = values({in}, 3, 1.0);
  return {name, predict_flops(out, in), predict_bytes(out, in), [=] { return Outputs{jac(w, bias, x)}; }};
}

Workload vmap_jacrev_predict() {
  const int64_t b = 64, d = 16;
  const fg::Tensor w = values({d, d}, 1, 0.25), bias = values({d}, 2, 0.1), x = values({b, d}, 3, 1.0);
  return {"vmap_jacrev_predict_B64_D16", b * predict_flops(d, d), kF * (b * d * d + d * d + b * d + d),
          [=] { return Outputs{tutorials::vmap_jacrev_predict(w, bias, x)}; }};
}

Workload hessian_predict_sum() {
  const int64_t d = 16;
  const fg::Tensor w = values({d, d}, 1, 0.25), bias = values({d}, 2, 0.1), x = values({d}, 3, 1.0);
  // W^T diag(tanh'') W after the forward.
  return {"hessian_predict_sum_D16", predict_flops(d, d) + 2.0 * d * d * d, kF * (2 * d * d + 2 * d),
          [=] { return Outputs{tutorials::hessian_predict_sum(w, bias, x)}; }};
}

Workload ensemble() {
  const int64_t m = 10, b = 64, in = 784, hidden = 128, classes = 10;
  const tutorials::Mlp3 p{values({m, hidden, in}, 1, 1.0 / 28),      values({m, hidden}, 2, 0.1),
                          values({m, hidden, hidden}, 3, 1.0 / 11),  values({m, hidden}, 4, 0.1),
                          values({m, classes, hidden}, 5, 1.0 / 11), values({m, classes}, 6, 0.1)};
  const fg::Tensor x = values({b, in}, 7, 1.0);
  const double per_model = in * hidden + hidden * hidden + hidden * classes;
  return {"ensemble_mlp_M10_B64", m * b * 2.0 * per_model,
          kF * (m * (per_model + 2 * hidden + classes) + b * in + m * b * classes),
          [=] { return Outputs{tutorials::ensemble(p, x)}; }};
}

Workload hvp() {
  const int64_t n = 4096;
  const fg::Tensor x = values({n}, 1, 1.0), v = values({n}, 2, 1.0);
  // Counting sin and cos as one flop each: the floor is the traffic (x, v read; grad, hvp written).
  return {"hvp_4096", 6.0 * n, kF * 4 * n, [=] {
            auto [g, hv] = tutorials::hvp(x, v);
            return Outputs{g, hv};
          }};
}

Workload per_sample_grads_cnn() {
  const int64_t b = 64;
  const bench_cnn::SimpleCNN m = fg::bench::cnn_model();
  const fg::Tensor x = values({b, 1, 28, 28}, 9, 1.0), t = labels(b);
  const double forward = fg::bench::kCnnForwardFlops;
  const double params = 288 + 32 + 18432 + 64 + 9216 * 128 + 128 + 1280 + 10;
  return {"per_sample_grads_cnn", 3 * b * forward, kF * (b * params + params + b * 784), [=] {
            const bench_cnn::SimpleCNN g = bench_cnn::per_sample_grads(m, x, t);
            return Outputs{g.conv1_w, g.conv1_b, g.conv2_w, g.conv2_b, g.fc1_w, g.fc1_b, g.fc2_w, g.fc2_b};
          }};
}

std::vector<Workload> workloads() {
  return {per_sample_grads_mlp(),
          jacobian("jacrev_predict_D16", 16, 16, tutorials::jacrev_predict),
          jacobian("jacfwd_predict_D16", 16, 16, tutorials::jacfwd_predict),
          vmap_jacrev_predict(),
          hessian_predict_sum(),
          jacobian("jacfwd_tall_2048x32", 2048, 32, tutorials::jacfwd_predict),
          jacobian("jacrev_tall_2048x32", 2048, 32, tutorials::jacrev_predict),
          jacobian("jacfwd_wide_32x2048", 32, 2048, tutorials::jacfwd_predict),
          jacobian("jacrev_wide_32x2048", 32, 2048, tutorials::jacrev_predict),
          ensemble(),
          hvp(),
          per_sample_grads_cnn()};
}

using Clock = std::chrono::steady_clock;

// Median µs per call: calls in samples of about min_time / 15 each, after a warm-up of at least
// three calls; the median of the samples' averages.
double median_us(const Workload& w, double min_time) {
  auto timed = [&](int64_t calls) {
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < calls; ++i) w.run();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  double once = timed(3) / 3;
  once = std::min(once, timed(1));
  const int samples = 15;
  const int64_t calls = std::max<int64_t>(1, static_cast<int64_t>(min_time / samples / std::max(once, 1e-9)));
  std::vector<double> us;
  for (int s = 0; s < samples; ++s) us.push_back(timed(calls) * 1e6 / static_cast<double>(calls));
  std::nth_element(us.begin(), us.begin() + samples / 2, us.end());
  return us[samples / 2];
}

void write_outputs(const std::string& dir, const Workload& w) {
  const Outputs outs = w.run();
  std::string shapes = "[";
  for (size_t k = 0; k < outs.size(); ++k) {
    const fg::Tensor t = outs[k].to(fg::kFloat).contiguous();
    std::ofstream(dir + "/" + w.name + "." + std::to_string(k) + ".f32", std::ios::binary)
        .write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * 4));
    shapes += std::string(k ? ", " : "") + "[";
    for (int64_t d = 0; d < t.dim(); ++d) shapes += (d ? ", " : "") + std::to_string(t.size(d));
    shapes += "]";
  }
  std::ofstream(dir + "/" + w.name + ".json") << shapes << "]\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string filter, out;
  double min_time = 0.5;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = i + 1 < argc ? argv[i] : "";  // a flag without its value: usage
    if (flag == "--filter")
      filter = argv[i + 1];
    else if (flag == "--min-time")
      min_time = std::atof(argv[i + 1]);
    else if (flag == "--out")
      out = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s [--filter SUBSTRING] [--min-time SECONDS] [--out DIR]\n", argv[0]);
      return 2;
    }
  }
  const fg::bench::MachinePeak& peak = fg::bench::machine_peak();
  std::printf("{\"machine\": {\"threads\": %d, \"isa\": \"%s\", \"fp32_gflops\": %.1f, \"triad_gbs\": %.1f}}\n",
              peak.threads, peak.isa.c_str(), peak.fp32_all, peak.triad_gbs);
  struct Row {
    std::string name;
    double us, floor_us;
  };
  std::vector<Row> rows;
  for (const Workload& w : workloads()) {
    if (!filter.empty() && w.name.find(filter) == std::string::npos) continue;
    if (!out.empty()) write_outputs(out, w);
    const double us = median_us(w, min_time);
    const double floor_us = std::max(w.flops / (peak.fp32_all * 1e3), w.bytes / (peak.triad_gbs * 1e3));
    std::printf("{\"system\": \"funcgen\", \"workload\": \"%s\", \"median_us\": %.2f, \"floor_us\": %.2f}\n",
                w.name.c_str(), us, floor_us);
    std::fflush(stdout);
    rows.push_back({w.name, us, floor_us});
  }
  std::printf("\n%-30s %12s %12s %8s\n", "workload", "median µs", "floor µs", "/floor");
  for (const Row& r : rows)
    std::printf("%-30s %12.1f %12.1f %8.1f\n", r.name.c_str(), r.us, r.floor_us, r.us / r.floor_us);
  return 0;
}
