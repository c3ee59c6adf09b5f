// Matrix products: matmul (with all of torch.matmul's broadcasting), mm, bmm, mv, dot, outer and
// linear. float32 products go to the runtime's own gemm (cpu/gemm.cpp) on AVX-512, float64 ones
// (and float32 ones elsewhere) to OpenBLAS, narrow products of either to the SIMD kernel below;
// int64 uses a plain loop; bool is rejected.
//
// Every product funnels into matmul_core(), which computes C[batch..., m, n] = A @ B for operands
// A [batchA..., m, k] and B [batchB..., k, n] whose batch dims broadcast to `batch`:
//  * strided operands are passed to BLAS as they are when one of their matrix strides is 1
//    (CblasTrans for transposed views); only other layouts are copied;
//  * when B is the same matrix for every batch item (a 1-D/2-D right operand, a broadcast one),
//    the batch is folded into A's rows so the whole product is one gemm;
//  * narrow products (up to 24-64 columns against OpenBLAS, up to 12 against the own float32
//    gemm; e.g. the 10 outputs of a classifier layer) with row-major A use a Highway kernel of
//    dot products that streams A once: a gemm packs A for every call, which for so few columns
//    costs as much as the arithmetic (on [8192, 784] @ [784, 10] OpenBLAS reaches 85 GFLOP/s,
//    this kernel 170-190, near the memory bandwidth);
//  * batches run in parallel over their items, single products split their rows (or columns)
//    over the threads.
//
// Threads: all parallelism is OpenMP's (omp_get_max_threads(), as in the rest of the runtime), and
// OpenBLAS is set to one thread at the first product. OpenBLAS's own pthreads and the OpenMP
// threads of the element-wise ops both busy-wait after their work and take the cores from each
// other: on 2 cores, a 256x256 sgemm alternating with an OpenMP loop ran at 22-100 GFLOP/s on
// OpenBLAS's 2 threads, and at 100-200 GFLOP/s split over the OpenMP threads (210 alone).
// Splitting costs nothing measurable otherwise: each part is itself a large gemm.

// ------------------------------------------------------------------------------ SIMD kernel
// Compiled once per ISA by Highway (this file includes itself through foreach_target).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "linalg.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace fg::linalg_kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kMaxLanes = 64;  // elements in the widest vector of any target (with margin)

// C[r][g] (+)= dot(A row r, Bt row g) for R rows of A and G rows of Bt. Bt rows are zero-padded
// to a whole number of vectors; A's tail is copied into a zero-padded buffer.
template <int R, int G, class D, typename T = hn::TFromD<D>>
HWY_INLINE void DotBlock(D d, const T* HWY_RESTRICT a, int64_t lda, const T* HWY_RESTRICT bt,
                         int64_t ldbt, int64_t k, T* HWY_RESTRICT c, int64_t ldc, bool accumulate) {
  using V = hn::Vec<D>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  V s[R][G];
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < G; ++g) s[r][g] = hn::Zero(d);
  int64_t p = 0;
  for (; p + N <= k; p += N) {
    V av[R];
    for (int r = 0; r < R; ++r) av[r] = hn::LoadU(d, a + r * lda + p);
    for (int g = 0; g < G; ++g) {
      const V bv = hn::LoadU(d, bt + g * ldbt + p);
      for (int r = 0; r < R; ++r) s[r][g] = hn::MulAdd(av[r], bv, s[r][g]);
    }
  }
  if (p < k) {
    HWY_ALIGN T buf[R][kMaxLanes];
    V av[R];
    for (int r = 0; r < R; ++r) {
      std::memset(buf[r], 0, sizeof(buf[r]));
      std::memcpy(buf[r], a + r * lda + p, static_cast<size_t>(k - p) * sizeof(T));
      av[r] = hn::Load(d, buf[r]);
    }
    for (int g = 0; g < G; ++g) {
      const V bv = hn::LoadU(d, bt + g * ldbt + p);
      for (int r = 0; r < R; ++r) s[r][g] = hn::MulAdd(av[r], bv, s[r][g]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < G; ++g) {
      const T v = hn::GetLane(hn::SumOfLanes(d, s[r][g]));
      T* out = c + r * ldc + g;
      *out = accumulate ? *out + v : v;
    }
}

template <int R, class D, typename T = hn::TFromD<D>>
HWY_INLINE void DotRows(D d, const T* a, int64_t lda, const T* bt, int64_t ldbt, int64_t n,
                        int64_t k, T* c, int64_t ldc, bool accumulate) {
  // Columns in groups of at most 6 (R x 6 accumulators stay in registers), sizes balanced.
  const int64_t groups = (n + 5) / 6;
  int64_t j = 0;
  for (int64_t gi = 0; gi < groups; ++gi) {
    const int64_t g = (n - j) / (groups - gi);
    const T* b = bt + j * ldbt;
    T* cc = c + j;
    switch (g) {
      case 1: DotBlock<R, 1>(d, a, lda, b, ldbt, k, cc, ldc, accumulate); break;
      case 2: DotBlock<R, 2>(d, a, lda, b, ldbt, k, cc, ldc, accumulate); break;
      case 3: DotBlock<R, 3>(d, a, lda, b, ldbt, k, cc, ldc, accumulate); break;
      case 4: DotBlock<R, 4>(d, a, lda, b, ldbt, k, cc, ldc, accumulate); break;
      case 5: DotBlock<R, 5>(d, a, lda, b, ldbt, k, cc, ldc, accumulate); break;
      default: DotBlock<R, 6>(d, a, lda, b, ldbt, k, cc, ldc, accumulate); break;
    }
    j += g;
  }
}

// C[m, n] (+)= A[m, k] (row stride lda, unit column stride) @ Bt[n, k]^T, Bt's rows (stride ldbt)
// zero-padded to a whole number of vectors.
template <typename T>
void NarrowGemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* bt, int64_t ldbt,
                T* c, int64_t ldc, bool accumulate) {
  const hn::ScalableTag<T> d;
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) DotRows<4>(d, a + i * lda, lda, bt, ldbt, n, k, c + i * ldc, ldc, accumulate);
  for (; i < m; ++i) DotRows<1>(d, a + i * lda, lda, bt, ldbt, n, k, c + i * ldc, ldc, accumulate);
}

