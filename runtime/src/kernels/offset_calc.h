// Maps the linear index of an element of an N-operand element-wise op to each operand's byte
// offset: the strided, broadcasting addressing of the CUDA kernels (PyTorch's OffsetCalculator).
// Built on the host from the coalesced loop plan the CPU backend iterates with, so both devices
// walk the same dims; passed to kernels by value.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace fg::kernels {

// More dims than any tensor the runtime creates keeps after coalescing (torch allows 25; the
// builder throws naming the op beyond this).
constexpr int kMaxKernelDims = 16;

template <int N>
struct OffsetCalc {
  int dims = 0;  // innermost first
  int64_t sizes[kMaxKernelDims] = {};
  int64_t strides[kMaxKernelDims][N] = {};  // bytes, per dim and operand

  FG_HD_INLINE void get(int64_t linear, int64_t* offsets) const {
    for (int k = 0; k < N; ++k) offsets[k] = 0;
    for (int d = 0; d < dims; ++d) {
      const int64_t i = linear % sizes[d];
      linear /= sizes[d];
      for (int k = 0; k < N; ++k) offsets[k] += i * strides[d][k];
    }
  }
};

}  // namespace fg::kernels
