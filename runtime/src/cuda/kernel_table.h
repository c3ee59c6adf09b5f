// The kernel entries of a CUDA DeviceBackend: dtype dispatch onto the kernel launchers. Included
// by the CUDA backend (nvcc: the kernels run on the GPU) and by the tests' CPU-run backend (host
// compiler through compat.h: the same kernels run on CPU threads), so both tables run one code.
#pragma once

#include <cstdint>
#include <cstring>

#include "cuda/compat.h"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/kernels/index.cuh"
#include "cuda/kernels/reduce.cuh"
#include "device.h"
#include "internal.h"

namespace fg::cuda {
inline namespace FG_CUDA_MODE {

#if defined(__CUDACC__)
// Built in cuda/backend_trig.cu, whose ptxas flags allow the local memory of the trigonometric
// functions' huge-argument path (see kernels/elementwise_ops.h).
extern template void launch_unary<float, true>(UnaryKind, int64_t, const OffsetCalc<2>&, char*, const char*,
                                               cudaStream_t);
extern template void launch_unary<double, true>(UnaryKind, int64_t, const OffsetCalc<2>&, char*, const char*,
                                                cudaStream_t);
#endif

using fg::detail::DeviceBackend;
using fg::detail::ScalarBytes;

// Kernels go to the default stream for now: every runtime call is ordered after the previous one.
inline cudaStream_t kernel_stream() { return nullptr; }

using fg::detail::dispatch_all;

template <typename T>
T from_bytes(const ScalarBytes& v) {
  T value;
  std::memcpy(&value, v.bytes, sizeof(T));
  return value;
}

inline void table_fill(ScalarType dtype, int64_t n, const kernels::OffsetCalc<1>& calc, char* out, ScalarBytes v) {
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    launch_fill<T>(n, calc, out, from_bytes<T>(v), kernel_stream());
  });
}

inline void table_cast(ScalarType to, ScalarType from, int64_t n, const kernels::OffsetCalc<2>& calc, char* out,
                       const char* in) {
  dispatch_all(to, [&](auto to_tag) {
    dispatch_all(from, [&](auto from_tag) {
      launch_cast<decltype(to_tag), decltype(from_tag)>(n, calc, out, in, kernel_stream());
    });
  });
}

inline void table_unary(ScalarType dtype, kernels::UnaryKind kind, int64_t n, const kernels::OffsetCalc<2>& calc,
                        char* out, const char* in) {
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same<T, bool>::value) {
      launch_cast<bool, bool>(n, calc, out, in, kernel_stream());
    } else if constexpr (std::is_floating_point<T>::value) {
      if (kernels::is_trigonometric(kind))
        launch_unary<T, true>(kind, n, calc, out, in, kernel_stream());
      else
        launch_unary<T>(kind, n, calc, out, in, kernel_stream());
    } else {
      launch_unary<T>(kind, n, calc, out, in, kernel_stream());
    }
  });
}

inline void table_binary(ScalarType dtype, kernels::BinaryKind kind, int64_t n, const kernels::OffsetCalc<3>& calc,
                         char* out, const char* a, const char* b) {
  dispatch_all(dtype, [&](auto tag) { launch_binary<decltype(tag)>(kind, n, calc, out, a, b, kernel_stream()); });
}

inline void table_compare(ScalarType dtype, kernels::CompareKind kind, int64_t n, const kernels::OffsetCalc<3>& calc,
                          char* out, const char* a, const char* b) {
  dispatch_all(dtype, [&](auto tag) { launch_compare<decltype(tag)>(kind, n, calc, out, a, b, kernel_stream()); });
}

inline void table_where(ScalarType dtype, int64_t n, const kernels::OffsetCalc<4>& calc, char* out, const char* cond,
                        const char* a, const char* b) {
  dispatch_all(dtype, [&](auto tag) { launch_where<decltype(tag)>(n, calc, out, cond, a, b, kernel_stream()); });
}

inline void table_clamp(ScalarType dtype, int64_t n, const kernels::OffsetCalc<2>& calc, char* out, const char* in,
                        ScalarBytes lo, ScalarBytes hi) {
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    launch_clamp<T>(n, calc, out, in, from_bytes<T>(lo), from_bytes<T>(hi), kernel_stream());
  });
}

inline void table_gather(ScalarType dtype, int64_t n, const kernels::OffsetCalc<3>& calc, char* out, const char* self,
                         const char* index, int64_t dim_stride) {
  dispatch_all(dtype,
               [&](auto tag) { launch_gather<decltype(tag)>(n, calc, out, self, index, dim_stride, kernel_stream()); });
}

inline void table_scatter_add(ScalarType dtype, int64_t n, const kernels::OffsetCalc<3>& calc, char* self,
                              const char* index, const char* src, int64_t dim_stride) {
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same<T, bool>::value)
      fg::detail::fail("scatter_add", "internal error: bool scatter_add reaches the device");
    else
      launch_scatter_add<T>(n, calc, self, index, src, dim_stride, kernel_stream());
  });
}

inline void table_reduce_rows(ScalarType dtype, kernels::ReduceKind kind, int64_t rows, int64_t n, const void* in,
                              void* out) {
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same<T, bool>::value)
      fg::detail::fail("sum", "internal error: bool reductions reach the device as int64");
    else
      launch_reduce_rows<T>(kind, rows, n, static_cast<const T*>(in), static_cast<T*>(out), kernel_stream());
  });
}

inline void table_softmax_rows(ScalarType dtype, bool log, int64_t rows, int64_t n, const void* in, void* out) {
  if (dtype == kDouble)
    return launch_softmax_rows<double>(log, rows, n, static_cast<const double*>(in), static_cast<double*>(out),
                                       kernel_stream());
  launch_softmax_rows<float>(log, rows, n, static_cast<const float*>(in), static_cast<float*>(out), kernel_stream());
}

inline void table_random(ScalarType dtype, kernels::Dist dist, int64_t n, void* out, uint64_t seed, uint64_t base) {
  if (dtype == kDouble) return launch_random<double>(n, static_cast<double*>(out), dist, seed, base, kernel_stream());
  launch_random<float>(n, static_cast<float*>(out), dist, seed, base, kernel_stream());
}

// Fills the kernel entries; the caller sets memory, device management and gemm.
inline void set_kernel_entries(DeviceBackend& be) {
  be.fill = table_fill;
  be.cast = table_cast;
  be.unary = table_unary;
  be.binary = table_binary;
  be.compare = table_compare;
  be.where = table_where;
  be.clamp = table_clamp;
  be.gather = table_gather;
  be.scatter_add = table_scatter_add;
  be.reduce_rows = table_reduce_rows;
  be.softmax_rows = table_softmax_rows;
  be.random = table_random;
}

}  // namespace FG_CUDA_MODE
}  // namespace fg::cuda