void NarrowGemmF32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* bt,
                   int64_t ldbt, float* c, int64_t ldc, bool accumulate) {
  NarrowGemm<float>(m, n, k, a, lda, bt, ldbt, c, ldc, accumulate);
}
void NarrowGemmF64(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* bt,
                   int64_t ldbt, double* c, int64_t ldc, bool accumulate) {
  NarrowGemm<double>(m, n, k, a, lda, bt, ldbt, c, ldc, accumulate);
}

// C[r, :] (+)= a[r * as] * b[:] for r < m (C rows of ldc): an outer product, bound by writing C.
template <typename T>
void Outer(int64_t m, int64_t n, const T* HWY_RESTRICT a, int64_t as, const T* HWY_RESTRICT b, T* HWY_RESTRICT c,
           int64_t ldc, bool accumulate) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t whole = n / N * N;
  T* HWY_RESTRICT row = c;
  for (int64_t r = 0; r < m; ++r, row += ldc, a += as) {
    const T x = *a;
    const auto vx = hn::Set(d, x);
    if (accumulate) {
      for (int64_t j = 0; j < whole; j += N)
        hn::StoreU(hn::MulAdd(vx, hn::LoadU(d, b + j), hn::LoadU(d, row + j)), d, row + j);
      for (int64_t j = whole; j < n; ++j) row[j] += x * b[j];
    } else {
      for (int64_t j = 0; j < whole; j += N) hn::StoreU(hn::Mul(vx, hn::LoadU(d, b + j)), d, row + j);
      for (int64_t j = whole; j < n; ++j) row[j] = x * b[j];
    }
  }
}
void OuterF32(int64_t m, int64_t n, const float* a, int64_t as, const float* b, float* c, int64_t ldc,
              bool accumulate) {
  Outer<float>(m, n, a, as, b, c, ldc, accumulate);
}
void OuterF64(int64_t m, int64_t n, const double* a, int64_t as, const double* b, double* c, int64_t ldc,
              bool accumulate) {
  Outer<double>(m, n, a, as, b, c, ldc, accumulate);
}

}  // namespace HWY_NAMESPACE
}  // namespace fg::linalg_kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu/gemm.h"
#include "device.h"
#include "internal.h"
#include "strided_loop.h"

// OpenBLAS extension. Weak, so that the runtime still links against a BLAS without it.
extern "C" void openblas_set_num_threads(int num_threads);
#pragma weak openblas_set_num_threads

namespace fg::linalg_kernels {
HWY_EXPORT(NarrowGemmF32);
HWY_EXPORT(NarrowGemmF64);
HWY_EXPORT(OuterF32);
HWY_EXPORT(OuterF64);
}  // namespace fg::linalg_kernels

namespace fg {
namespace {

using detail::fail;

// ------------------------------------------------------------------------------ threads

// Products of at least this many flops (2mnk) are split over the OpenMP threads.
constexpr double kParallelFlops = 1 << 20;
// Batch items of fewer flops than this that go to BLAS are not run concurrently (see below).
constexpr double kConcurrentBlasFlops = 2.0 * 32 * 32 * 32;

void make_blas_single_threaded() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (openblas_set_num_threads) openblas_set_num_threads(1);
  });
}

int available_threads() { return omp_in_parallel() ? 1 : omp_get_max_threads(); }

double flops_of(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

// ------------------------------------------------------------------------------ 2-D kernels

// How a rows x cols operand with element strides (rs, cs) is handed to row-major BLAS.
struct BlasLayout {
  bool ok = false;
  bool trans = false;  // stored as the transpose: cols x rows, row stride ld
  int64_t ld = 0;
};

BlasLayout blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  BlasLayout l;
  // A size-1 dim's stride is never stepped, so it may take whatever value suits.
  if ((cs == 1 || cols <= 1) && (rows <= 1 || rs >= std::max<int64_t>(1, cols))) {
    l.ok = true;
    l.ld = rows <= 1 ? std::max<int64_t>(1, cols) : rs;
  } else if ((rs == 1 || rows <= 1) && (cols <= 1 || cs >= std::max<int64_t>(1, rows))) {
    l.ok = true;
    l.trans = true;
    l.ld = cols <= 1 ? std::max<int64_t>(1, rows) : cs;
  }
  if (l.ld > INT_MAX) l.ok = false;
  return l;
}

// A strided matrix operand.
template <typename T>
struct Mat {
  const T* p;
  int64_t rs, cs;
};

void check_blas_dims(int64_t m, int64_t n, int64_t k, const char* op) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    fail(op, "matrix dimensions ", m, " x ", k, " and ", k, " x ", n,
         " exceed the 32-bit BLAS interface");
}

template <typename T>
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const T* a, int lda,
               const T* b, int ldb, T beta, T* c, int ldc) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

template <typename T>
void blas_gemv(CBLAS_TRANSPOSE t, int rows, int cols, const T* a, int lda, const T* x, int incx,
               T beta, T* y, int incy) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasRowMajor, t, rows, cols, 1.0f, a, lda, x, incx, beta, y, incy);
  else
    cblas_dgemv(CblasRowMajor, t, rows, cols, 1.0, a, lda, x, incx, beta, y, incy);
}

template <typename T>
T blas_dot(int n, const T* x, int incx, const T* y, int incy) {
  if constexpr (std::is_same_v<T, float>)
    return cblas_sdot(n, x, incx, y, incy);
  else
    return cblas_ddot(n, x, incx, y, incy);
}

