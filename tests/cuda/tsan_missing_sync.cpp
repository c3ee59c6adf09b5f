// A kernel with its __syncthreads left out, run on CPU threads under ThreadSanitizer: the test
// passes only when TSan reports the race, showing that the TSan run of the kernel tests would
// catch a missing barrier in a real kernel.
#include <cstdio>
#include <numeric>
#include <vector>

#include "cuda/compat.h"

__global__ void reverse_without_barrier(const float* in, float* out) {
  __shared__ float tile[64];
  tile[threadIdx.x] = in[threadIdx.x];
  // (missing: __syncthreads();)
  out[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

int main() {
  std::vector<float> in(64), out(64);
  std::iota(in.begin(), in.end(), 0.0f);
  fg::cuda::launch(reverse_without_barrier, dim3(1), dim3(64), 0, nullptr, in.data(), out.data());
  std::printf("ran\n");
  return 0;
}
