// Helpers shared by the runtime's op implementations; not part of the public API.
#pragma once

#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "funcgen/runtime/ops.h"

namespace fg::detail {

// Normalizes a possibly negative dim into [0, ndim); throws naming `op` when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);
// Contiguous (row-major) strides for sizes.
std::vector<int64_t> contiguous_strides(IntArrayRef sizes);
// The product of sizes, unchecked: for the sizes of an existing tensor (checked when it was made).
int64_t product(IntArrayRef sizes);

// Overflow-checked size arithmetic, the one place sizes, strides, offsets and element counts that
// come from arguments are multiplied and added: the exact int64 result, or an fg::Error naming
// `op` when it does not fit (as torch's checks, so that no op wraps around into a wrong size).
int64_t checked_mul(int64_t a, int64_t b, const char* op);
int64_t checked_add(int64_t a, int64_t b, const char* op);
// The element count of new sizes, after checking them: non-negative, and their product (zeros
// counted as ones, which the contiguous strides need too) within int64.
int64_t checked_numel(IntArrayRef sizes, const char* op);
// Whether checked_numel rejects sizes for their product (for ops that word the error themselves).
bool numel_overflows(IntArrayRef sizes);
// The bytes of a contiguous tensor of sizes and dtype (checked_numel, and the bytes within int64).
size_t checked_nbytes(IntArrayRef sizes, ScalarType dtype, const char* op);
// fg::empty, zeros and full, with failures (bad sizes, out of memory) reported as `op`'s.
Tensor empty(IntArrayRef size, TensorOptions options, const char* op);
Tensor zeros(IntArrayRef size, TensorOptions options, const char* op);
Tensor full(IntArrayRef size, const Scalar& value, TensorOptions options, const char* op);
// "[3, 4]"
std::string shape_str(IntArrayRef sizes);
void check_defined(const Tensor& t, const char* op, const char* arg = "input");
// A tensor sharing self's storage with new geometry.
Tensor make_view(const Tensor& self, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                 int64_t offset);
// Element pointer of the first element, as char*.
inline char* byte_ptr(const Tensor& t) { return static_cast<char*>(t.data_ptr()); }
// Whether two tensors' storage is the same allocation.
bool shares_storage(const Tensor& a, const Tensor& b);
// How the memory of two tensors overlaps, as torch's get_overlap_status: not at all; fully (the
// same elements in the same layout); partially; or TooHard when either is not a dense layout.
enum class Overlap { None, Full, Partial, TooHard };
Overlap overlap(const Tensor& a, const Tensor& b);
// Throws when several elements of `self` share one memory location (an expanded tensor), which
// an in-place op named `op` cannot write consistently.
void check_no_internal_overlap(const Tensor& self, const char* op);
// Whether a value of dtype `from` may be written into a tensor of dtype `to` (torch.can_cast).
bool can_cast(ScalarType from, ScalarType to);
// Replaces out's storage and geometry with those of `result` (for *_out ops that must resize),
// or copies result into out when out already has the right shape.
Tensor& assign_out(Tensor& out, const Tensor& result, const char* op);

// A new tensor of `shape` whose memory layout follows `ref` when ref has that shape and is a
// permuted dense layout (e.g. a transpose), so element-wise ops on such inputs stream through
// memory instead of striding; otherwise contiguous.
Tensor empty_like_layout(IntArrayRef shape, TensorOptions options, const Tensor& ref);

// Copies src, broadcast to dst's shape, into dst with dtype conversion; src must not overlap dst.
void copy_strided(const Tensor& dst, const Tensor& src);

// fg::ad::nll_loss_backward on operands with nb batch dims in front, all of the same batch sizes:
// g ([B..., target dims] for Reduction::None, else [B...]), target [B..., target dims], weight
// [B..., C] or undefined; the result has input_sizes (batch dims included) and dtype.
Tensor nll_loss_backward(const Tensor& g, IntArrayRef input_sizes, ScalarType dtype, const Tensor& target,
                         const Tensor& weight, Reduction reduction, int64_t ignore_index, int64_t nb);

// A convolution's or pool's per-dim argument (stride, padding, ...): one value for every spatial dim
// or one per dim (1 or 2 of them), as {height, width}; a 1-D op keeps the height entry at `unit`.
// Throws naming `op` and the argument for other lengths.
std::array<int64_t, 2> spatial_arg(IntArrayRef v, int64_t spatial, int64_t unit, const char* name, const char* op);

// C [m, n] (row stride ldc) = A [m, k] @ B [k, n] (+ C when accumulate), T float or double, for
// kernels that run their own loops of products (the convolutions). A and B are given by element
// strides and must each be a row-major matrix or the transpose of one. The product is split over
// the OpenMP threads when `parallel`; inside a parallel region it runs on the calling thread, and
// gemm_prepare<T>() must have run before that region starts (it picks the kernels' ISA).
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
          int64_t b_cs, T* c, int64_t ldc, bool accumulate, bool parallel);
template <typename T>
void gemm_prepare();

// A scalar as the element value of a tensor of C++ type T (what fill_ writes on every device).
template <typename T>
T scalar_as(const Scalar& value) {
  if constexpr (std::is_same_v<T, bool>) return value.toBool();
  else return value.to<T>();
}

// Calls f(T{}) with T the C++ type of dtype.
template <typename F>
decltype(auto) dispatch_all(ScalarType dtype, F&& f) {
  switch (dtype) {
    case kFloat: return f(float{});
    case kDouble: return f(double{});
    case kLong: return f(int64_t{});
    case kBool: return f(bool{});
  }
  return f(float{});
}
// As dispatch_all, but only float and double; other dtypes throw naming `op`.
template <typename F>
decltype(auto) dispatch_floating(ScalarType dtype, const char* op, F&& f) {
  if (dtype == kDouble) return f(double{});
  if (dtype != kFloat) fail(op, "expected a floating-point tensor (float32 or float64), got ", dtype);
  return f(float{});
}

}  // namespace fg::detail