// C (m x n, row stride ldc, unit column stride) = A @ B (+ C when accumulate), T float or double.
// A and B must have blas_layout(...).ok.
template <typename T>
void gemm_blas(int64_t m, int64_t n, int64_t k, Mat<T> A, Mat<T> B, T* C, int64_t ldc, bool accumulate) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(C + i * ldc, C + i * ldc + n, T(0));
    return;
  }
  const BlasLayout la = blas_layout(m, k, A.rs, A.cs);
  const BlasLayout lb = blas_layout(k, n, B.rs, B.cs);
  const T beta = accumulate ? T(1) : T(0);
  // Element step along a vector operand (a row of A, a column of B).
  const int64_t a_row_inc = k == 1 ? 1 : A.cs;
  const int64_t b_col_inc = k == 1 ? 1 : B.rs;
  if (m == 1 && n == 1) {
    const T d = blas_dot<T>(static_cast<int>(k), A.p, static_cast<int>(a_row_inc), B.p,
                            static_cast<int>(b_col_inc));
    C[0] = accumulate ? C[0] + d : d;
  } else if (n == 1) {
    // y (m, step ldc) = A x, with x a column of B. Zeroed first: OpenBLAS's scal by beta = 0
    // does not reliably clear NaNs left in uninitialized memory.
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) C[i * ldc] = T(0);
    if (la.trans)
      blas_gemv<T>(CblasTrans, static_cast<int>(k), static_cast<int>(m), A.p, static_cast<int>(la.ld),
                   B.p, static_cast<int>(b_col_inc), T(1), C, static_cast<int>(ldc));
    else
      blas_gemv<T>(CblasNoTrans, static_cast<int>(m), static_cast<int>(k), A.p, static_cast<int>(la.ld),
                   B.p, static_cast<int>(b_col_inc), T(1), C, static_cast<int>(ldc));
  } else if (m == 1) {
    // y (n) = B^T a, with a the row of A.
    if (!accumulate) std::fill(C, C + n, T(0));
    if (lb.trans)
      blas_gemv<T>(CblasNoTrans, static_cast<int>(n), static_cast<int>(k), B.p, static_cast<int>(lb.ld),
                   A.p, static_cast<int>(a_row_inc), T(1), C, 1);
    else
      blas_gemv<T>(CblasTrans, static_cast<int>(k), static_cast<int>(n), B.p, static_cast<int>(lb.ld),
                   A.p, static_cast<int>(a_row_inc), T(1), C, 1);
  } else {
    blas_gemm<T>(la.trans ? CblasTrans : CblasNoTrans, lb.trans ? CblasTrans : CblasNoTrans,
                 static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), A.p,
                 static_cast<int>(la.ld), B.p, static_cast<int>(lb.ld), beta, C, static_cast<int>(ldc));
  }
}

// The int64 product: any strides, exact integer arithmetic (wrapping on overflow, as torch).
void gemm_loop(int64_t m, int64_t n, int64_t k, Mat<int64_t> A, Mat<int64_t> B, int64_t* C,
               int64_t ldc, bool accumulate, bool parallel) {
  auto row = [&](int64_t i) {
    int64_t* c = C + i * ldc;
    if (!accumulate) std::fill(c, c + n, int64_t{0});
    for (int64_t p = 0; p < k; ++p) {
      const uint64_t a = static_cast<uint64_t>(A.p[i * A.rs + p * A.cs]);
      const int64_t* b = B.p + p * B.rs;
      if (B.cs == 1) {
        for (int64_t j = 0; j < n; ++j)
          c[j] = static_cast<int64_t>(static_cast<uint64_t>(c[j]) + a * static_cast<uint64_t>(b[j]));
      } else {
        for (int64_t j = 0; j < n; ++j)
          c[j] = static_cast<int64_t>(static_cast<uint64_t>(c[j]) +
                                      a * static_cast<uint64_t>(b[j * B.cs]));
      }
    }
  };
  if (parallel && m > 1 && m * n * k >= (int64_t{1} << 16)) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; ++i) row(i);
  } else {
    for (int64_t i = 0; i < m; ++i) row(i);
  }
}

// ------------------------------------------------------------------------------ narrow products

// Which products use NarrowGemm (see the top of the file). Measured on [M, K] @ [K, n] float32
// for M in {128, 1024, 8192}, K in {64, 784, 4096} against OpenBLAS 0.3.21 (Haswell and
// Cooperlake kernels) on 2 AVX-512 cores: the kernel wins by 1.3-4x up to n = 24 everywhere, and
// up to n = 64 while 6 rows of Bt (one column group) stay in L1, i.e. K * sizeof(T) <= 4 KiB;
// beyond that OpenBLAS's blocking wins.
// Against fg::cpu::sgemm (`own`: float32 on AVX-512), measured on M in {64, 1024, 8192}, n in
// {4, 10, 16, 24, 32, 64}, K in {16, 64, 256, 784}: the narrow kernel keeps only the thinnest
// products with a long inner dimension ([8192, 784] @ [784, 10]: 338 GFLOP/s against 207; n = 4:
// 309 against 82); from n = 16 sgemm is as fast or faster (n = 24: 369 against 335, n = 32: 485
// against 329, n = 64: 481 against 340), and at K <= 64 faster for every n (3-8x at K = 16).
template <typename T>
bool narrow_applicable(int64_t m, int64_t n, int64_t k, int64_t acs, bool own) {
  if (!std::is_floating_point_v<T> || acs != 1 || m < 4 || k < 16 || n < 2) return false;
  if (own) return (n <= 12 && k >= 128) || (n <= 6 && k >= 48);
  return n <= 24 || (n <= 64 && k * static_cast<int64_t>(sizeof(T)) <= 4096);
}

