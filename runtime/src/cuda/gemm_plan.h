// How a batched row-major product C[b] = A[b] @ B[b] of strided operands maps onto cuBLAS's
// column-major cublas<t>gemmStridedBatched / cublasGemmStridedBatchedEx: a pure plan, so the mapping
// is tested on any machine by reference_gemm, which reads the plan as cuBLAS does. The .cu call
// site only translates Op to CUBLAS_OP_N/T and passes the fields verbatim.
#pragma once

#include <cstdint>
#include <string>

namespace fg::cuda::detail {

enum class Op : int8_t { N, T };  // CUBLAS_OP_N / CUBLAS_OP_T

// One operand's strides in elements as fg::Tensor gives them for a [batch, rows, cols] view.
// bs == 0 broadcasts one matrix over the batch.
struct OperandStrides {
  int64_t bs, rs, cs;
};

// cuBLAS's arguments in cuBLAS's order: for b in [0, batch), C'[b] = op(X[b]) * op(Y[b]) with
// X (the call's first matrix) element (r, c) at x[r + c*lda + b*stride_a], Y's at
// y[r + c*ldb + b*stride_b] and C' (m x n) element (i, j) at c[i + j*ldc + b*stride_c].
struct GemmPlan {
  Op transa = Op::N, transb = Op::N;
  int64_t m = 0, n = 0, k = 0;                       // cuBLAS's m, n, k: our n, m, k when swap
  int64_t lda = 1, ldb = 1, ldc = 1;                 // each >= max(1, rows of the stored matrix), as cuBLAS demands
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // batch strides (0: one matrix for all)
  int64_t batch = 0;
  // X is our B and Y our A (C^T = B^T A^T): always true, as our C is row-major; kept so the call
  // site takes its operand order from here.
  bool swap = true;
  // Our A / B is read from a row-major contiguous copy (neither layout is one cuBLAS can read);
  // the plan's ld and batch stride describe that copy. When the operand's batch stride is 0 the
  // plan keeps 0, so the copy may hold one matrix or the whole (expanded) batch.
  bool copy_a = false, copy_b = false;
  // Whether cuBLAS has work: false when m, n or batch is 0 (C is empty: skip the call) or k is 0
  // (C must be zero-filled: the caller does it; cuBLAS's k == 0 path is not relied on). No
  // operand is read then and copy_a/copy_b are false; every other field is still valid.
  bool call = false;
};

// Plans C[b] = A[b] @ B[b], A batch x m x k, B batch x k x n, C a new contiguous batch x m x n.
// Throws fg::Error ("fg::matmul: ...") for negative sizes or sizes above cuBLAS's int.
GemmPlan plan_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, const OperandStrides& a, const OperandStrides& b);

// Why cuBLAS would answer CUBLAS_STATUS_INVALID_VALUE for this plan ("" when it would not).
std::string invalid_cublas_arguments(const GemmPlan& p);

// What cuBLAS computes for the plan (alpha 1, beta 0): x, y and c as the call passes them.
// Throws fg::Error where cuBLAS would reject the arguments. Instantiated for float and double.
template <typename T>
void reference_gemm(const GemmPlan& p, const T* x, const T* y, T* c);

}  // namespace fg::cuda::detail
