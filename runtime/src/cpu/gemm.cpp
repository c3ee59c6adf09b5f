// Single-precision gemm, one source compiled per ISA by Highway (this file includes itself
// through foreach_target) and dispatched at run time. Two paths:
//
// Direct (AVX2 and AVX-512 targets), when B has a unit column stride, fits in L2 and its rows lie
// at most 2 KiB apart (or A has few rows): no packing.
// Rows of C in blocks of R (8 on AVX-512), columns in chunks of two vectors; for each p the
// chunk's two vectors of B's row p are loaded and multiplied by the R broadcast elements A(i, p)
// into R x 2 accumulators (16 on AVX-512, enough to hide the FMA latency). B stays in L2 (or L1)
// for all row blocks; a partial last chunk goes through masked loads and stores. Threads take
// whole row blocks (or column chunks when there are too few rows).
//
// Packed (BLIS-style), for everything else (large B, B with a non-unit column stride, and the
// targets without masked loads):
//   for ic (MC rows of A)                      A block, packed by all threads together, shared
//     for pc (KC of the inner dimension)
//       pack A[ic.., pc..] into MR-row panels  (MR x KC each, element (r, p) at p * MR + r)
//       for jc (NC columns of this thread's share of B)
//         pack B[pc.., jc..] into NR-column panels (KC x NR each), per thread, stays in L2
//         for each MR-row panel of A           (stays in L1 while ...)
//           for each NR-column panel of B      (... the B panels stream from L2)
//             micro-kernel: MR x NR tile of C in registers, KC rank-1 updates (FMA)
// NR is NV whole vectors; the micro-kernel keeps MR x NV accumulators, NV vectors of B and one
// broadcast element of A in registers (12 x 2 on AVX-512, 6 x 2 with 16 registers). Tiles on the
// edges of C go through a local MR x NR buffer; packing zero-pads A's last panel to MR rows and
// B's last panel to NR columns, so the kernel itself never sees a partial tile.
//
// Measured on 2 Zen 5 cores (AVX-512, 48 KiB L1, 1 MiB L2; FMA peak ~250 GFLOP/s a core), one
// thread: the direct path beats the packed one from 8^3 (30 against 7 GFLOP/s: no packing or
// edge copies) up to 384^3 (245 against 228), and loses from 512^3, where B (1 MiB) no longer fits
// L2 (217 against 234); on two threads 256^3 runs at 496 GFLOP/s direct, 430 packed; 512^3 at
// 460 packed, 420 direct. Hence the direct path while B takes at most 640 KiB (AVX-512); see
// Sgemm() for the row-stride condition.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/gemm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "cpu/gemm.h"
#include "hwy/highway.h"

#ifndef FG_CPU_GEMM_SHARED
#define FG_CPU_GEMM_SHARED
namespace fg::cpu::gemm_detail {

// A growable, page-aligned float buffer (packing space), never shrunk; its size is bounded by the
// cache blocks, not by the product.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { std::free(p_); }
  float* get(size_t n) {
    if (n > cap_) {
      std::free(p_);
      const size_t bytes = (n * sizeof(float) + 4095) / 4096 * 4096;
      p_ = static_cast<float*>(std::aligned_alloc(4096, bytes));
      if (!p_) std::abort();
      cap_ = bytes / sizeof(float);
    }
    return p_;
  }

 private:
  float* p_ = nullptr;
  size_t cap_ = 0;
};

// Packing space of the calling thread: the shared A block lives in the buffer of the thread
// that calls sgemm, each thread's B block in its own.
inline Buffer& a_buffer() {
  static thread_local Buffer buf;
  return buf;
}
inline Buffer& b_buffer() {
  static thread_local Buffer buf;
  return buf;
}

}  // namespace fg::cpu::gemm_detail
#endif  // FG_CPU_GEMM_SHARED

