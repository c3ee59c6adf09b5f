// Indexing kernels along one dim: gather (gather, index_select, embedding) and scatter_add
// (scatter_add, the backward of index_select and nll_loss). One grid-stride loop over the index's
// elements; the OffsetCalc gives each operand's offset with self's stride along the indexed dim
// set to 0, and the index value times that stride (dim_stride, bytes) is added. Indices are checked
// on the host before the launch (device.cpp), so the kernels never read out of bounds.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/compat.h"
#include "cuda/kernels/elementwise.cuh"

namespace fg::cuda {
inline namespace FG_CUDA_MODE {

// *address += value, atomically: repeated indices of scatter_add meet at one element. Floating
// sums land in the order the threads arrive, as torch's CUDA scatter_add.
template <typename T>
__device__ __forceinline__ void atomic_add(T* address, T value) {
  if constexpr (std::is_same<T, int64_t>::value)
    atomicAdd(reinterpret_cast<unsigned long long*>(address),  // NOLINT(runtime/int): two's complement wraps alike
              static_cast<unsigned long long>(value));         // NOLINT(runtime/int)
  else
    atomicAdd(address, value);
}

// out[i] = self[i with dim d replaced by index[i]]; offsets {out, self, index}.
template <typename T>
__global__ void gather_kernel(int64_t n, OffsetCalc<3> calc, char* out, const char* self, const char* index,
                              int64_t dim_stride) {
  FG_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3];
    calc.get(i, off);
    store<T>(out, off[0], load<T>(self, off[1] + load<int64_t>(index, off[2]) * dim_stride));
  }
}

// self[i with dim d replaced by index[i]] += src[i]; offsets {self, index, src}.
template <typename T>
__global__ void scatter_add_kernel(int64_t n, OffsetCalc<3> calc, char* self, const char* index, const char* src,
                                   int64_t dim_stride) {
  FG_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3];
    calc.get(i, off);
    atomic_add<T>(reinterpret_cast<T*>(self + off[0] + load<int64_t>(index, off[1]) * dim_stride),
                  load<T>(src, off[2]));
  }
}

template <typename T>
void launch_gather(int64_t n, const OffsetCalc<3>& calc, char* out, const char* self, const char* index,
                   int64_t dim_stride, cudaStream_t stream) {
  const LaunchPlan p = plan_elementwise(n);
  launch(gather_kernel<T>, dim3(p.grid), dim3(p.block), 0, stream, n, calc, out, self, index, dim_stride);
}

template <typename T>
void launch_scatter_add(int64_t n, const OffsetCalc<3>& calc, char* self, const char* index, const char* src,
                        int64_t dim_stride, cudaStream_t stream) {
  const LaunchPlan p = plan_elementwise(n);
  launch(scatter_add_kernel<T>, dim3(p.grid), dim3(p.block), 0, stream, n, calc, self, index, src, dim_stride);
}

}  // namespace FG_CUDA_MODE
}  // namespace fg::cuda
