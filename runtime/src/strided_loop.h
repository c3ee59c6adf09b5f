// The N-d iteration under every element-wise op, copy and cast: operands with arbitrary byte
// strides over one shape (stride 0 where broadcast). Dimensions are coalesced where the memory
// layout allows, and the body is called once per innermost run, so kernels see long 1-D loops.
// Large iteration spaces are split across threads.
#pragma once

#include <omp.h>

#include <algorithm>
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

// Orders dims outermost to innermost so that operand 0 (then 1, ...) walks memory forwards
// (TensorIterator's reorder_dimensions), then drops size-1 dims and coalesces.
template <size_t N>
LoopPlan<N> plan_loop(IntArrayRef shape, const std::array<const int64_t*, N>& byte_strides) {
  std::vector<int64_t> order;  // innermost first
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d)
    if (shape[d] != 1) order.push_back(d);
  // Whether dim a should sit inside dim b: decided by the first operand that strides both.
  auto inner_than = [&](int64_t a, int64_t b) {
    for (size_t k = 0; k < N; ++k) {
      const int64_t sa = byte_strides[k][a] < 0 ? -byte_strides[k][a] : byte_strides[k][a];
      const int64_t sb = byte_strides[k][b] < 0 ? -byte_strides[k][b] : byte_strides[k][b];
      if (sa == 0 || sb == 0 || sa == sb) continue;
      return sa < sb;
    }
    return false;
  };
  // Insertion sort: stable, and dims are few.
  for (size_t i = 1; i < order.size(); ++i)
    for (size_t j = i; j > 0 && inner_than(order[j], order[j - 1]); --j) std::swap(order[j], order[j - 1]);

  LoopPlan<N> plan;
  for (int64_t d : order) {
    const int64_t size = shape[d];
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

// Whether the two inner dims should be walked in square tiles: some operand strides far in the
// innermost dim but is (nearly) contiguous in the next one, as in a transpose. Tiles keep the
// cache lines of that operand alive across consecutive runs.
template <size_t N>
bool wants_tiles(const LoopPlan<N>& plan) {
  if (plan.sizes.size() < 2 || plan.sizes[0] < 16 || plan.sizes[1] < 16) return false;
  for (size_t k = 0; k < N; ++k) {
    const int64_t s0 = plan.strides[0][k] < 0 ? -plan.strides[0][k] : plan.strides[0][k];
    const int64_t s1 = plan.strides[1][k] < 0 ? -plan.strides[1][k] : plan.strides[1][k];
    if (s0 > 256 && s1 > 0 && s1 <= 16) return true;
  }
  return false;
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
  const bool tiled = wants_tiles(plan);
  // Dims from `first_outer` on are walked by index; the ones inside it by the task itself.
  const size_t first_outer = tiled ? 2 : 1;
  int64_t outer = 1;
  for (size_t d = first_outer; d < plan.sizes.size(); ++d) outer *= plan.sizes[d];
  // Tasks are (outer index, block): a block of the inner run, or a strip of tiles.
  // Tiles are kTileInner elements along the inner dim (that many cache lines of the strided
  // operand, few enough not to alias out of L1 at power-of-two strides) by kTileOuter runs (a
  // couple of cache lines of that operand).
  constexpr int64_t kTileInner = 8, kTileOuter = 32;
  const int64_t block = tiled ? kTileOuter : (inner > kParallelGrain ? kParallelGrain : inner);
  const int64_t blocked_extent = tiled ? plan.sizes[1] : inner;
  const int64_t blocks_per_run = (blocked_extent + block - 1) / block;
  const int64_t tasks = outer * blocks_per_run;
  auto run_task = [&](int64_t task) {
    int64_t o = task / blocks_per_run;
    const int64_t b = task % blocks_per_run;
    std::array<char*, N> ptrs = base;
    for (size_t d = first_outer; d < plan.sizes.size() && o > 0; ++d) {
      const int64_t idx = o % plan.sizes[d];
      o /= plan.sizes[d];
      for (size_t k = 0; k < N; ++k) ptrs[k] += idx * plan.strides[d][k];
    }
    const int64_t start = b * block;
    const int64_t len = (start + block <= blocked_extent) ? block : blocked_extent - start;
    if (!tiled) {
      for (size_t k = 0; k < N; ++k) ptrs[k] += start * inner_strides[k];
      body(ptrs.data(), inner_strides.data(), len);
      return;
    }
    // A strip of `len` rows of dim 1, walked tile by tile.
    for (int64_t i0 = 0; i0 < inner; i0 += kTileInner) {
      const int64_t n = (i0 + kTileInner <= inner) ? kTileInner : inner - i0;
      for (int64_t j = start; j < start + len; ++j) {
        std::array<char*, N> p = ptrs;
        for (size_t k = 0; k < N; ++k) p[k] += j * plan.strides[1][k] + i0 * inner_strides[k];
        body(p.data(), inner_strides.data(), n);
      }
    }
  };
  const int64_t total = outer * blocked_extent * (tiled ? inner : 1);
  const bool use_threads = parallel && total >= 2 * kParallelGrain && tasks > 1 &&
                           !omp_in_parallel() && omp_get_max_threads() > 1;
  if (use_threads) {
#pragma omp parallel for schedule(static)
    for (int64_t task = 0; task < tasks; ++task) run_task(task);
  } else if (tiled || blocks_per_run > 1) {
    for (int64_t task = 0; task < tasks; ++task) run_task(task);
  } else {
    // One run per outer index, in order: step the pointers like an odometer rather than divide the
    // index per run (many short runs: a column broadcast across the rows of a small matrix).
    std::array<char*, N> ptrs = base;
    std::vector<int64_t> index(plan.sizes.size(), 0);
    for (int64_t o = 0; o < outer; ++o) {
      body(ptrs.data(), inner_strides.data(), inner);
      for (size_t d = 1; d < plan.sizes.size(); ++d) {
        if (++index[d] < plan.sizes[d]) {
          for (size_t k = 0; k < N; ++k) ptrs[k] += plan.strides[d][k];
          break;
        }
        index[d] = 0;
        for (size_t k = 0; k < N; ++k) ptrs[k] -= plan.strides[d][k] * (plan.sizes[d] - 1);
      }
    }
  }
}

// f(i) for i in [begin, end): on OpenMP's threads when `threads`, else inline. (A parallel region
// whose if clause is false still starts a team of one, with an allocation, on every call: a
// quarter of a small reduction.)
template <typename F>
void parallel_for(int64_t begin, int64_t end, bool threads, F&& f) {
  if (threads) {
#pragma omp parallel for schedule(static)
    for (int64_t i = begin; i < end; ++i) f(i);
  } else {
    for (int64_t i = begin; i < end; ++i) f(i);
  }
}

// Byte strides of a tensor's geometry, broadcast to `shape` (stride 0 on broadcast dims).
std::vector<int64_t> broadcast_byte_strides(IntArrayRef sizes, IntArrayRef strides,
                                            size_t element_size, IntArrayRef shape);

}  // namespace fg::detail