HWY_BEFORE_NAMESPACE();
namespace fg::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// Micro-tile shape per target (rows of A broadcast, vectors of B).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// 32 registers: 24 accumulators + 2 of B + 1 broadcast.
constexpr int kMR = 12;
constexpr int kNV = 2;
constexpr bool kPreferred = true;
#elif HWY_TARGET == HWY_SCALAR
constexpr int kMR = 4;
constexpr int kNV = 2;
constexpr bool kPreferred = false;
#else
// 16 registers: 12 accumulators + 2 of B + 1 broadcast.
constexpr int kMR = 6;
constexpr int kNV = 2;
constexpr bool kPreferred = false;
#endif

constexpr int64_t kN = static_cast<int64_t>(hn::MaxLanes(D()));
constexpr int64_t kNR = kNV * kN;

// C (MR x NR at c, row stride ldc) = Ap @ Bp + beta C over kc, Ap MR x kc packed (p * MR + r),
// Bp kc x NR packed (p * NR + j, aligned).
template <int MR, int NV>
HWY_NOINLINE void MicroKernel(int64_t kc, const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp,
                              float* HWY_RESTRICT c, int64_t ldc, float beta) {
  const D d;
  constexpr int64_t N = kN;
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = hn::Zero(d);
  for (int64_t p = 0; p < kc; ++p) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = hn::Load(d, bp + v * N);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const V av = hn::Set(d, ap[r]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
    }
    ap += MR;
    bp += NV * N;
  }
  if (beta == 0.0f) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) hn::StoreU(acc[r][v], d, c + r * ldc + v * N);
  } else if (beta == 1.0f) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        float* cp = c + r * ldc + v * N;
        hn::StoreU(hn::Add(hn::LoadU(d, cp), acc[r][v]), d, cp);
      }
  } else {
    const V vb = hn::Set(d, beta);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        float* cp = c + r * ldc + v * N;
        hn::StoreU(hn::MulAdd(vb, hn::LoadU(d, cp), acc[r][v]), d, cp);
      }
  }
}

// One MR x NR tile of C, of which only rows x cols lie inside C.
HWY_INLINE void Tile(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, int64_t rows,
                     int64_t cols, float beta) {
  if (rows == kMR && cols == kNR) {
    MicroKernel<kMR, kNV>(kc, ap, bp, c, ldc, beta);
    return;
  }
  HWY_ALIGN float tile[kMR * kNR];
  MicroKernel<kMR, kNV>(kc, ap, bp, tile, kNR, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    float* cr = c + r * ldc;
    const float* tr = tile + r * kNR;
    if (beta == 0.0f) {
      for (int64_t j = 0; j < cols; ++j) cr[j] = tr[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) cr[j] = beta * cr[j] + tr[j];
    }
  }
}

// dst[p * W + l] = src[l * ld + p] for lines l < L <= W and p < kc: L lines, each contiguous
// along p, interleaved into a panel (rows of a row-major A, columns of a column-major B). 4 x 4
// blocks go through registers (4 loads, 8 shuffles, 4 stores for 16 floats: 3-4x fewer
// instructions than element by element).
template <int W>
HWY_INLINE void PackTransposed(const float* HWY_RESTRICT src, int64_t ld, int64_t L, int64_t kc,
                               float* HWY_RESTRICT dst) {
  int64_t p = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::Full128<float> d4;
  const int64_t L4 = L / 4 * 4;
  if (L4 > 0) {
    for (; p + 4 <= kc; p += 4) {
      for (int64_t l = 0; l < L4; l += 4) {
        const float* s = src + l * ld + p;
        const auto r0 = hn::LoadU(d4, s);
        const auto r1 = hn::LoadU(d4, s + ld);
        const auto r2 = hn::LoadU(d4, s + 2 * ld);
        const auto r3 = hn::LoadU(d4, s + 3 * ld);
        const auto t0 = hn::InterleaveLower(d4, r0, r1);  // r0[0] r1[0] r0[1] r1[1]
        const auto t1 = hn::InterleaveLower(d4, r2, r3);  // r2[0] r3[0] r2[1] r3[1]
        const auto t2 = hn::InterleaveUpper(d4, r0, r1);  // r0[2] r1[2] r0[3] r1[3]
        const auto t3 = hn::InterleaveUpper(d4, r2, r3);
        float* o = dst + p * W + l;
        hn::StoreU(hn::ConcatLowerLower(d4, t1, t0), d4, o);
        hn::StoreU(hn::ConcatUpperUpper(d4, t1, t0), d4, o + W);
        hn::StoreU(hn::ConcatLowerLower(d4, t3, t2), d4, o + 2 * W);
        hn::StoreU(hn::ConcatUpperUpper(d4, t3, t2), d4, o + 3 * W);
      }
      for (int64_t l = L4; l < L; ++l)
        for (int64_t q = p; q < p + 4; ++q) dst[q * W + l] = src[l * ld + q];
    }
  }
#endif
  for (; p < kc; ++p)
    for (int64_t l = 0; l < L; ++l) dst[p * W + l] = src[l * ld + p];
}

