// Marks the kernel math that both compilers see: nvcc builds it for the GPU, the host compiler for
// the CPU backend and for the CPU runs of the CUDA kernels (cuda/compat.h), so one definition of
// each formula serves every device.
#pragma once

#if defined(__CUDACC__)
#define FG_HD __host__ __device__
#define FG_HD_INLINE __host__ __device__ __forceinline__
#else
#define FG_HD
#define FG_HD_INLINE inline
#endif
