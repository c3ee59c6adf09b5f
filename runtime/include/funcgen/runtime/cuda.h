// fg::cuda: whether CUDA tensors can be used here, and the calls torch.cuda has for the device.
// Tensors move with x.to(fg::kCUDA) / x.cuda() / x.cpu(), factories take
// TensorOptions().device(fg::kCUDA), and every op runs where its operands are.
#pragma once

#include <string>

namespace fg::cuda {

// Whether this build has the CUDA backend and a device and driver to run it.
bool is_available();
// CUDA devices visible (0 without the backend, a driver or a device).
int device_count();
// Why CUDA tensors cannot be used here ("" when they can): no CUDA support in this build, or the
// CUDA runtime's error (e.g. "cudaErrorNoDevice: no CUDA-capable device is detected").
std::string unavailable_reason();
// Waits for every kernel queued so far; throws fg::Error when CUDA is unavailable.
void synchronize();
// Returns the device memory the caching allocator keeps for reuse to the driver.
void empty_cache();

}  // namespace fg::cuda