// Rows [0, rows) x columns [0, kc) of A (element (i, p) at a[i * rs + p * cs]) into one MR-row
// panel: element (r, p) at dst[p * MR + r], rows past `rows` zero.
void PackAPanel(const float* a, int64_t rs, int64_t cs, int64_t rows, int64_t kc, float* HWY_RESTRICT dst) {
  constexpr int MR = kMR;
  if (cs == 1 && rows > 1) {
    PackTransposed<MR>(a, rs, rows, kc, dst);
  } else if (rows == MR && rs == 1) {
    for (int64_t p = 0; p < kc; ++p) std::memcpy(dst + p * MR, a + p * cs, MR * sizeof(float));
  } else {
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t r = 0; r < rows; ++r) dst[p * MR + r] = a[r * rs + p * cs];
  }
  if (rows < MR)
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t r = rows; r < MR; ++r) dst[p * MR + r] = 0.0f;
}

// Rows [0, kc) x columns [0, cols) of B (element (p, j) at b[p * rs + j * cs]) into one NR-column
// panel: element (p, j) at dst[p * NR + j] (dst aligned), columns past `cols` zero.
void PackBPanel(const float* b, int64_t rs, int64_t cs, int64_t cols, int64_t kc, float* HWY_RESTRICT dst) {
  const D d;
  constexpr int64_t NR = kNR;
  if (cols == NR && cs == 1) {
    for (int64_t p = 0; p < kc; ++p) {
#pragma GCC unroll 4
      for (int v = 0; v < kNV; ++v) hn::Store(hn::LoadU(d, b + p * rs + v * kN), d, dst + p * NR + v * kN);
    }
    return;
  }
  if (cs == 1) {
    for (int64_t p = 0; p < kc; ++p)
      std::memcpy(dst + p * NR, b + p * rs, static_cast<size_t>(cols) * sizeof(float));
  } else if (rs == 1 && cols > 1) {
    PackTransposed<NR>(b, cs, cols, kc, dst);
  } else {
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t j = 0; j < cols; ++j) dst[p * NR + j] = b[p * rs + j * cs];
  }
  if (cols < NR)
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t j = cols; j < NR; ++j) dst[p * NR + j] = 0.0f;
}

// ------------------------------------------------------------------ direct path
// Masked loads and stores of the partial chunk are fault-free on AVX2 and AVX-512 (the masked
// lanes are not accessed); other targets take the packed path.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
constexpr bool kDirectPath = true;
#else
constexpr bool kDirectPath = false;
#endif

// Rows of C per block: R x 2 accumulators, 2 vectors of B and a broadcast fit the registers (8 x 2
// on AVX-512; 6 x 2 in 16 registers). 8 rows beat 6 and 4 on AVX-512 by 5-40% at 16^3..384^3.
constexpr int kDirectR = HWY_TARGET <= HWY_AVX3 ? 8 : 6;
// The largest B (k x n floats) the direct path takes: it reads all of B once per row block, so B
// must stay in L2 (1 MiB or more on AVX-512 CPUs; 256 KiB and up with AVX2). On AVX2 the direct
// path still beat the packed one at 384^3 (576 KiB of B) on the 1 MiB L2 of the Zen 5.
constexpr double kDirectMaxBBytes = HWY_TARGET <= HWY_AVX3 ? 640 * 1024 : 384 * 1024;