// B (k x n, any strides) transposed into rows of length ldbt: k rounded up to a whole number of
// the widest vector (64 bytes), zero-padded.
template <typename T>
std::vector<T> pack_transposed(int64_t k, int64_t n, Mat<T> B, int64_t* ldbt) {
  constexpr int64_t kVec = 64 / static_cast<int64_t>(sizeof(T));
  *ldbt = (k + kVec - 1) / kVec * kVec;
  std::vector<T> bt(static_cast<size_t>(n * *ldbt), T(0));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) bt[j * *ldbt + p] = B.p[p * B.rs + j * B.cs];
  return bt;
}

template <typename T>
void narrow_kernel(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* bt, int64_t ldbt,
                   T* c, int64_t ldc, bool accumulate) {
  if constexpr (std::is_same_v<T, float>)
    HWY_DYNAMIC_DISPATCH(linalg_kernels::NarrowGemmF32)(m, n, k, a, lda, bt, ldbt, c, ldc, accumulate);
  else
    HWY_DYNAMIC_DISPATCH(linalg_kernels::NarrowGemmF64)(m, n, k, a, lda, bt, ldbt, c, ldc, accumulate);
}

template <typename T>
void outer_kernel(int64_t m, int64_t n, const T* a, int64_t as, const T* b, T* c, int64_t ldc, bool accumulate) {
  if constexpr (std::is_same_v<T, float>)
    HWY_DYNAMIC_DISPATCH(linalg_kernels::OuterF32)(m, n, a, as, b, c, ldc, accumulate);
  else
    HWY_DYNAMIC_DISPATCH(linalg_kernels::OuterF64)(m, n, a, as, b, c, ldc, accumulate);
}

// C (m x n, row stride ldc) (+)= A @ B through NarrowGemm; rows split over threads when
// `parallel` and the product is large enough.
template <typename T>
void narrow_gemm(int64_t m, int64_t n, int64_t k, Mat<T> A, Mat<T> B, T* C, int64_t ldc, bool accumulate,
                 bool parallel) {
  int64_t ldbt = 0;
  const std::vector<T> bt = pack_transposed<T>(k, n, B, &ldbt);
  const int threads = parallel ? available_threads() : 1;
  if (threads > 1 && m >= 8 && flops_of(m, n, k) >= kParallelFlops) {
    // The first dispatched call picks the ISA; make it before the threads start.
    narrow_kernel<T>(0, n, k, A.p, A.rs, bt.data(), ldbt, C, ldc, accumulate);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int t = 0; t < threads; ++t) {
      // Row ranges on 4-row boundaries (the kernel's block).
      const int64_t r0 = m * t / threads / 4 * 4;
      const int64_t r1 = t == threads - 1 ? m : m * (t + 1) / threads / 4 * 4;
      if (r1 > r0) narrow_kernel<T>(r1 - r0, n, k, A.p + r0 * A.rs, A.rs, bt.data(), ldbt, C + r0 * ldc, ldc, accumulate);
    }
  } else {
    narrow_kernel<T>(m, n, k, A.p, A.rs, bt.data(), ldbt, C, ldc, accumulate);
  }
}

// Whether float32 matrix products (m, n > 1, not narrow) go to fg::cpu::sgemm (cpu/gemm.cpp)
// rather than to OpenBLAS. Measured against OpenBLAS 0.3.21 with OPENBLAS_CORETYPE=Haswell (its
// AVX2 kernels, what this environment selects) on 2 AVX-512 cores (Zen 5, FP32 FMA peak ~500
// GFLOP/s), OpenBLAS's rows split over the 2 OpenMP threads as before:
//  * AVX-512 target: sgemm wins at every size. fg::mm 64^3 215 GFLOP/s against 60, 128^3 426
//    against 197, 256^3 470 against 223, 512^3 445 against 231 (88% of the peak against 46%),
//    1024^3 443 against 232; 512^3 on one thread 229 against 119; batches of 8^3 products 4x
//    faster (no lock, so they run in parallel), 32^3 and 64^3 ones 4-6x;
//  * AVX2 target (forced): sgemm's AVX2 kernels are within a few percent of OpenBLAS either way
//    (128^3-384^3 2-9% faster, 512^3 and 1024^3 1-2% slower, 64^3 slower), so products there stay
//    with OpenBLAS, as on the older targets.
// float64 always stays with OpenBLAS. The narrow kernel keeps products of very few columns.
bool own_sgemm() { return cpu::sgemm_preferred(); }

// gemm_blas over the threads: the larger of m and n cut into one block per thread.
template <typename T>
void gemm_blas_parallel(int64_t m, int64_t n, int64_t k, Mat<T> A, Mat<T> B, T* C, int64_t ldc,
                        bool accumulate, bool parallel) {
  const int threads = parallel ? available_threads() : 1;
  if constexpr (std::is_same_v<T, float>) {
    if (m > 1 && n > 1 && own_sgemm()) {
      // Any strides; sgemm splits the product over `threads` itself when it is large enough.
      cpu::sgemm(m, n, k, A.p, A.rs, A.cs, B.p, B.rs, B.cs, accumulate ? 1.0f : 0.0f, C, ldc, threads);
      return;
    }
  }
  if (threads <= 1 || flops_of(m, n, k) < kParallelFlops || (m < 32 && n < 32)) {
    gemm_blas<T>(m, n, k, A, B, C, ldc, accumulate);
    return;
  }
  const bool by_rows = m >= n;
  const int64_t extent = by_rows ? m : n;
  // Block edges on multiples of 16 (the BLAS kernels' register tiles).
  auto edge = [&](int t) { return t == threads ? extent : extent * t / threads / 16 * 16; };
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int t = 0; t < threads; ++t) {
    const int64_t lo = edge(t), hi = edge(t + 1);
    if (hi <= lo) continue;
    if (by_rows)
      gemm_blas<T>(hi - lo, n, k, {A.p + lo * A.rs, A.rs, A.cs}, B, C + lo * ldc, ldc, accumulate);
    else
      gemm_blas<T>(m, hi - lo, k, A, {B.p + lo * B.cs, B.rs, B.cs}, C + lo, ldc, accumulate);
  }
}

