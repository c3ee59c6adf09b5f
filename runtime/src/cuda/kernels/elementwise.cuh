// Element-wise CUDA kernels (unary, binary, compare, where, clamp, cast/copy, fill, random): one
// grid-stride loop over the linear index, each operand addressed through an OffsetCalc, the math
// from the shared kernels/ headers. Compiled by nvcc for the GPU and by the host compiler through compat.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/compat.h"
#include "cuda/kernels/launch_plan.h"
#include "kernels/elementwise_ops.h"
#include "kernels/offset_calc.h"
#include "kernels/philox.h"

namespace fg::cuda {
inline namespace FG_CUDA_MODE {

using kernels::BinaryKind;
using kernels::OffsetCalc;
using kernels::UnaryKind;

// Grid-stride loop: element i for every i < n this thread owns.
#define FG_GRID_STRIDE_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

template <typename T>
__device__ __forceinline__ T load(const char* base, int64_t offset) {
  return *reinterpret_cast<const T*>(base + offset);
}
template <typename T>
__device__ __forceinline__ void store(char* base, int64_t offset, T value) {
  *reinterpret_cast<T*>(base + offset) = value;
}

// out = op(in); T float, double or int64 (bool tensors reach only relu/abs, which are copies).
// kTrigonometric: sin, cos and tan, in a kernel of their own (see kernels/elementwise_ops.h).
template <typename T, bool kTrigonometric>
__global__ void unary_kernel(int64_t n, OffsetCalc<2> calc, char* out, const char* in, UnaryKind kind) {
  FG_GRID_STRIDE_LOOP(i, n) {
    int64_t off[2];
    calc.get(i, off);
    const T x = load<T>(in, off[1]);
    if constexpr (!std::is_floating_point<T>::value)
      store<T>(out, off[0], static_cast<T>(kernels::apply_unary_integer(kind, static_cast<int64_t>(x))));
    else if constexpr (kTrigonometric)
      store<T>(out, off[0], kernels::apply_trigonometric<T>(kind, x));
    else
      store<T>(out, off[0], kernels::apply_smooth_unary<T>(kind, x));
  }
}

// out = a (op) b; integers and bool compute in int64, bool results narrow to x != 0.
template <typename T>
__global__ void binary_kernel(int64_t n, OffsetCalc<3> calc, char* out, const char* a, const char* b, BinaryKind kind) {
  using Wide = std::conditional_t<std::is_same<T, bool>::value, int64_t, T>;
  FG_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3];
    calc.get(i, off);
    const Wide r = kernels::apply_binary<Wide>(kind, load<T>(a, off[1]), load<T>(b, off[2]));
    if constexpr (std::is_same<T, bool>::value)
      store<T>(out, off[0], r != 0);
    else
      store<T>(out, off[0], r);
  }
}

// out (bool) = a (cmp) b.
template <typename T>
__global__ void compare_kernel(int64_t n, OffsetCalc<3> calc, char* out, const char* a, const char* b,
                               kernels::CompareKind kind) {
  FG_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3];
    calc.get(i, off);
    store<bool>(out, off[0], kernels::apply_compare<T>(kind, load<T>(a, off[1]), load<T>(b, off[2])));
  }
}

// out = cond ? a : b (where, masked_fill, triu/tril, and the backward passes built on them).
template <typename T>
__global__ void where_kernel(int64_t n, OffsetCalc<4> calc, char* out, const char* cond, const char* a, const char* b) {
  FG_GRID_STRIDE_LOOP(i, n) {
    int64_t off[4];
    calc.get(i, off);
    store<T>(out, off[0], load<bool>(cond, off[1]) ? load<T>(a, off[2]) : load<T>(b, off[3]));
  }
}

// out = min(max(in, lo), hi), NaN kept.
template <typename T>
__global__ void clamp_kernel(int64_t n, OffsetCalc<2> calc, char* out, const char* in, T lo, T hi) {
  FG_GRID_STRIDE_LOOP(i, n) {
    int64_t off[2];
    calc.get(i, off);
    store<T>(out, off[0], kernels::apply_clamp<T>(load<T>(in, off[1]), lo, hi));
  }
}

