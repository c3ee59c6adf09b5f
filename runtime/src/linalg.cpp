// Matrix products: matmul (with all of torch.matmul's broadcasting), mm, bmm, mv, dot, outer and
// linear. float32 and float64 go to OpenBLAS; int64 uses a plain loop; bool is rejected.
//
// Every product funnels into matmul_core(), which computes C[batch..., m, n] = A @ B for operands
// A [batchA..., m, k] and B [batchB..., k, n] whose batch dims broadcast to `batch`:
//  * strided operands are passed to BLAS as they are when one of their matrix strides is 1
//    (CblasTrans for transposed views); only other layouts are copied;
//  * when B is the same matrix for every batch item (a 1-D/2-D right operand, a broadcast one),
//    the batch is folded into A's rows so the whole product is one gemm;
//  * otherwise small per-item products run in parallel over the batch (OpenMP), each gemm on one
//    thread, and large ones one after another with OpenBLAS's own threads.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "internal.h"

// OpenBLAS extensions. Weak, so that the runtime still links (and simply skips the tuning below)
// against a BLAS that lacks them; gotoblas_dynamic_* exist only in DYNAMIC_ARCH builds.
extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char* openblas_get_corename(void);
void gotoblas_dynamic_init(void);
void gotoblas_dynamic_quit(void);
}
#pragma weak openblas_set_num_threads
#pragma weak openblas_get_num_threads
#pragma weak openblas_get_corename
#pragma weak gotoblas_dynamic_init
#pragma weak gotoblas_dynamic_quit

namespace fg {
namespace {

using detail::fail;

// ------------------------------------------------------------------------------ BLAS setup

// OpenBLAS 0.3.21 (Debian 12) does not know AMD Zen 4/5 and runs its AVX2 "Haswell" kernels there
// although the CPU has AVX-512: half the FMA width, about half the gemm speed. When the library
// picked Haswell or Zen on a CPU with the AVX-512 subsets its SkylakeX kernels use, and the user
// did not choose a core type (OPENBLAS_CORETYPE) or opt out (FG_BLAS_KEEP_CORETYPE), re-run
// OpenBLAS's dynamic-arch selection once with OPENBLAS_CORETYPE=SkylakeX, before the first call.
void select_blas_kernels() {
  if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit || !openblas_get_corename) return;
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("FG_BLAS_KEEP_CORETYPE")) return;
  const char* core_name = openblas_get_corename();
  std::string core = core_name ? core_name : "";
  std::transform(core.begin(), core.end(), core.begin(), [](unsigned char c) { return std::tolower(c); });
  if (core != "haswell" && core != "zen") return;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  // libgcc's checks include the OS's XCR0 support for the zmm state.
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("avx512vl") ||
      !__builtin_cpu_supports("avx512cd"))
    return;
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
#endif
}

void ensure_blas_ready() {
  static std::once_flag once;
  std::call_once(once, select_blas_kernels);
}

// While alive, OpenBLAS calls run on the calling thread only (for gemms issued from an OpenMP
// region). Nested and concurrent scopes share one saved thread count.
class BlasSingleThreaded {
 public:
  BlasSingleThreaded() {
    std::lock_guard<std::mutex> lock(mutex());
    if (depth()++ == 0 && openblas_get_num_threads && openblas_set_num_threads) {
      saved() = openblas_get_num_threads();
      if (saved() > 1) openblas_set_num_threads(1);
    }
  }
  ~BlasSingleThreaded() {
    std::lock_guard<std::mutex> lock(mutex());
    if (--depth() == 0 && openblas_set_num_threads && saved() > 1) openblas_set_num_threads(saved());
  }
  BlasSingleThreaded(const BlasSingleThreaded&) = delete;
  BlasSingleThreaded& operator=(const BlasSingleThreaded&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& depth() {
    static int d = 0;
    return d;
  }
  static int& saved() {
    static int s = 1;
    return s;
  }
};

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

// ------------------------------------------------------------------------------ batched core

// Per-item products at most this many flops (2mnk) run in parallel over the batch, one gemm per
// thread: below it, OpenBLAS's own threading costs more in synchronization than it gains.
constexpr double kSmallGemmFlops = 64.0 * 1024 * 1024;

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
  if constexpr (kBlas) {
    check_blas_dims(m, n, k, op);
    ensure_blas_ready();
    if (!blas_layout(m, k, ars, acs).ok) {
      A = A.contiguous();
      mat_strides(A, ars, acs);
    }
    if (!blas_layout(k, n, brs, bcs).ok) {
      B = B.contiguous();
      mat_strides(B, brs, bcs);
    }
  }
  std::vector<int64_t> offA = batch_offsets(A, batch);
  const std::vector<int64_t> offB = batch_offsets(B, batch);
  const bool shared_b = all_zero(offB);

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
        check_blas_dims(M, n, k, op);
        gemm_blas<T>(M, n, k, {a, R, 1}, {b, brs, bcs}, C, n, accumulate);
      } else {
        gemm_loop(M, n, k, {a, R, acs}, {b, brs, bcs}, C, n, accumulate, true);
      }
      return;
    }
  }

  const T* a = A.template data_ptr<T>();
  const T* b = B.template data_ptr<T>();
  const int64_t mn = m * n;
  auto item = [&](int64_t i, bool parallel_inside) {
    const Mat<T> ma{a + offA[i], ars, acs};
    const Mat<T> mb{b + offB[i], brs, bcs};
    if constexpr (kBlas)
      gemm_blas<T>(m, n, k, ma, mb, C + i * mn, n, accumulate);
    else
      gemm_loop(m, n, k, ma, mb, C + i * mn, n, accumulate, parallel_inside);
  };
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (nb > 1 && threads > 1 && flops <= kSmallGemmFlops) {
    // Many small products: one per thread at a time.
    BlasSingleThreaded scope;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nb; ++i) item(i, false);
  } else {
    for (int64_t i = 0; i < nb; ++i) item(i, true);
  }
}

// C = A @ B (+ C), A [batchA..., m, k], B [batchB..., k, n], C contiguous holding
// product(batch) * m * n elements of A's dtype. Shapes and dtypes are checked by the caller.
void matmul_core(const Tensor& A, const Tensor& B, IntArrayRef batch, const Tensor& C,
                 bool accumulate, const char* op) {
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
  detail::check_cpu(a, op);
  detail::check_cpu(b, op);
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
  // As torch: an element-wise product with broadcasting, so dtypes promote and bool works.
  return mul(unsqueeze_view(self, 1), unsqueeze_view(vec2, 0));
}

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  const char* op = "linear";
  detail::check_defined(input, op, "input");
  detail::check_defined(weight, op, "weight");
  detail::check_cpu(input, op);
  detail::check_cpu(weight, op);
  const bool has_bias = bias.has_value() && bias->defined();
  if (has_bias) detail::check_cpu(*bias, op);
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