// ------------------------------------------------------------------------------ batched core

// Element offsets of each item of the batch `batch` in X [batchX..., rows, cols] (batchX
// right-aligned against batch, broadcast where its size is 1).
std::vector<int64_t> batch_offsets(const Tensor& X, IntArrayRef batch) {
  const int64_t nb = detail::product(batch);
  std::vector<int64_t> off(static_cast<size_t>(std::max<int64_t>(nb, 0)), 0);
  const auto sizes = X.sizes();
  const auto strides = X.strides();
  const int64_t xb = static_cast<int64_t>(sizes.size()) - 2;
  const int64_t lead = static_cast<int64_t>(batch.size()) - xb;
  std::vector<int64_t> st(batch.size(), 0);
  for (int64_t d = 0; d < xb; ++d) st[lead + d] = sizes[d] == 1 ? 0 : strides[d];
  std::vector<int64_t> idx(batch.size(), 0);
  int64_t cur = 0;
  for (int64_t b = 0; b < nb; ++b) {
    off[b] = cur;
    for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
      if (++idx[d] < batch[d]) {
        cur += st[d];
        break;
      }
      cur -= st[d] * (batch[d] - 1);
      idx[d] = 0;
    }
  }
  return off;
}

bool all_zero(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

// Whether X's batch dims are exactly `batch` (no broadcasting: every item distinct).
bool full_batch(const Tensor& X, IntArrayRef batch) {
  const auto sizes = X.sizes();
  if (sizes.size() != batch.size() + 2) return false;
  for (size_t d = 0; d < batch.size(); ++d)
    if (sizes[d] != batch[d]) return false;
  return true;
}

template <typename T>
void matmul_core_t(Tensor A, Tensor B, IntArrayRef batch, T* C, bool accumulate, const char* op) {
  const int64_t m = A.sizes()[A.dim() - 2], k = A.sizes()[A.dim() - 1];
  const int64_t n = B.sizes()[B.dim() - 1];
  const int64_t nb = detail::product(batch);
  if (nb == 0 || m == 0 || n == 0) return;
  constexpr bool kBlas = !std::is_same_v<T, int64_t>;
  // Row and column strides of the matrix dims.
  int64_t ars = 0, acs = 0, brs = 0, bcs = 0;
  auto mat_strides = [](const Tensor& X, int64_t& rs, int64_t& cs) {
    const auto st = X.strides();
    rs = st[st.size() - 2];
    cs = st[st.size() - 1];
  };
  mat_strides(A, ars, acs);
  mat_strides(B, brs, bcs);
  // Products for fg::cpu::sgemm (see own_sgemm()), which takes any strides. Dispatched here, on
  // the calling thread: the first dispatched call picks the ISA, before any thread starts.
  // (of m rows: a batch of vector-matrix products folds below into a product of nb rows)
  auto own_for = [&](int64_t rows) { return std::is_same_v<T, float> && rows > 1 && n > 1 && own_sgemm(); };
  const bool own = own_for(m);
  if constexpr (kBlas) {
    check_blas_dims(m, n, k, op);
    make_blas_single_threaded();
    // Layouts BLAS cannot take are copied; sgemm's packing reads any (the narrow kernel needs a
    // unit column stride in A, which the batch folding below arranges or checks).
    if (!own && !blas_layout(m, k, ars, acs).ok) {
      A = A.contiguous();
      mat_strides(A, ars, acs);
    }
    if (!own && !blas_layout(k, n, brs, bcs).ok) {
      B = B.contiguous();
      mat_strides(B, brs, bcs);
    }
  }
  std::vector<int64_t> offA = batch_offsets(A, batch);
  const std::vector<int64_t> offB = batch_offsets(B, batch);
  const bool shared_b = all_zero(offB);

  // Outer products (k = 1: per-example weight gradients of a linear layer) are a scaled copy of
  // B's row per row of C, bound by writing C; a GEMM's packing costs more than the arithmetic.
  // (Non-temporal stores measured no faster on the 25.7 MB of per-example gradients of a 784 x 128
  // layer: the stores are already at the write bandwidth.)
  if constexpr (kBlas) {
    if (k == 1 && bcs == 1) {
      const T* a = A.template data_ptr<T>();
      const T* b = B.template data_ptr<T>();
      const int64_t mn = m * n;
      auto item = [&](int64_t i) { outer_kernel<T>(m, n, a + offA[i], ars, b + offB[i], C + i * mn, n, accumulate); };
      item(0);  // the first dispatched call picks the ISA, before any thread starts
      detail::parallel_for(1, nb, nb > 1 && available_threads() > 1 && flops_of(m, n, nb) >= kParallelFlops, item);
      return;
    }
  }

  // Fold the batch into the rows of A when B is shared: one [nb*m, k] @ [k, n] product.
  if (nb > 1 && shared_b) {
    auto foldable = [&](int64_t& row_stride) {
      if (!(acs == 1 || k <= 1)) return false;
      row_stride = m > 1 ? ars : offA[1];
      if (row_stride < std::max<int64_t>(1, k)) return false;
      for (int64_t b = 0; b < nb; ++b)
        if (offA[b] != b * m * row_stride) return false;
      return true;
    };
    int64_t R = 0;
    bool fold = foldable(R);
    if (!fold && full_batch(A, batch)) {
      // Copying A into one [nb*m, k] block costs far less than nb separate gemms.
      A = A.contiguous();
      mat_strides(A, ars, acs);
      offA = batch_offsets(A, batch);
      fold = foldable(R);
    }
    if (fold) {
      const int64_t M = nb * m;
      const T* a = A.template data_ptr<T>();
      const T* b = B.template data_ptr<T>();
      if constexpr (kBlas) {
        if (narrow_applicable<T>(M, n, k, 1, own_for(M))) {
          narrow_gemm<T>(M, n, k, {a, R, 1}, {b, brs, bcs}, C, n, accumulate, true);
          return;
        }
        check_blas_dims(M, n, k, op);
        gemm_blas_parallel<T>(M, n, k, {a, R, 1}, {b, brs, bcs}, C, n, accumulate, true);
      } else {
        gemm_loop(M, n, k, {a, R, acs}, {b, brs, bcs}, C, n, accumulate, true);
      }
      return;
    }
  }

  const T* a = A.template data_ptr<T>();
  const T* b = B.template data_ptr<T>();
  const int64_t mn = m * n;
  const bool narrow = narrow_applicable<T>(m, n, k, acs, own);
  auto item = [&](int64_t i, bool parallel_inside) {
    const Mat<T> ma{a + offA[i], ars, acs};
    const Mat<T> mb{b + offB[i], brs, bcs};
    if constexpr (kBlas) {
      if (narrow)
        narrow_gemm<T>(m, n, k, ma, mb, C + i * mn, n, accumulate, parallel_inside);
      else
        gemm_blas_parallel<T>(m, n, k, ma, mb, C + i * mn, n, accumulate, parallel_inside);
    } else {
      gemm_loop(m, n, k, ma, mb, C + i * mn, n, accumulate, parallel_inside);
    }
  };
  // Items in parallel when they keep every thread busy: many items, or a whole number of rounds.
  // Otherwise (few items, or a ragged last round of large items) each item uses all threads.
  // Tiny BLAS products stay on one thread: OpenBLAS builds without small-matrix kernels (its
  // Haswell/Zen kernel sets) take a lock to allocate every call's buffers, and two threads
  // calling 8x8 sgemms ran 13x slower than one (16x16: 1.2x slower, 32x32: even, 64x64: 2x
  // faster). fg::cpu::sgemm packs into per-thread buffers and takes no lock.
  const int threads = available_threads();
  const bool worth_threads = narrow || !kBlas || own || flops_of(m, n, k) >= kConcurrentBlasFlops;
  const bool batch_parallel =
      nb > 1 && threads > 1 && worth_threads &&
      (nb >= 4 * threads || nb % threads == 0 || flops_of(m, n, k) < kParallelFlops);
  if (batch_parallel) {
    // The first dispatched kernel call picks the ISA: make it before the threads start.
    const int64_t first = narrow ? 1 : 0;
    if (narrow) item(0, false);
#pragma omp parallel for schedule(static)
    for (int64_t i = first; i < nb; ++i) item(i, false);
  } else {
    for (int64_t i = 0; i < nb; ++i) item(i, true);
  }
}

// C = A @ B (+ C), A [batchA..., m, k], B [batchB..., k, n], C contiguous holding
// product(batch) * m * n elements of A's dtype. Shapes and dtypes are checked by the caller.
void matmul_core(const Tensor& A, const Tensor& B, IntArrayRef batch, const Tensor& C,
                 bool accumulate, const char* op) {
  if (!C.is_cpu()) {
    if (accumulate) fail(op, "internal error: accumulating products do not run on ", C.device());
    // One batch dim: operands whose batch dims are all 1 stay [1, r, c] (broadcast by the plan).
    const int64_t nb = detail::product(batch);
    auto batched = [&](const Tensor& X) {
      const int64_t r = X.size(-2), c = X.size(-1);
      int64_t own_batch = 1;
      for (int64_t d = 0; d + 2 < X.dim(); ++d) own_batch *= X.size(d);
      if (own_batch == 1) return X.reshape({1, r, c});
      std::vector<int64_t> full(batch.begin(), batch.end());
      full.push_back(r);
      full.push_back(c);
      return X.expand(full).reshape({nb, r, c});
    };
    detail::device_bmm(batched(A), batched(B), C, op);
    return;
  }
  switch (A.dtype()) {
    case kFloat: return matmul_core_t<float>(A, B, batch, C.data_ptr<float>(), accumulate, op);
    case kDouble: return matmul_core_t<double>(A, B, batch, C.data_ptr<double>(), accumulate, op);
    case kLong: return matmul_core_t<int64_t>(A, B, batch, C.data_ptr<int64_t>(), accumulate, op);
    case kBool: break;
  }
  fail(op, "expected float32, float64 or int64 operands, got ", A.dtype());
}

// ------------------------------------------------------------------------------ checks

void check_operands(const Tensor& a, const Tensor& b, const char* op) {
  detail::check_defined(a, op, "self");
  detail::check_defined(b, op, "other");
  detail::common_device({&a, &b}, op);
}

void check_dtypes(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype())
    fail(op, "expected both operands to have the same dtype, got ", a.dtype(), " and ", b.dtype());
  if (a.dtype() == kBool) fail(op, "expected float32, float64 or int64 operands, got bool");
}

