// The row-major to column-major mapping of batched products for cuBLAS, and the CPU reading of a
// plan with cuBLAS's semantics that tests it (and runs the CUDA backend's products in CPU runs).
#include "cuda/gemm_plan.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "funcgen/runtime/error.h"

namespace fg::cuda::detail {
namespace {

// cuBLAS takes m, n, k, the leading dimensions and the batch count as int.
constexpr int64_t kIntMax = INT_MAX;

// How cuBLAS reads one of our row-major operands (rows x cols) as X or Y of C^T = B^T A^T, where
// it must see the operand transposed (cols x rows).
struct Reading {
  Op op;
  int64_t ld, stride;
  bool copy;
};

bool valid_ld(int64_t ld, int64_t stored_rows) { return ld >= std::max<int64_t>(1, stored_rows) && ld <= kIntMax; }

// Our operand in a row-major contiguous copy: its transpose is column-major with ld = cols. A batch
// stride of 0 stays 0, which reads right whether or not the copy kept the broadcast.
Reading copied(int64_t rows, int64_t cols, const OperandStrides& s) {
  return {Op::N, std::max<int64_t>(1, cols), s.bs == 0 ? 0 : rows * cols, true};
}

// An operand nothing reads (an empty product): any ld cuBLAS accepts.
Reading unread(int64_t cols, const OperandStrides& s) { return {Op::N, std::max<int64_t>(1, cols), s.bs, false}; }

// cs == 1: element (r, c) at r*rs + c is, column-major with ld = rs, the transpose stored: op N.
// rs == 1: element (r, c) at r + c*cs is the operand itself column-major with ld = cs: op T.
// A size-1 dim leaves its stride unused, so that ld is ours to pick (cuBLAS checks it anyway).
// Both strides non-unit, or an ld below the stored rows (rows overlap, e.g. stride 0), or above
// int: cuBLAS cannot read it, so it reads a contiguous copy.
Reading read_operand(int64_t rows, int64_t cols, const OperandStrides& s) {
  if (s.cs == 1 || cols == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(1, cols) : s.rs;
    if (valid_ld(ld, cols)) return {Op::N, ld, s.bs, false};
  }
  if (s.rs == 1 || rows == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(1, rows) : s.cs;
    if (valid_ld(ld, rows)) return {Op::T, ld, s.bs, false};
  }
  return copied(rows, cols, s);
}

void check_size(const char* name, int64_t v) {
  if (v < 0) fg::detail::fail("matmul", "negative size ", name, " = ", v);
  if (v > kIntMax)
    fg::detail::fail("matmul", "size ", name, " = ", v, " is above cuBLAS's limit of ", kIntMax, " (int)");
}

std::string check_ld(const char* name, int64_t ld, int64_t stored_rows) {
  if (valid_ld(ld, stored_rows)) return "";
  return std::string(name) + " = " + std::to_string(ld) + " is not in [max(1, " + std::to_string(stored_rows) +
         "), INT_MAX]";
}

// Element (r, c) of op(M), M column-major with leading dimension ld from m[base].
template <typename T>
T op_at(const T* m, int64_t base, Op op, int64_t ld, int64_t r, int64_t c) {
  return op == Op::N ? m[base + r + c * ld] : m[base + c + r * ld];
}

}  // namespace

GemmPlan plan_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, const OperandStrides& a, const OperandStrides& b) {
  check_size("batch", batch);
  check_size("m", m);
  check_size("n", n);
  check_size("k", k);
  GemmPlan p;
  p.batch = batch;
  p.m = n;  // C^T = B^T A^T: cuBLAS's C' is our C^T, n x m
  p.n = m;
  p.k = k;
  p.ldc = std::max<int64_t>(1, n);
  p.stride_c = m * n;
  p.call = batch > 0 && m > 0 && n > 0 && k > 0;
  // X = our B (k x n), Y = our A (m x k).
  const Reading x = p.call ? read_operand(k, n, b) : unread(n, b);
  const Reading y = p.call ? read_operand(m, k, a) : unread(k, a);
  p.transa = x.op, p.lda = x.ld, p.stride_a = x.stride, p.copy_b = x.copy;
  p.transb = y.op, p.ldb = y.ld, p.stride_b = y.stride, p.copy_a = y.copy;
  return p;
}

// cuBLAS's documented CUBLAS_STATUS_INVALID_VALUE conditions for gemm, strided batched.
std::string invalid_cublas_arguments(const GemmPlan& p) {
  const std::pair<const char*, int64_t> sizes[] = {{"m", p.m}, {"n", p.n}, {"k", p.k}, {"batch", p.batch}};
  for (const auto& [name, v] : sizes)
    if (v < 0 || v > kIntMax) return std::string(name) + " = " + std::to_string(v) + " is not in [0, INT_MAX]";
  std::string bad = check_ld("lda", p.lda, p.transa == Op::N ? p.m : p.k);
  if (bad.empty()) bad = check_ld("ldb", p.ldb, p.transb == Op::N ? p.k : p.n);
  if (bad.empty()) bad = check_ld("ldc", p.ldc, p.m);
  return bad;
}

template <typename T>
void reference_gemm(const GemmPlan& p, const T* x, const T* y, T* c) {
  const std::string bad = invalid_cublas_arguments(p);
  if (!bad.empty()) fg::detail::fail("matmul", "cuBLAS would reject the product: ", bad);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t i = 0; i < p.m; ++i) {
        T sum = 0;  // beta = 0: C' is written, never read
        for (int64_t l = 0; l < p.k; ++l)
          sum += op_at(x, b * p.stride_a, p.transa, p.lda, i, l) * op_at(y, b * p.stride_b, p.transb, p.ldb, l, j);
        c[b * p.stride_c + i + j * p.ldc] = sum;
      }
}

template void reference_gemm<float>(const GemmPlan&, const float*, const float*, float*);
template void reference_gemm<double>(const GemmPlan&, const double*, const double*, double*);

}  // namespace fg::cuda::detail
