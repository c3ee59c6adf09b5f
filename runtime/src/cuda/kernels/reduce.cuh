// Row kernels: reductions and softmax over the contiguous last dim of a [rows, n] array, one block
// per row. Threads stride over the row, then combine through warp shuffles and one shared-memory
// slot per warp. Compiled by nvcc for the GPU and by the host compiler through compat.h.
#pragma once

#include <cstdint>
#include <cmath>
#include <type_traits>

#include "cuda/compat.h"
#include "cuda/kernels/launch_plan.h"
#include "kernels/elementwise_ops.h"

namespace fg::cuda {
inline namespace FG_CUDA_MODE {

using kernels::ReduceKind;

// (Literal constants: std::numeric_limits is host-only code for nvcc.)
template <typename T>
__device__ __forceinline__ T reduce_identity(ReduceKind kind) {
  if (kind == ReduceKind::Sum) return T(0);
  if constexpr (std::is_floating_point<T>::value)
    return kind == ReduceKind::Max ? -static_cast<T>(INFINITY) : static_cast<T>(INFINITY);
  else
    return kind == ReduceKind::Max ? T(INT64_MIN) : T(INT64_MAX);
}

// Sum, or max / min propagating NaN (the element-wise maximum / minimum of the shared math).
template <typename T>
__device__ __forceinline__ T reduce_combine(ReduceKind kind, T a, T b) {
  if (kind == ReduceKind::Sum) return a + b;
  return kernels::apply_binary<T>(kind == ReduceKind::Max ? kernels::BinaryKind::Maximum : kernels::BinaryKind::Minimum,
                                  a, b);
}

// Lane 0 ends with the warp's combined value (the other lanes hold partial values).
template <typename T>
__device__ __forceinline__ T warp_reduce(T v, ReduceKind kind) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    v = reduce_combine(kind, v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// The block's combined value, in every thread. Every thread of the block must call it;
// `shared` holds one T per warp and is free again when it returns.
template <typename T>
__device__ T block_reduce(T v, ReduceKind kind, T* shared) {
  const int lane = static_cast<int>(threadIdx.x) % warpSize, warp = static_cast<int>(threadIdx.x) / warpSize;
  const int warps = (static_cast<int>(blockDim.x) + warpSize - 1) / warpSize;
  v = warp_reduce(v, kind);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_reduce(lane < warps ? shared[lane] : reduce_identity<T>(kind), kind);
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const T result = shared[0];
  __syncthreads();  // everyone has read shared[0] before a next call overwrites it
  return result;
}

// out[r] = reduce(in[r, 0..n)); T float, double or int64.
template <typename T>
__global__ void reduce_rows_kernel(int64_t rows, int64_t n, const T* in, T* out, ReduceKind kind) {
  FG_DYNAMIC_SHARED(T, shared);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = in + row * n;
    T acc = reduce_identity<T>(kind);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) acc = reduce_combine(kind, acc, x[j]);
    acc = block_reduce(acc, kind, shared);
    if (threadIdx.x == 0) out[row] = acc;
  }
}

// Softmax (or log-softmax) of each row: the max, then the sum of exp(x - max), then the outputs.
template <typename T>
__global__ void softmax_rows_kernel(int64_t rows, int64_t n, const T* in, T* out, bool log) {
  FG_DYNAMIC_SHARED(T, shared);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = in + row * n;
    T* y = out + row * n;
    T m = reduce_identity<T>(ReduceKind::Max);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = reduce_combine(ReduceKind::Max, m, x[j]);
    m = block_reduce(m, ReduceKind::Max, shared);
    T s = T(0);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += std::exp(x[j] - m);
    s = block_reduce(s, ReduceKind::Sum, shared);
    if (log) {
      const T shift = m + std::log(s);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) y[j] = x[j] - shift;
    } else {
      const T inv = T(1) / s;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) y[j] = std::exp(x[j] - m) * inv;
    }
  }
}

template <typename T>
void launch_reduce_rows(ReduceKind kind, int64_t rows, int64_t n, const T* in, T* out, cudaStream_t stream) {
  const LaunchPlan p = plan_rows(rows, n, sizeof(T));
  launch(reduce_rows_kernel<T>, dim3(p.grid), dim3(p.block), p.shared_bytes, stream, rows, n, in, out, kind);
}

template <typename T>
void launch_softmax_rows(bool log, int64_t rows, int64_t n, const T* in, T* out, cudaStream_t stream) {
  const LaunchPlan p = plan_rows(rows, n, sizeof(T));
  launch(softmax_rows_kernel<T>, dim3(p.grid), dim3(p.block), p.shared_bytes, stream, rows, n, in, out, log);
}

}  // namespace FG_CUDA_MODE
}  // namespace fg::cuda