[[noreturn]] void fail_inner(const Tensor& a, const Tensor& b, int64_t ka, int64_t kb, const char* op) {
  fail(op, "shapes ", a.sizes(), " and ", b.sizes(), " cannot be multiplied (", ka, " != ", kb, ")");
}

// x with a size-1 dim inserted at `dim` (a view).
Tensor unsqueeze_view(const Tensor& x, int64_t dim) {
  std::vector<int64_t> sizes = x.sizes().vec(), strides = x.strides().vec();
  const int64_t st = dim < static_cast<int64_t>(sizes.size()) ? sizes[dim] * strides[dim] : 1;
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, std::max<int64_t>(st, 1));
  return detail::make_view(x, std::move(sizes), std::move(strides), x.storage_offset());
}

// Whether `out` can receive the result directly: right shape and dtype, contiguous, and not
// sharing memory with an input (which the product reads while writing).
bool usable_out(const Tensor& out, IntArrayRef shape, ScalarType dtype, const Tensor& a, const Tensor& b) {
  return out.defined() && out.is_cpu() && out.dtype() == dtype && out.sizes() == shape &&
         out.is_contiguous() && !detail::shares_storage(out, a) && !detail::shares_storage(out, b);
}

// The shared implementation of matmul and matmul_out (out may be null).
Tensor matmul_impl(const Tensor& self, const Tensor& other, Tensor* out, const char* op) {
  check_operands(self, other, op);
  const int64_t da = self.dim(), db = other.dim();
  if (da == 0 || db == 0)
    fail(op, "both arguments need at least 1 dimension, got ", self.sizes(), " and ", other.sizes());
  check_dtypes(self, other, op);
  const int64_t ka = self.sizes()[da - 1];
  const int64_t kb = other.sizes()[db == 1 ? 0 : db - 2];
  if (ka != kb) fail_inner(self, other, ka, kb, op);

  // A [batchA..., m, k], B [batchB..., k, n]: vectors become a 1-row / 1-column matrix.
  const Tensor A = da == 1 ? unsqueeze_view(self, 0) : self;
  const Tensor B = db == 1 ? unsqueeze_view(other, 1) : other;
  const auto as = A.sizes(), bs = B.sizes();
  const std::vector<int64_t> batch_a(as.begin(), as.end() - 2), batch_b(bs.begin(), bs.end() - 2);
  const size_t nbatch = std::max(batch_a.size(), batch_b.size());
  std::vector<int64_t> batch(nbatch, 1);
  for (size_t i = 0; i < nbatch; ++i) {
    const int64_t x = i < nbatch - batch_a.size() ? 1 : batch_a[i - (nbatch - batch_a.size())];
    const int64_t y = i < nbatch - batch_b.size() ? 1 : batch_b[i - (nbatch - batch_b.size())];
    if (x != y && x != 1 && y != 1)
      fail(op, "batch dimensions ", IntArrayRef(batch_a), " and ", IntArrayRef(batch_b), " of shapes ",
           self.sizes(), " and ", other.sizes(), " cannot be broadcast (", x, " != ", y, " at dim ", i, ")");
    batch[i] = x == 1 ? y : x;
  }
  std::vector<int64_t> shape = batch;
  if (da > 1) shape.push_back(as[as.size() - 2]);
  if (db > 1) shape.push_back(bs[bs.size() - 1]);

  Tensor C;
  if (out && usable_out(*out, shape, self.dtype(), self, other))
    C = *out;
  else
    C = empty(shape, self.options());
  matmul_core(A, B, batch, C, /*accumulate=*/false, op);
  if (out && !C.is_same(*out)) detail::assign_out(*out, C, op);
  return C;
}

}  // namespace

