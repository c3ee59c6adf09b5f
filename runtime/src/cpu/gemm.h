// Single-precision matrix product (BLIS-style: packed panels, cache blocking, a register-blocked
// FMA micro-kernel), compiled per ISA by Highway and dispatched at run time like kernels.h.
#pragma once

#include <cstdint>

namespace fg::cpu {

// C = A @ B + beta * C for an m x k matrix A and a k x n matrix B of any element strides: A(i, p)
// is a[i * a_rs + p * a_cs], B(p, j) is b[p * b_rs + j * b_cs]. C is m x n, row stride ldc, unit
// column stride. With beta == 0, C is not read (NaN or garbage there does not propagate).
// `threads`: how many OpenMP threads to use (<= 1: the calling thread only); large products are
// split over them, small ones stay on the calling thread whatever is asked.
void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs,
           const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t ldc,
           int threads = 1);

// The same with BLAS-style row-major operands: A is m x k (row stride lda), or stored as its
// transpose (k x m, row stride lda) when trans_a; likewise B (k x n, or n x k when trans_b).
void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads = 1);

// Whether sgemm runs its fast kernels on the ISA in use (AVX-512: 32 registers of 16 floats);
// elsewhere a tuned BLAS is usually as fast or faster (see linalg.cpp).
bool sgemm_preferred();

}  // namespace fg::cpu