// C (R rows x w columns, NV - 1 < w / N <= NV) = A (R rows) @ B (w columns) + beta C, B with
// unit column stride. kFull: w = NV * N; otherwise the last vector is masked.
template <int R, int NV, bool kFull>
HWY_INLINE void DirectChunk(const float* HWY_RESTRICT a, int64_t ars, int64_t acs, const float* HWY_RESTRICT b,
                            int64_t brs, int64_t w, int64_t k, float beta, float* HWY_RESTRICT c, int64_t ldc) {
  const D d;
  const auto last = hn::FirstN(d, static_cast<size_t>(w - (NV - 1) * kN));
  auto load = [&](const float* p, int v) {
    return kFull || v < NV - 1 ? hn::LoadU(d, p + v * kN) : hn::MaskedLoad(last, d, p + v * kN);
  };
  V acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = hn::Zero(d);
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * brs;
    V bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = load(bp, v);
    for (int r = 0; r < R; ++r) {
      const V av = hn::Set(d, a[r * ars + p * acs]);
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
    }
  }
  const V vb = hn::Set(d, beta);
  for (int r = 0; r < R; ++r) {
    float* cr = c + r * ldc;
    for (int v = 0; v < NV; ++v) {
      // beta == 0: C is not read (it may hold NaN).
      if (beta != 0.0f) acc[r][v] = hn::MulAdd(vb, load(cr, v), acc[r][v]);
      if (kFull || v < NV - 1)
        hn::StoreU(acc[r][v], d, cr + v * kN);
      else
        hn::BlendedStore(acc[r][v], last, d, cr + v * kN);
    }
  }
}

template <int R>
HWY_INLINE void DirectRows(const float* a, int64_t ars, int64_t acs, const float* b, int64_t brs, int64_t n,
                           int64_t k, float beta, float* c, int64_t ldc) {
  int64_t j = 0;
  for (; j + 2 * kN <= n; j += 2 * kN)
    DirectChunk<R, 2, true>(a, ars, acs, b + j, brs, 2 * kN, k, beta, c + j, ldc);
  const int64_t w = n - j;
  if (w > kN)
    DirectChunk<R, 2, false>(a, ars, acs, b + j, brs, w, k, beta, c + j, ldc);
  else if (w == kN)
    DirectChunk<R, 1, true>(a, ars, acs, b + j, brs, w, k, beta, c + j, ldc);
  else if (w > 0)
    DirectChunk<R, 1, false>(a, ars, acs, b + j, brs, w, k, beta, c + j, ldc);
}

// C = A @ B + beta C for B with unit column stride (k >= 1).
void DirectGemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t ars, int64_t acs, const float* b,
               int64_t brs, float beta, float* c, int64_t ldc) {
  int64_t i = 0;
  for (; i + kDirectR <= m; i += kDirectR)
    DirectRows<kDirectR>(a + i * ars, ars, acs, b, brs, n, k, beta, c + i * ldc, ldc);
  const float* ai = a + i * ars;
  float* ci = c + i * ldc;
  switch (m - i) {
    case 7: DirectRows<7>(ai, ars, acs, b, brs, n, k, beta, ci, ldc); break;
    case 6: DirectRows<6>(ai, ars, acs, b, brs, n, k, beta, ci, ldc); break;
    case 5: DirectRows<5>(ai, ars, acs, b, brs, n, k, beta, ci, ldc); break;
    case 4: DirectRows<4>(ai, ars, acs, b, brs, n, k, beta, ci, ldc); break;
    case 3: DirectRows<3>(ai, ars, acs, b, brs, n, k, beta, ci, ldc); break;
    case 2: DirectRows<2>(ai, ars, acs, b, brs, n, k, beta, ci, ldc); break;
    case 1: DirectRows<1>(ai, ars, acs, b, brs, n, k, beta, ci, ldc); break;
    default: break;
  }
}