// ------------------------------------------------------------------------------ raw products

namespace detail {

template <typename T>
void gemm_prepare() {
  make_blas_single_threaded();
  if constexpr (std::is_same_v<T, float>) own_sgemm();
  narrow_kernel<T>(0, 1, 1, nullptr, 1, nullptr, 1, nullptr, 1, false);  // picks the ISA
}

template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
          int64_t b_cs, T* c, int64_t ldc, bool accumulate, bool parallel) {
  const char* op = "gemm";
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum (no operand strides to check)
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  const bool own = std::is_same_v<T, float> && m > 1 && n > 1 && own_sgemm();
  if (narrow_applicable<T>(m, n, k, a_cs, own)) {
    narrow_gemm<T>(m, n, k, {a, a_rs, a_cs}, {b, b_rs, b_cs}, c, ldc, accumulate, parallel);
    return;
  }
  check_blas_dims(m, n, k, op);
  if (!own && (!blas_layout(m, k, a_rs, a_cs).ok || !blas_layout(k, n, b_rs, b_cs).ok))
    fail(op, "internal error: operands of strides (", a_rs, ", ", a_cs, ") and (", b_rs, ", ", b_cs,
         ") are not BLAS matrices");
  gemm_blas_parallel<T>(m, n, k, {a, a_rs, a_cs}, {b, b_rs, b_cs}, c, ldc, accumulate, parallel);
}

template void gemm_prepare<float>();
template void gemm_prepare<double>();
template void gemm<float>(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const float*, int64_t, int64_t,
                          float*, int64_t, bool, bool);
template void gemm<double>(int64_t, int64_t, int64_t, const double*, int64_t, int64_t, const double*, int64_t,
                           int64_t, double*, int64_t, bool, bool);

}  // namespace detail

// ------------------------------------------------------------------------------ public API

Tensor matmul(const Tensor& self, const Tensor& other) {
  return matmul_impl(self, other, nullptr, "matmul");
}

Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other) {
  detail::check_defined(out, "matmul_out", "out");
  matmul_impl(self, other, &out, "matmul_out");
  return out;
}

namespace {
void check_mm(const Tensor& self, const Tensor& mat2, const char* op) {
  check_operands(self, mat2, op);
  if (self.dim() != 2 || mat2.dim() != 2)
    fail(op, "expected 2-D tensors, got ", self.sizes(), " and ", mat2.sizes());
  check_dtypes(self, mat2, op);
  if (self.sizes()[1] != mat2.sizes()[0]) fail_inner(self, mat2, self.sizes()[1], mat2.sizes()[0], op);
}
}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2) {
  check_mm(self, mat2, "mm");
  const std::vector<int64_t> shape{self.sizes()[0], mat2.sizes()[1]};
  Tensor C = empty(shape, self.options());
  matmul_core(self, mat2, {}, C, false, "mm");
  return C;
}

Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2) {
  detail::check_defined(out, "mm_out", "out");
  check_mm(self, mat2, "mm_out");
  const std::vector<int64_t> shape{self.sizes()[0], mat2.sizes()[1]};
  if (usable_out(out, shape, self.dtype(), self, mat2)) {
    matmul_core(self, mat2, {}, out, false, "mm_out");
    return out;
  }
  Tensor C = empty(shape, self.options());
  matmul_core(self, mat2, {}, C, false, "mm_out");
  return detail::assign_out(out, C, "mm_out");
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  const char* op = "bmm";
  check_operands(self, mat2, op);
  if (self.dim() != 3 || mat2.dim() != 3)
    fail(op, "expected 3-D tensors, got ", self.sizes(), " and ", mat2.sizes());
  check_dtypes(self, mat2, op);
  const auto as = self.sizes(), bs = mat2.sizes();
  if (as[0] != bs[0])
    fail(op, "batch sizes of ", as, " and ", bs, " differ (", as[0], " != ", bs[0], ")");
  if (as[2] != bs[1]) fail_inner(self, mat2, as[2], bs[1], op);
  const std::vector<int64_t> shape{as[0], as[1], bs[2]}, batch{as[0]};
  Tensor C = empty(shape, self.options());
  matmul_core(self, mat2, batch, C, false, op);
  return C;
}

