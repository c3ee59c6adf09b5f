// The CUDA backend: device memory from the caching allocator over cudaMalloc, copies through
// cudaMemcpy, products through cuBLAS as cuda/gemm_plan.h maps them (the library opened at the
// first product: cuda/shared_library.h), and the kernel table of cuda/kernel_table.h compiled for
// the GPU. Without a driver or a device every entry point says why (the CUDA runtime's error name
// and text) instead of failing inside CUDA.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <string>

#include "cuda/caching_allocator.h"
#include "cuda/gemm_plan.h"
#include "cuda/kernel_table.h"
#include "cuda/shared_library.h"
#include "device.h"

namespace fg::cuda {
namespace {

std::string describe(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

void check(cudaError_t e, const char* op) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // a non-sticky error must not surface again at the next launch
  fg::detail::fail(op, describe(e));
}

// What the driver says, asked once: cudaGetDeviceCount fails cleanly without a driver
// (cudaErrorInsufficientDriver) or a device (cudaErrorNoDevice).
struct Probe {
  int count = 0;
  std::string unavailable;
};
const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    const cudaError_t e = cudaGetDeviceCount(&r.count);
    if (e != cudaSuccess) {
      r.count = 0;
      r.unavailable = describe(e);
      (void)cudaGetLastError();  // not sticky: clear it
    } else if (r.count == 0) {
      r.unavailable = "cudaErrorNoDevice: no CUDA-capable device is detected";
    } else {
      // The build carries sm_90 code and compute_90 PTX: older devices could allocate and copy
      // but run no kernel, so they count as unavailable, with the reason.
      int major = 0, minor = 0;
      (void)cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
      (void)cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
      const cudaError_t init = cudaFree(nullptr);  // creates the context: its errors show here
      if (init != cudaSuccess) {
        r.unavailable = describe(init);
        (void)cudaGetLastError();
      } else if (major < 9) {
        r.unavailable = "the runtime was built for sm_90 and newer; device 0 is sm_" + std::to_string(major) +
                        std::to_string(minor);
      }
    }
    return r;
  }();
  return p;
}

class CudaMemory : public detail::MemoryBackend {
 public:
  void* raw_alloc(size_t bytes) override {
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // out of memory is reported by the caller, with the shape
      return nullptr;
    }
    check(e, "cuda_malloc");  // anything else (a faulted context, ...) is that error
    return p;
  }
  void raw_free(void* p) override { (void)cudaFree(p); }
};

detail::CachingAllocator& allocator() {
  static auto* a = new detail::CachingAllocator(*new CudaMemory());  // outlives every tensor
  return *a;
}

std::shared_ptr<void> allocate(size_t nbytes, int) {
  void* p = allocator().allocate(nbytes, 0);
  if (p == nullptr) return nullptr;
  return std::shared_ptr<void>(p, [](void* q) { allocator().deallocate(q); });
}

void copy(void* dst, const void* src, size_t bytes, fg::detail::CopyKind kind) {
  const cudaMemcpyKind k = kind == fg::detail::CopyKind::HostToDevice   ? cudaMemcpyHostToDevice
                           : kind == fg::detail::CopyKind::DeviceToHost ? cudaMemcpyDeviceToHost
                                                                        : cudaMemcpyDeviceToDevice;
  check(cudaMemcpy(dst, src, bytes, k), "copy_");
}

// The functions of cuBLAS the backend calls, from the library opened at the first product: the
// soname of the major version built against, as the dynamic loader finds it, else the toolkit's
// library directory of the build. (FG_NAME: the symbol behind cublas_v2.h's macros, as
// cublasCreate -> cublasCreate_v2.)
#define FG_NAME_(f) #f
#define FG_NAME(f) FG_NAME_(f)
#define FG_SONAME_(v) "libcublas.so." #v
#define FG_SONAME(v) FG_SONAME_(v)
#if defined(FUNCGEN_CUBLAS_DIR)
#define FG_CUBLAS_CANDIDATES FG_SONAME(CUBLAS_VER_MAJOR), FUNCGEN_CUBLAS_DIR "/" FG_SONAME(CUBLAS_VER_MAJOR)
#else
#define FG_CUBLAS_CANDIDATES FG_SONAME(CUBLAS_VER_MAJOR)
#endif
#define FG_CUBLAS_FUNCTION(member, f) decltype(&f) member = library.function<decltype(&f)>(FG_NAME(f))
struct Cublas {
  detail::SharedLibrary library{"matmul", "cuBLAS", {FG_CUBLAS_CANDIDATES}};
  FG_CUBLAS_FUNCTION(create, cublasCreate);
  FG_CUBLAS_FUNCTION(status_name, cublasGetStatusName);
  FG_CUBLAS_FUNCTION(sgemm, cublasSgemmStridedBatched);
  FG_CUBLAS_FUNCTION(dgemm, cublasDgemmStridedBatched);
};
const Cublas& cublas() {
  static const auto* api = new Cublas();  // never closed: handles made from it live to the end
  return *api;
}

cublasHandle_t blas() {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    const cublasStatus_t s = cublas().create(&h);
    if (s != CUBLAS_STATUS_SUCCESS) fg::detail::fail("matmul", "cuBLAS failed to start: ", cublas().status_name(s));
    return h;
  }();
  return handle;
}

cublasOperation_t op_of(detail::Op op) { return op == detail::Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

void gemm(ScalarType dtype, const detail::GemmPlan& p, const void* x, const void* y, void* c) {
  cublasStatus_t s;
  if (dtype == kDouble) {
    const double one = 1, zero = 0;
    s = cublas().dgemm(blas(), op_of(p.transa), op_of(p.transb), static_cast<int>(p.m), static_cast<int>(p.n),
                       static_cast<int>(p.k), &one, static_cast<const double*>(x), static_cast<int>(p.lda), p.stride_a,
                       static_cast<const double*>(y), static_cast<int>(p.ldb), p.stride_b, &zero,
                       static_cast<double*>(c), static_cast<int>(p.ldc), p.stride_c, static_cast<int>(p.batch));
  } else {
    const float one = 1, zero = 0;
    s = cublas().sgemm(blas(), op_of(p.transa), op_of(p.transb), static_cast<int>(p.m), static_cast<int>(p.n),
                       static_cast<int>(p.k), &one, static_cast<const float*>(x), static_cast<int>(p.lda), p.stride_a,
                       static_cast<const float*>(y), static_cast<int>(p.ldb), p.stride_b, &zero, static_cast<float*>(c),
                       static_cast<int>(p.ldc), p.stride_c, static_cast<int>(p.batch));
  }
  if (s != CUBLAS_STATUS_SUCCESS) fg::detail::fail("matmul", "cuBLAS failed: ", cublas().status_name(s));
}

fg::detail::DeviceBackend make_backend() {
  fg::detail::DeviceBackend be{};
  be.name = "cuda";
  be.unavailable_reason = [] { return probe().unavailable; };
  be.device_count = [] { return probe().count; };
  be.synchronize = [] { check(cudaDeviceSynchronize(), "cuda::synchronize"); };
  be.empty_cache = [] { allocator().empty_cache(); };
  be.allocate = allocate;
  be.memcpy = copy;
  be.gemm = gemm;
  be.load_libraries = [] { return cublas().library.path(); };
  set_kernel_entries(be);
  return be;
}

}  // namespace
}  // namespace fg::cuda

const fg::detail::DeviceBackend* fg::detail::builtin_cuda_backend() {
  static const DeviceBackend be = fg::cuda::make_backend();
  return &be;
}
