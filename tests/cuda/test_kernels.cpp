// The pieces under the CUDA backend that need no GPU: the Philox generator against its published
// known answers, the pure launch plans, and the CPU run of CUDA kernels (cuda/compat.h) — thread
// and block indexing, shared memory with __syncthreads, warp shuffles and the block reduction
// every row kernel uses. Also built under ThreadSanitizer (test_cuda_kernels_tsan), where a
// missing __syncthreads in these kernels is a reported race.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "cuda/compat.h"
#include "cuda/kernels/launch_plan.h"
#include "cuda/kernels/reduce.cuh"
#include "kernels/philox.h"

namespace {

using fg::kernels::PhiloxBlock;

// Random123's known-answer vectors for philox4x32-10 (kat_vectors): counter, key, result.
TEST(Philox, MatchesThePublishedKnownAnswers) {
  struct Kat {
    PhiloxBlock ctr;
    uint32_t k0, k1;
    PhiloxBlock expected;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       0xffffffffu,
       0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
       0xa4093822u,
       0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Kat& k : kats) {
    const PhiloxBlock got = fg::kernels::philox4x32_10(k.ctr, k.k0, k.k1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], k.expected.v[i]) << "word " << i;
  }
  // The runtime's (seed, counter) form puts the seed in the key and the counter in the low words.
  const PhiloxBlock a = fg::kernels::philox(0x299f31d0a4093822ull, 0x85a308d3243f6a88ull);
  const PhiloxBlock b = fg::kernels::philox4x32_10({{0x243f6a88u, 0x85a308d3u, 0, 0}}, 0xa4093822u, 0x299f31d0u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.v[i], b.v[i]);
}

TEST(Philox, UniformValuesAreExactAndHalfOpen) {
  EXPECT_EQ(fg::kernels::unit_float(0), 0.0f);
  EXPECT_EQ(fg::kernels::unit_float(0xffffffffu), 1.0f - 1.0f / 16777216.0f);
  EXPECT_EQ(fg::kernels::unit_double(0xffffffffu, 0xffffffffu), 1.0 - 1.0 / 9007199254740992.0);
  float lo, hi;
  fg::kernels::draw_pair<float>(fg::kernels::Dist::Uniform, 7, 0, 0, &lo, &hi);
  const PhiloxBlock blk = fg::kernels::philox(7, 0);
  EXPECT_EQ(lo, fg::kernels::unit_float(blk.v[0]));
  EXPECT_EQ(hi, fg::kernels::unit_float(blk.v[1]));
}

TEST(LaunchPlan, ElementwiseCoversEveryElementWithBoundedGrids) {
  for (int64_t n :
       {int64_t{0}, int64_t{1}, int64_t{255}, int64_t{256}, int64_t{257}, int64_t{1} << 20, int64_t{1} << 34}) {
    const fg::cuda::LaunchPlan p = fg::cuda::plan_elementwise(n);
    EXPECT_EQ(p.block, 256u);
    EXPECT_GE(p.grid, 1u);
    EXPECT_LE(p.grid, 132u * 16 * 4);
    if (n > 0 && n <= int64_t{1} << 20) {
      EXPECT_EQ(p.grid, static_cast<unsigned>((n + 255) / 256)) << n;
    }
  }
}

TEST(LaunchPlan, RowsUseAPowerOfTwoOfWarpsAndOneSlotPerWarp) {
  EXPECT_EQ(fg::cuda::plan_rows(10, 1, 4).block, 32u);
  EXPECT_EQ(fg::cuda::plan_rows(10, 33, 4).block, 64u);
  EXPECT_EQ(fg::cuda::plan_rows(10, 100000, 8).block, 512u);
  EXPECT_EQ(fg::cuda::plan_rows(10, 100000, 8).shared_bytes, 16u * 8);
  EXPECT_EQ(fg::cuda::plan_rows(7, 5, 4).grid, 7u);
  EXPECT_EQ(fg::cuda::plan_rows(int64_t{1} << 40, 5, 4).grid, 65535u * 8);
}

// ---- the CPU run of kernels

__global__ void write_indices(int* out) {
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
  out[b * blockDim.x * blockDim.y * blockDim.z + t] = static_cast<int>(b * 1000 + t);
}

TEST(HostRun, EveryThreadOfEveryBlockRunsOnceWithItsIndices) {
  const dim3 grid(3, 2), block(4, 2, 2);
  std::vector<int> out(6 * 16, -1);
  fg::cuda::launch(write_indices, grid, block, 0, nullptr, out.data());
  for (unsigned b = 0; b < 6; ++b)
    for (unsigned t = 0; t < 16; ++t) EXPECT_EQ(out[b * 16 + t], static_cast<int>(b * 1000 + t));
}

