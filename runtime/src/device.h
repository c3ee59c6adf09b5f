// Devices other than the CPU: each is a table of memory functions and kernels on raw geometry
// (pointers, sizes, OffsetCalc), filled by its backend library — the CUDA backend
// (cuda/backend.cu), or in tests the CPU run of the same kernels. The runtime's ops call the
// Tensor-level functions at the bottom of this header when their operands live on such a device.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "funcgen/runtime/ops.h"
#include "funcgen/runtime/random.h"
#include "kernels/elementwise_ops.h"
#include "kernels/offset_calc.h"
#include "kernels/philox.h"

namespace fg::cuda::detail {
struct GemmPlan;
}

namespace fg::detail {

enum class CopyKind : int { HostToDevice, DeviceToHost, DeviceToDevice };

// A scalar already converted to the tensor's dtype (scalar_as), as its bytes: a fill value, a bound.
struct ScalarBytes {
  alignas(8) unsigned char bytes[8];
};

struct DeviceBackend {
  const char* name;
  // Why no kernel can run on the device ("" when they can): the CUDA error's name and text.
  std::string (*unavailable_reason)();
  int (*device_count)();
  void (*synchronize)();
  void (*empty_cache)();
  // Device memory freed when the last owner lets go; nullptr when the device is out of memory.
  std::shared_ptr<void> (*allocate)(size_t nbytes, int device);
  void (*memcpy)(void* dst, const void* src, size_t bytes, CopyKind kind);
  // Kernels; every pointer is device memory, every operand has the dtype given.
  void (*fill)(ScalarType dtype, int64_t n, const kernels::OffsetCalc<1>& calc, char* out, ScalarBytes value);
  void (*cast)(ScalarType to, ScalarType from, int64_t n, const kernels::OffsetCalc<2>& calc, char* out,
               const char* in);
  void (*unary)(ScalarType dtype, kernels::UnaryKind kind, int64_t n, const kernels::OffsetCalc<2>& calc, char* out,
                const char* in);
  void (*binary)(ScalarType dtype, kernels::BinaryKind kind, int64_t n, const kernels::OffsetCalc<3>& calc, char* out,
                 const char* a, const char* b);
  // out (bool) = a (cmp) b, a and b of dtype.
  void (*compare)(ScalarType dtype, kernels::CompareKind kind, int64_t n, const kernels::OffsetCalc<3>& calc, char* out,
                  const char* a, const char* b);
  // out = cond ? a : b, cond bool.
  void (*where)(ScalarType dtype, int64_t n, const kernels::OffsetCalc<4>& calc, char* out, const char* cond,
                const char* a, const char* b);
  // out = min(max(in, lo), hi), NaN kept.
  void (*clamp)(ScalarType dtype, int64_t n, const kernels::OffsetCalc<2>& calc, char* out, const char* in,
                ScalarBytes lo, ScalarBytes hi);
  // Over the index's shape, self's stride along the indexed dim 0 in `calc` and dim_stride (bytes)
  // times the index value added: out = self[index] with offsets {out, self, index}, and
  // self[index] += src with offsets {self, index, src} (not bool). Indices are in bounds.
  void (*gather)(ScalarType dtype, int64_t n, const kernels::OffsetCalc<3>& calc, char* out, const char* self,
                 const char* index, int64_t dim_stride);
  void (*scatter_add)(ScalarType dtype, int64_t n, const kernels::OffsetCalc<3>& calc, char* self, const char* index,
                      const char* src, int64_t dim_stride);
  // out[r] = reduce(in[r, 0..n)) and the softmax of each row, over contiguous [rows, n].
  void (*reduce_rows)(ScalarType dtype, kernels::ReduceKind kind, int64_t rows, int64_t n, const void* in, void* out);
  void (*softmax_rows)(ScalarType dtype, bool log, int64_t rows, int64_t n, const void* in, void* out);
  // out[0..n), contiguous, from the Philox stream at (seed, base) as the CPU draws it.
  void (*random)(ScalarType dtype, kernels::Dist dist, int64_t n, void* out, uint64_t seed, uint64_t base);
  // The batched product a plan describes (x, y in the plan's operand order, c its output).
  void (*gemm)(ScalarType dtype, const cuda::detail::GemmPlan& plan, const void* x, const void* y, void* c);
  // Opens the libraries that the backend loads at first use (cuBLAS) with every function it calls
  // there, as the first product does, and says where they were found; needs no device. An
  // fg::Error when one cannot be opened. nullptr: the backend loads none.
  std::string (*load_libraries)();
};

// The backend of `device`'s type; throws naming `op` when this build has none or no kernel can
// run there (no driver, no device), with the reason.
const DeviceBackend& device_backend(Device device, const char* op);
// The built-in CUDA backend (cuda/backend.cu), or nullptr in a build without CUDA.
const DeviceBackend* builtin_cuda_backend();
// The one kCUDA tensors use: the testing override, else the built-in one (nullptr: none).
const DeviceBackend* active_cuda_backend();
// Tests: runs kCUDA tensors on `backend` instead (nullptr restores the built-in one).
void set_cuda_backend_for_testing(const DeviceBackend* backend);
extern std::atomic<const DeviceBackend*> testing_backend;

// ---- Tensor-level operations on device tensors (all operands on one device)

Tensor device_empty(IntArrayRef size, TensorOptions options, const char* op);
// dst = src (broadcast to dst's shape, converted to dst's dtype); either may be on the CPU.
void device_copy(const Tensor& dst, const Tensor& src);
void device_fill(const Tensor& dst, const Scalar& value);
void device_unary(kernels::UnaryKind kind, const Tensor& out, const Tensor& in);
void device_binary(kernels::BinaryKind kind, const Tensor& out, const Tensor& a, const Tensor& b);
void device_compare(kernels::CompareKind kind, const Tensor& out, const Tensor& a, const Tensor& b);
// The reduction of self over `dims` (sorted, distinct, non-empty) as a new tensor of self's dtype
// with those dims removed.
Tensor device_reduce(kernels::ReduceKind kind, const Tensor& self, IntArrayRef dims, const char* op);
Tensor device_softmax(const Tensor& self, int64_t dim, bool log);
// out = cond ? a : b; cond bool, a and b of out's dtype, all broadcast to out's shape.
void device_where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
// out = in clamped to [lo, hi] (a missing bound is no bound), NaN kept; in of out's dtype.
void device_clamp(const Tensor& out, const Tensor& in, const std::optional<Scalar>& lo,
                  const std::optional<Scalar>& hi);
// The smallest and largest entry of a non-empty int64 tensor (two reductions; waits for them).
std::pair<int64_t, int64_t> device_index_range(const Tensor& index);
// The first entry of an int64 tensor (row-major; among those `considered` marks, if given) outside
// [0, size), or none; waits for the device once.
std::optional<int64_t> device_first_out_of_range(const Tensor& index, int64_t size, const Tensor& considered = {});
// Throws as the CPU ops do unless every index lies in [0, size) (dim d is named in the message).
void device_check_index(const Tensor& index, int64_t size, int64_t d, const char* op);
// out (index's shape) = self with dim d indexed by index; self[index] += src along d, in place.
// The caller has checked the shapes and the indices (device_check_index).
void device_gather(const Tensor& out, const Tensor& self, int64_t d, const Tensor& index, const char* op);
void device_scatter_add(const Tensor& self, int64_t d, const Tensor& index, const Tensor& src, const char* op);
// c = a [B or 1, m, k] @ b [B or 1, k, n] (a batch of 1 broadcasts); c contiguous, B * m * n elements.
void device_bmm(const Tensor& a, const Tensor& b, const Tensor& c, const char* op);
// The counters the CPU draw would take (kernels/philox.h), reserved once the tensor exists.
Tensor device_random(kernels::Dist dist, IntArrayRef size, TensorOptions options, Generator& gen);

// The device every operand is on; a 0-d CPU tensor (a wrapped number) goes with any device, as
// in torch. Throws naming `op` and both devices when they differ.
Device common_device(std::initializer_list<const Tensor*> operands, const char* op);
Device common_device(const std::vector<const Tensor*>& operands, const char* op);

}  // namespace fg::detail
