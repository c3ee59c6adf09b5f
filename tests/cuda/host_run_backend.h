// The CUDA backend run on the CPU: the runtime's CUDA kernel table (cuda/kernel_table.h) compiled
// by the host compiler, so every kernel runs on CPU threads through cuda/compat.h; device memory
// is host memory handed out by the same caching allocator the GPU backend uses; products go
// through the GEMM plan to the CPU reference of cuBLAS. Installed, it makes kCUDA tensors work on
// a machine without a GPU, so the tests of device dispatch, copies and kernels run everywhere.
#pragma once

#include "device.h"

namespace fg::testing {

const fg::detail::DeviceBackend& host_run_backend();
// Statistics of the host-run allocator (for the tests that check tensors give memory back).
struct HostRunMemory {
  size_t allocated_bytes;
  size_t reserved_bytes;
};
HostRunMemory host_run_memory();

// Installs the host-run backend for kCUDA while alive.
class HostRunDevice {
 public:
  HostRunDevice() { fg::detail::set_cuda_backend_for_testing(&host_run_backend()); }
  ~HostRunDevice() { fg::detail::set_cuda_backend_for_testing(nullptr); }
  HostRunDevice(const HostRunDevice&) = delete;
  HostRunDevice& operator=(const HostRunDevice&) = delete;
};

}  // namespace fg::testing
