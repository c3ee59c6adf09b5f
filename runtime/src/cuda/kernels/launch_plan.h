// Pure launch plans (grid, block, shared memory) of the CUDA kernels: no CUDA types, so the
// planning is tested on any machine and the .cu files only launch what they are given.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace fg::cuda {

struct LaunchPlan {
  unsigned grid = 1;        // blocks (x only)
  unsigned block = 1;       // threads per block (x only)
  size_t shared_bytes = 0;  // dynamic shared memory
};

// Element-wise kernels: 256 threads, one element per thread per grid-stride step, and at most
// enough blocks to fill a large GPU several times over (132 SMs x 16 resident blocks on an H100
// class part); the grid-stride loop covers the rest.
inline LaunchPlan plan_elementwise(int64_t n) {
  constexpr int64_t kBlock = 256, kMaxBlocks = 132 * 16 * 4;
  const int64_t blocks = std::min<int64_t>(std::max<int64_t>((n + kBlock - 1) / kBlock, 1), kMaxBlocks);
  return LaunchPlan{static_cast<unsigned>(blocks), static_cast<unsigned>(kBlock), 0};
}

// Row kernels (reductions, softmax): one block per row (grid-stride over rows beyond the grid
// limit), threads a power of two from one warp up to 512 as the row allows; one partial value
// per warp in shared memory for the final combine.
inline LaunchPlan plan_rows(int64_t rows, int64_t n, size_t accumulator_bytes) {
  unsigned block = 32;
  while (block < 512 && static_cast<int64_t>(block) < n) block *= 2;
  const int64_t blocks = std::min<int64_t>(std::max<int64_t>(rows, 1), 65535 * 8);
  return LaunchPlan{static_cast<unsigned>(blocks), block, (block / 32) * accumulator_bytes};
}

}  // namespace fg::cuda