// out = To(in): the strided copy with dtype conversion under copy_, to(), contiguous, clone.
template <typename To, typename From>
__global__ void cast_kernel(int64_t n, OffsetCalc<2> calc, char* out, const char* in) {
  FG_GRID_STRIDE_LOOP(i, n) {
    int64_t off[2];
    calc.get(i, off);
    const From x = load<From>(in, off[1]);
    if constexpr (std::is_same<To, bool>::value)
      store<To>(out, off[0], x != From(0));
    else
      store<To>(out, off[0], static_cast<To>(x));
  }
}

template <typename T>
__global__ void fill_kernel(int64_t n, OffsetCalc<1> calc, char* out, T value) {
  FG_GRID_STRIDE_LOOP(i, n) {
    int64_t off[1];
    calc.get(i, off);
    store<T>(out, off[0], value);
  }
}

// out[0..n) of a contiguous tensor from the Philox stream: pair p from block base + p, exactly
// as the CPU generator draws it.
template <typename T>
__global__ void random_kernel(int64_t n, T* out, kernels::Dist dist, uint64_t seed, uint64_t base) {
  FG_GRID_STRIDE_LOOP(pair, (n + 1) / 2) {
    T r0, r1;
    kernels::draw_pair<T>(dist, seed, base, static_cast<uint64_t>(pair), &r0, &r1);
    out[2 * pair] = r0;
    if (2 * pair + 1 < n) out[2 * pair + 1] = r1;
  }
}

// ---- launchers: plan and launch on `stream`

template <typename T, bool kTrigonometric = false>
void launch_unary(UnaryKind kind, int64_t n, const OffsetCalc<2>& calc, char* out, const char* in,
                  cudaStream_t stream) {
  const LaunchPlan p = plan_elementwise(n);
  launch(unary_kernel<T, kTrigonometric>, dim3(p.grid), dim3(p.block), 0, stream, n, calc, out, in, kind);
}

template <typename T>
void launch_binary(BinaryKind kind, int64_t n, const OffsetCalc<3>& calc, char* out, const char* a, const char* b,
                   cudaStream_t stream) {
  const LaunchPlan p = plan_elementwise(n);
  launch(binary_kernel<T>, dim3(p.grid), dim3(p.block), 0, stream, n, calc, out, a, b, kind);
}

template <typename T>
void launch_compare(kernels::CompareKind kind, int64_t n, const OffsetCalc<3>& calc, char* out, const char* a,
                    const char* b, cudaStream_t stream) {
  const LaunchPlan p = plan_elementwise(n);
  launch(compare_kernel<T>, dim3(p.grid), dim3(p.block), 0, stream, n, calc, out, a, b, kind);
}

template <typename T>
void launch_where(int64_t n, const OffsetCalc<4>& calc, char* out, const char* cond, const char* a, const char* b,
                  cudaStream_t stream) {
  const LaunchPlan p = plan_elementwise(n);
  launch(where_kernel<T>, dim3(p.grid), dim3(p.block), 0, stream, n, calc, out, cond, a, b);
}

template <typename T>
void launch_clamp(int64_t n, const OffsetCalc<2>& calc, char* out, const char* in, T lo, T hi, cudaStream_t stream) {
  const LaunchPlan p = plan_elementwise(n);
  launch(clamp_kernel<T>, dim3(p.grid), dim3(p.block), 0, stream, n, calc, out, in, lo, hi);
}

template <typename To, typename From>
void launch_cast(int64_t n, const OffsetCalc<2>& calc, char* out, const char* in, cudaStream_t stream) {
  const LaunchPlan p = plan_elementwise(n);
  launch(cast_kernel<To, From>, dim3(p.grid), dim3(p.block), 0, stream, n, calc, out, in);
}

template <typename T>
void launch_fill(int64_t n, const OffsetCalc<1>& calc, char* out, T value, cudaStream_t stream) {
  const LaunchPlan p = plan_elementwise(n);
  launch(fill_kernel<T>, dim3(p.grid), dim3(p.block), 0, stream, n, calc, out, value);
}

template <typename T>
void launch_random(int64_t n, T* out, kernels::Dist dist, uint64_t seed, uint64_t base, cudaStream_t stream) {
  const LaunchPlan p = plan_elementwise((n + 1) / 2);
  launch(random_kernel<T>, dim3(p.grid), dim3(p.block), 0, stream, n, out, dist, seed, base);
}

}  // namespace FG_CUDA_MODE
}  // namespace fg::cuda
