// sin, cos and tan on the GPU: the one kernel allowed local memory (the 28-byte stack array of
// CUDA's huge-argument reduction, used only for |x| beyond about 1e5), so it is compiled apart
// with spills still errors but without -warn-lmem-usage (runtime/CMakeLists.txt).
#include "cuda/kernels/elementwise.cuh"

namespace fg::cuda {
inline namespace FG_CUDA_MODE {
template void launch_unary<float, true>(UnaryKind, int64_t, const OffsetCalc<2>&, char*, const char*, cudaStream_t);
template void launch_unary<double, true>(UnaryKind, int64_t, const OffsetCalc<2>&, char*, const char*, cudaStream_t);
}  // namespace FG_CUDA_MODE
}  // namespace fg::cuda