// Reverses each block's slice through shared memory: wrong without the __syncthreads.
__global__ void reverse_in_blocks(const float* in, float* out) {
  __shared__ float tile[64];
  const unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
  tile[t] = in[base + t];
  __syncthreads();
  out[base + t] = tile[blockDim.x - 1 - t];
}

TEST(HostRun, SharedMemoryIsSharedWithinABlockAfterSyncthreads) {
  std::vector<float> in(4 * 64), out(4 * 64);
  std::iota(in.begin(), in.end(), 0.0f);
  fg::cuda::launch(reverse_in_blocks, dim3(4), dim3(64), 0, nullptr, in.data(), out.data());
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < 64; ++t) EXPECT_EQ(out[b * 64 + t], in[b * 64 + 63 - t]);
}

// Each lane records what the three shuffles give it.
__global__ void shuffles(int* down, int* xor_out, int* bcast) {
  const int lane = static_cast<int>(threadIdx.x) % warpSize;
  const int v = static_cast<int>(threadIdx.x) * 10;
  down[threadIdx.x] = __shfl_down_sync(0xffffffffu, v, 3);
  xor_out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, v, 5);
  bcast[threadIdx.x] = __shfl_sync(0xffffffffu, v, 7, 16);
  (void)lane;
}

TEST(HostRun, WarpShufflesFollowCudaSemantics) {
  std::vector<int> down(64), xr(64), bc(64);
  fg::cuda::launch(shuffles, dim3(1), dim3(64), 0, nullptr, down.data(), xr.data(), bc.data());
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32, warp = t / 32;
    // Past the warp's end a lane keeps its own value.
    EXPECT_EQ(down[t], (lane + 3 < 32 ? t + 3 : t) * 10) << t;
    EXPECT_EQ(xr[t], (warp * 32 + (lane ^ 5)) * 10) << t;
    EXPECT_EQ(bc[t], (warp * 32 + lane / 16 * 16 + 7) * 10) << t;  // width 16: per half-warp
  }
}

template <typename T>
__global__ void block_sums(const T* in, T* out, int n) {
  FG_DYNAMIC_SHARED(T, shared);
  T v = 0;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) v += in[blockIdx.x * n + i];
  const T total = fg::cuda::block_reduce(v, fg::kernels::ReduceKind::Sum, shared);
  // Every thread receives the result; a second reduction right after reuses the shared slots.
  const T count = fg::cuda::block_reduce(T(1), fg::kernels::ReduceKind::Sum, shared);
  out[blockIdx.x * blockDim.x + threadIdx.x] = count == T(blockDim.x) ? total : T(-12345);
}

TEST(HostRun, BlockReduceGivesEveryThreadTheTotal) {
  for (unsigned threads : {32u, 64u, 96u, 256u}) {
    const int n = 1000, blocks = 3;
    std::vector<double> in(blocks * n), out(blocks * threads);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i % 17) - 8;
    fg::cuda::launch(block_sums<double>, dim3(blocks), dim3(threads), (threads / 32) * sizeof(double), nullptr,
                     in.data(), out.data(), n);
    for (int b = 0; b < blocks; ++b) {
      double expected = 0;
      for (int i = 0; i < n; ++i) expected += in[b * n + i];
      for (unsigned t = 0; t < threads; ++t)
        ASSERT_EQ(out[b * threads + t], expected) << threads << " " << b << " " << t;
    }
  }
}

TEST(HostRun, RowKernelsReduceAndNormalizeRows) {
  const int64_t rows = 5, n = 77;
  std::vector<float> x(rows * n), sums(rows), maxes(rows), soft(rows * n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
  fg::cuda::launch_reduce_rows<float>(fg::kernels::ReduceKind::Sum, rows, n, x.data(), sums.data(), nullptr);
  fg::cuda::launch_reduce_rows<float>(fg::kernels::ReduceKind::Max, rows, n, x.data(), maxes.data(), nullptr);
  fg::cuda::launch_softmax_rows<float>(false, rows, n, x.data(), soft.data(), nullptr);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0, m = -INFINITY, z = 0;
    for (int64_t j = 0; j < n; ++j) {
      s += x[r * n + j];
      m = std::max<double>(m, x[r * n + j]);
    }
    for (int64_t j = 0; j < n; ++j) z += std::exp(x[r * n + j] - m);
    EXPECT_NEAR(sums[r], s, 1e-4);
    EXPECT_EQ(maxes[r], static_cast<float>(m));
    for (int64_t j = 0; j < n; ++j) EXPECT_NEAR(soft[r * n + j], std::exp(x[r * n + j] - m) / z, 1e-6);
  }
}

TEST(HostRun, AnInvalidConfigurationIsAnError) {
  std::vector<int> out(1);
  EXPECT_THROW(fg::cuda::launch(write_indices, dim3(1), dim3(2048), 0, nullptr, out.data()), fg::Error);
}

}  // namespace