Tensor mv(const Tensor& self, const Tensor& vec) {
  const char* op = "mv";
  check_operands(self, vec, op);
  if (self.dim() != 2 || vec.dim() != 1)
    fail(op, "expected a 2-D matrix and a 1-D vector, got ", self.sizes(), " and ", vec.sizes());
  check_dtypes(self, vec, op);
  if (self.sizes()[1] != vec.sizes()[0]) fail_inner(self, vec, self.sizes()[1], vec.sizes()[0], op);
  const std::vector<int64_t> shape{self.sizes()[0]};
  Tensor C = empty(shape, self.options());
  matmul_core(self, unsqueeze_view(vec, 1), {}, C, false, op);
  return C;
}

Tensor dot(const Tensor& self, const Tensor& other) {
  const char* op = "dot";
  check_operands(self, other, op);
  if (self.dim() != 1 || other.dim() != 1)
    fail(op, "expected 1-D tensors, got ", self.sizes(), " and ", other.sizes());
  check_dtypes(self, other, op);
  if (self.sizes()[0] != other.sizes()[0]) fail_inner(self, other, self.sizes()[0], other.sizes()[0], op);
  Tensor C = empty({}, self.options());
  matmul_core(unsqueeze_view(self, 0), unsqueeze_view(other, 1), {}, C, false, op);
  return C;
}

Tensor outer(const Tensor& self, const Tensor& vec2) {
  const char* op = "outer";
  check_operands(self, vec2, op);
  if (self.dim() != 1 || vec2.dim() != 1)
    fail(op, "expected 1-D tensors, got ", self.sizes(), " and ", vec2.sizes());
  detail::checked_numel({self.size(0), vec2.size(0)}, op);
  // As torch: an element-wise product with broadcasting, so dtypes promote and bool works.
  return mul(unsqueeze_view(self, 1), unsqueeze_view(vec2, 0));
}

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  const char* op = "linear";
  detail::check_defined(input, op, "input");
  detail::check_defined(weight, op, "weight");
  const bool has_bias = bias.has_value() && bias->defined();
  const Device device = detail::common_device({&input, &weight, has_bias ? &*bias : &weight}, op);
  if (input.dim() == 0) fail(op, "expected an input of at least 1 dimension, got shape []");
  if (weight.dim() != 1 && weight.dim() != 2)
    fail(op, "expected a 1-D or 2-D weight, got shape ", weight.sizes());
  if (input.dtype() != weight.dtype())
    fail(op, "expected input and weight to have the same dtype, got ", input.dtype(), " and ",
         weight.dtype());
  if (input.dtype() == kBool) fail(op, "expected float32, float64 or int64 operands, got bool");
  if (has_bias && bias->dtype() != input.dtype())
    fail(op, "expected bias to have the dtype of input and weight (", input.dtype(), "), got ",
         bias->dtype());
  const int64_t in_features = weight.sizes()[weight.dim() - 1];
  const int64_t k = input.sizes()[input.dim() - 1];
  if (k != in_features)
    fail(op, "input of shape ", input.sizes(), " has ", k, " features but weight of shape ",
         weight.sizes(), " expects ", in_features);
  if (weight.dim() == 1) {
    Tensor r = matmul(input, weight);
    return has_bias ? add(r, *bias) : r;
  }
  // Elsewhere than the CPU: the product (weight read transposed in place) and the bias added.
  if (!device.is_cpu()) return has_bias ? add(matmul(input, weight.t()), *bias) : matmul(input, weight.t());
  const int64_t out_features = weight.sizes()[0];
  // weight.T as a view: BLAS reads it transposed, no copy.
  const Tensor wt = detail::make_view(weight, {in_features, out_features},
                                      {weight.strides()[1], weight.strides()[0]}, weight.storage_offset());
  const bool fused_bias = has_bias && bias->dim() <= 1 &&
                          (bias->numel() == out_features || bias->numel() == 1);
  if (has_bias && !fused_bias) return add(matmul(input, wt), *bias);
  const Tensor A = input.dim() == 1 ? unsqueeze_view(input, 0) : input;
  const auto as = A.sizes();
  const std::vector<int64_t> batch(as.begin(), as.end() - 2);
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end() - 1);
  shape.push_back(out_features);
  Tensor C = empty(shape, input.options());
  if (fused_bias) {
    // C starts as the bias in every row; the product accumulates onto it (beta = 1).
    const int64_t rows = out_features == 0 ? 0 : C.numel() / out_features;
    const int64_t bstride = bias->numel() == 1 || bias->dim() == 0 ? 0 : bias->strides()[0];
    detail::dispatch_all(input.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = bias->template data_ptr<T>();
      T* dst = C.template data_ptr<T>();
      for (int64_t j = 0; j < out_features; ++j) dst[j] = src[j * bstride];
      for (int64_t r = 1; r < rows; ++r) std::memcpy(dst + r * out_features, dst, out_features * sizeof(T));
    });
  }
  matmul_core(A, wt, batch, C, /*accumulate=*/fused_bias, op);
  return C;
}

}  // namespace fg

#endif  // HWY_ONCE
