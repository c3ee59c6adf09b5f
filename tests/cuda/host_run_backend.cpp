// See host_run_backend.h. This translation unit is compiled by the host compiler, so
// cuda/kernel_table.h's kernels are the CPU runs of cuda/compat.h.
#include "host_run_backend.h"

#include <cstdlib>
#include <cstring>

#include "cuda/caching_allocator.h"
#include "cuda/gemm_plan.h"
#include "cuda/kernel_table.h"

namespace fg::testing {
namespace {

class HostMemory : public fg::cuda::detail::MemoryBackend {
 public:
  void* raw_alloc(size_t bytes) override { return std::aligned_alloc(256, (bytes + 255) / 256 * 256); }
  void raw_free(void* p) override { std::free(p); }
};

fg::cuda::detail::CachingAllocator& allocator() {
  static auto* a = new fg::cuda::detail::CachingAllocator(*new HostMemory());  // outlives every tensor
  return *a;
}

std::shared_ptr<void> allocate(size_t nbytes, int) {
  void* p = allocator().allocate(nbytes, 0);
  if (p == nullptr) return nullptr;
  return std::shared_ptr<void>(p, [](void* q) { allocator().deallocate(q); });
}

void copy(void* dst, const void* src, size_t bytes, fg::detail::CopyKind) { std::memcpy(dst, src, bytes); }

void gemm(ScalarType dtype, const fg::cuda::detail::GemmPlan& plan, const void* x, const void* y, void* c) {
  if (dtype == kDouble)
    return fg::cuda::detail::reference_gemm<double>(plan, static_cast<const double*>(x), static_cast<const double*>(y),
                                                    static_cast<double*>(c));
  fg::cuda::detail::reference_gemm<float>(plan, static_cast<const float*>(x), static_cast<const float*>(y),
                                          static_cast<float*>(c));
}

fg::detail::DeviceBackend make_backend() {
  fg::detail::DeviceBackend be{};
  be.name = "cuda (CPU run)";
  be.unavailable_reason = [] { return std::string(); };
  be.device_count = [] { return 1; };
  be.synchronize = [] {};
  be.empty_cache = [] { allocator().empty_cache(); };
  be.allocate = allocate;
  be.memcpy = copy;
  be.gemm = gemm;
  fg::cuda::set_kernel_entries(be);
  return be;
}

}  // namespace

const fg::detail::DeviceBackend& host_run_backend() {
  static const fg::detail::DeviceBackend be = make_backend();
  return be;
}

HostRunMemory host_run_memory() {
  const auto s = allocator().stats();
  return HostRunMemory{s.allocated_bytes, s.reserved_bytes};
}

}  // namespace fg::testing
