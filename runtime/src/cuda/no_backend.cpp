// A build without the CUDA toolkit: no CUDA backend (device_backend() then says how to get one).
#include "device.h"

const fg::detail::DeviceBackend* fg::detail::builtin_cuda_backend() { return nullptr; }