// C = beta * C (beta == 0: zeros, C not read).
void ScaleC(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  if (beta == 1.0f) return;
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    if (beta == 0.0f)
      std::fill(ci, ci + n, 0.0f);
    else
      for (int64_t j = 0; j < n; ++j) ci[j] *= beta;
  }
}

int64_t DivUp(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return DivUp(a, b) * b; }

// Cache blocks. KC: an A panel (MR x KC, 12 KiB on AVX-512) stays in L1 while the B panels
// stream past it. NC: this thread's B block (KC x NC, 256 KiB on AVX-512, 128 KiB on AVX2 with
// 16 floats a row) stays in L2. MC: the shared A block (MC x KC, 516 KiB) in L2/L3.
// Measured on 2 Zen 5 cores (48 KiB L1, 1 MiB L2) with the 12 x 32 AVX-512 micro-kernel: KC from
// 128 to 512 and NC from 128 to 1024 all give 512^3 and 1024^3 within 3% (the noise) of each
// other; the kernel alone, with packing skipped, runs at 97% of the one-core FMA peak, packing
// costs ~3% (B) and <1% (A, transposed through registers).
struct Blocking {
  int64_t mc, kc, nc;
};

constexpr int64_t kKC = 256;
constexpr int64_t kMC = 516;
constexpr int64_t kNC = kNR >= 32 ? 256 : 128;

Blocking ChooseBlocking(int64_t m, int64_t n, int64_t k) {
  Blocking b;
  // The inner dimension in equal chunks of at most kKC.
  b.kc = DivUp(k, DivUp(k, kKC));
  b.mc = RoundUp(std::min(kMC, RoundUp(m, kMR)), kMR);
  b.nc = RoundUp(std::min(kNC, RoundUp(n, kNR)), kNR);
  return b;
}

void Sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t ars, int64_t acs, const float* b,
           int64_t brs, int64_t bcs, float beta, float* c, int64_t ldc, int threads) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    ScaleC(m, n, beta, c, ldc);
    return;
  }
  // The direct path streams B by rows: with rows 4 KiB apart or more every k step is a new page,
  // which the hardware prefetchers do not cross (256 x 1024 x 160: 354 GFLOP/s direct, 436
  // packed; 512 x 4096 x 40: 307 against 433). Few rows of A (m <= 128) still favour it: packing
  // B would cost as much as the product (16 x 1024 x 48: 200 against 103 on one thread).
  const bool direct = kDirectPath && (bcs == 1 || n == 1) &&
                      static_cast<double>(k) * n * sizeof(float) <= kDirectMaxBBytes &&
                      (brs <= 512 || m <= 128);
  if (direct) {
    if (threads <= 1) {
      DirectGemm(m, n, k, a, ars, acs, b, brs, beta, c, ldc);
      return;
    }
    // Rows split over the threads (in whole blocks), or columns (whole chunks) when too few rows.
    const bool by_rows = m >= 2 * kDirectR * threads;
    const int64_t unit = by_rows ? kDirectR : 2 * kN;
    const int64_t units = DivUp(by_rows ? m : n, unit);
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t lo = units * t / nt * unit;
      const int64_t hi = std::min(by_rows ? m : n, units * (t + 1) / nt * unit);
      if (hi > lo) {
        if (by_rows)
          DirectGemm(hi - lo, n, k, a + lo * ars, ars, acs, b, brs, beta, c + lo * ldc, ldc);
        else
          DirectGemm(m, hi - lo, k, a, ars, acs, b + lo, brs, beta, c + lo, ldc);
      }
    }
    return;
  }
  const Blocking blk = ChooseBlocking(m, n, k);
  float* abuf = gemm_detail::a_buffer().get(static_cast<size_t>(blk.mc * blk.kc));

  // Splits the tiles of C over nt threads: tm groups of row panels x tn groups of column panels,
  // the factorization that gives the fewest tiles to the busiest thread (ties: by columns, which
  // keeps the packed A block shared without packing any B twice).
  auto body = [&](int tid, int nt) {
    const int64_t mp_total = DivUp(std::min(m, blk.mc), kMR);
    const int64_t np_total = DivUp(n, kNR);
    int tm = 1, tn = nt;
    int64_t best = -1;
    for (int x = nt; x >= 1; --x) {
      if (nt % x) continue;
      const int64_t cost = DivUp(mp_total, nt / x) * DivUp(np_total, x);
      if (best < 0 || cost < best) {
        best = cost;
        tn = x;
        tm = nt / x;
      }
    }
    const int ti = tid / tn, tj = tid % tn;
    const int64_t n_lo = np_total * tj / tn * kNR;
    const int64_t n_hi = std::min(n, np_total * (tj + 1) / tn * kNR);
    float* bbuf = gemm_detail::b_buffer().get(static_cast<size_t>(blk.kc * blk.nc));
    for (int64_t ic = 0; ic < m; ic += blk.mc) {
      const int64_t mc = std::min(blk.mc, m - ic);
      const int64_t mp = DivUp(mc, kMR);
      for (int64_t pc = 0; pc < k; pc += blk.kc) {
        const int64_t kc = std::min(blk.kc, k - pc);
        const float beta_here = pc == 0 ? beta : 1.0f;
        // All threads pack this A block together.
        for (int64_t q = mp * tid / nt; q < mp * (tid + 1) / nt; ++q) {
          const int64_t i = ic + q * kMR;
          PackAPanel(a + i * ars + pc * acs, ars, acs, std::min<int64_t>(kMR, m - i), kc, abuf + q * kMR * kc);
        }
        if (nt > 1) {
#pragma omp barrier
        }
        const int64_t q_lo = mp * ti / tm, q_hi = mp * (ti + 1) / tm;
        for (int64_t jc = n_lo; jc < n_hi; jc += blk.nc) {
          const int64_t nc = std::min(blk.nc, n_hi - jc);
          for (int64_t j = 0; j < nc; j += kNR)
            PackBPanel(b + pc * brs + (jc + j) * bcs, brs, bcs, std::min(kNR, nc - j), kc, bbuf + j * kc);
          for (int64_t q = q_lo; q < q_hi; ++q) {
            const int64_t i = ic + q * kMR;
            const int64_t rows = std::min<int64_t>(kMR, m - i);
            const float* ap = abuf + q * kMR * kc;
            for (int64_t j = 0; j < nc; j += kNR)
              Tile(kc, ap, bbuf + j * kc, c + i * ldc + jc + j, ldc, rows, std::min(kNR, nc - j), beta_here);
          }
        }
        if (nt > 1) {
#pragma omp barrier
        }
      }
    }
  };

  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    body(omp_get_thread_num(), omp_get_num_threads());
  } else {
    body(0, 1);
  }
}

bool Preferred() { return kPreferred; }

}  // namespace HWY_NAMESPACE
}  // namespace fg::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fg::cpu {

HWY_EXPORT(Sgemm);
HWY_EXPORT(Preferred);

void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs, const float* b,
           int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t ldc, int threads) {
  // Products too small to pay for a parallel region stay on this thread, and so does a call from
  // inside a parallel region (no nested team).
  if (2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) < (1 << 20) ||
      omp_in_parallel())
    threads = 1;
  HWY_DYNAMIC_DISPATCH(Sgemm)(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, ldc, threads);
}

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads) {
  sgemm(m, n, k, a, trans_a ? 1 : lda, trans_a ? lda : 1, b, trans_b ? 1 : ldb, trans_b ? ldb : 1, beta, c,
        ldc, threads);
}

bool sgemm_preferred() { return HWY_DYNAMIC_DISPATCH(Preferred)(); }

}  // namespace fg::cpu
#endif  // HWY_ONCE
