// The N-d iteration under every element-wise op, copy and cast: operands with arbitrary byte
// strides over one shape (stride 0 where broadcast). Dimensions are coalesced where the memory
// layout allows, and the body is called once per innermost run, so kernels see long 1-D loops.
// Large iteration spaces are split across threads.
#pragma once

#include <omp.h>

#include <array>
#include <cstdint>
#include <vector>

#include "funcgen/runtime/array_ref.h"

namespace fg::detail {

// Work below this many elements runs on one thread: forking costs more than it saves.
constexpr int64_t kParallelGrain = 1 << 15;

template <size_t N>
struct LoopPlan {
  std::vector<int64_t> sizes;                  // innermost first, coalesced, no size-1 dims
  std::vector<std::array<int64_t, N>> strides;  // byte strides per dim and operand
};

template <size_t N>
LoopPlan<N> plan_loop(IntArrayRef shape, const std::array<const int64_t*, N>& byte_strides) {
  LoopPlan<N> plan;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    const int64_t size = shape[d];
    if (size == 1) continue;
    std::array<int64_t, N> st;
    for (size_t k = 0; k < N; ++k) st[k] = byte_strides[k][d];
    if (!plan.sizes.empty()) {
      // Merge into the previous (inner) dim when stepping this dim is stepping past it.
      bool mergeable = true;
      for (size_t k = 0; k < N; ++k)
        if (st[k] != plan.strides.back()[k] * plan.sizes.back()) mergeable = false;
      if (mergeable) {
        plan.sizes.back() *= size;
        continue;
      }
    }
    plan.sizes.push_back(size);
    plan.strides.push_back(st);
  }
  return plan;
}

// body(char* const* ptrs, const int64_t* byte_strides, int64_t n) for each innermost run.
// `parallel` must be false when the body is not safe to run concurrently on disjoint runs.
template <size_t N, typename Body>
void strided_loop(IntArrayRef shape, const std::array<char*, N>& base,
                  const std::array<const int64_t*, N>& byte_strides, Body&& body,
                  bool parallel = true) {
  for (int64_t s : shape)
    if (s == 0) return;
  const LoopPlan<N> plan = plan_loop<N>(shape, byte_strides);
  if (plan.sizes.empty()) {
    const std::array<int64_t, N> zero{};
    body(base.data(), zero.data(), int64_t{1});
    return;
  }
  const int64_t inner = plan.sizes[0];
  const std::array<int64_t, N> inner_strides = plan.strides[0];
  int64_t outer = 1;
  for (size_t d = 1; d < plan.sizes.size(); ++d) outer *= plan.sizes[d];
  // Tasks are (outer index, block of the inner run), so one long run splits across threads too.
  const int64_t block = inner > kParallelGrain ? kParallelGrain : inner;
  const int64_t blocks_per_run = (inner + block - 1) / block;
  const int64_t tasks = outer * blocks_per_run;
  auto run_task = [&](int64_t task) {
    int64_t o = task / blocks_per_run;
    const int64_t b = task % blocks_per_run;
    std::array<char*, N> ptrs = base;
    for (size_t d = 1; d < plan.sizes.size() && o > 0; ++d) {
      const int64_t idx = o % plan.sizes[d];
      o /= plan.sizes[d];
      for (size_t k = 0; k < N; ++k) ptrs[k] += idx * plan.strides[d][k];
    }
    const int64_t start = b * block;
    for (size_t k = 0; k < N; ++k) ptrs[k] += start * inner_strides[k];
    const int64_t n = (start + block <= inner) ? block : inner - start;
    body(ptrs.data(), inner_strides.data(), n);
  };
  const bool use_threads = parallel && outer * inner >= 2 * kParallelGrain && tasks > 1 &&
                           !omp_in_parallel() && omp_get_max_threads() > 1;
  if (use_threads) {
#pragma omp parallel for schedule(static)
    for (int64_t task = 0; task < tasks; ++task) run_task(task);
  } else {
    for (int64_t task = 0; task < tasks; ++task) run_task(task);
  }
}

// Byte strides of a tensor's geometry, broadcast to `shape` (stride 0 on broadcast dims).
std::vector<int64_t> broadcast_byte_strides(IntArrayRef sizes, IntArrayRef strides,
                                            size_t element_size, IntArrayRef shape);

}  // namespace fg::detail
