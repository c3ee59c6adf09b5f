// CUDA kernels compile with nvcc for the GPU and, through this header, with the host compiler for
// the CPU: a launch then runs every block in turn with one OS thread per CUDA thread (threads kept
// between launches), `__syncthreads` is a barrier of the block's threads, warp shuffles exchange
// through a per-warp barrier, and `__shared__` variables are statics that the block's threads
// share (launches are serialized, so blocks never share them concurrently). Machines without a GPU
// run each kernel this way at small sizes against the CPU backend, and under ThreadSanitizer a
// missing `__syncthreads` is a reported race.
//
// Kernel sources use only: __global__/__device__/__host__/__forceinline__, threadIdx/blockIdx/
// blockDim/gridDim, __syncthreads, __shfl_down_sync/__shfl_xor_sync/__shfl_sync, __syncwarp,
// atomicAdd (float, double, unsigned long long), __shared__ arrays without initializers, FG_DYNAMIC_SHARED, and
// fg::cuda::launch to start them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "funcgen/runtime/error.h"

// Kernel code lives in fg::cuda::FG_CUDA_MODE (an inline namespace), so the GPU build and the CPU
// run of the same templates never share a symbol when both end up in one program (the tests link
// the CPU run beside the runtime's CUDA backend).
#if defined(__CUDACC__)
#define FG_CUDA_MODE gpu
#else
#define FG_CUDA_MODE host_run
#endif

#if defined(__CUDACC__)

#include <cuda_runtime.h>

// The dynamic shared memory of the launch, as an array of T.
#define FG_DYNAMIC_SHARED(T, name)                                 \
  extern __shared__ __align__(16) unsigned char fg_dynamic_smem[]; \
  T* name = reinterpret_cast<T*>(fg_dynamic_smem)

namespace fg::cuda {
inline namespace FG_CUDA_MODE {
// kernel<<<grid, block, shared_bytes, stream>>>(args...); a launch the driver refuses is an
// fg::Error (errors of the running kernel surface at the next synchronizing call).
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
            Args&&... args) {
  kernel<<<grid, block, shared_bytes, stream>>>(static_cast<Args&&>(args)...);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    fg::detail::fail("cuda", "kernel launch of ", grid.x, " x ", block.x, " threads failed: ", cudaGetErrorName(e),
                     ": ", cudaGetErrorString(e));
}
}  // namespace FG_CUDA_MODE
}  // namespace fg::cuda

#else  // the host compiler: the CPU run of the same kernels

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

using cudaStream_t = struct CUstream_st*;
constexpr int warpSize = 32;

namespace fg::cuda::sim {

// CUDA's dim3 under another name: CUDA's own is a different type of the same name, and both end
// up in one program where the tests link the CPU run beside the GPU backend.
struct Dim3 {
  unsigned x, y, z;
  constexpr Dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}  // NOLINT
};

// Sleeping on a 32-bit word until it changes (a Linux futex), and waking every sleeper. Waking
// needs no mutex, so n threads released at once make n wake-ups, not n turns at a lock.
inline void wait_while_equal(std::atomic<uint32_t>& word, uint32_t seen) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "the futex word is the atomic itself");
  while (word.load(std::memory_order_acquire) == seen)
    syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
}
inline void wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

// A reusable barrier whose participants may leave (a thread that returns from the kernel no
// longer holds the others at __syncthreads, as on the GPU). Arrivals are counted under a mutex;
// waiters sleep on the phase word and leave without taking the mutex again. The phase's
// release/acquire orders each thread's writes before the barrier with the reads after it, as
// ThreadSanitizer sees.
class Barrier {
 public:
  void reset(int count) {
    std::lock_guard<std::mutex> lock(mutex_);
    expected_ = count;
    arrived_ = 0;
  }
  void arrive_and_wait() {
    uint32_t phase;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      phase = phase_.load(std::memory_order_relaxed);
      if (++arrived_ == expected_) {
        advance();
        return;
      }
    }
    wait_while_equal(phase_, phase);
  }
  void arrive_and_drop() {
    std::lock_guard<std::mutex> lock(mutex_);
    --expected_;
    if (expected_ > 0 && arrived_ == expected_) advance();
  }

 private:
  void advance() {  // under mutex_
    arrived_ = 0;
    phase_.fetch_add(1, std::memory_order_release);
    wake_all(phase_);
  }
  std::mutex mutex_;
  std::atomic<uint32_t> phase_{0};
  int expected_ = 0, arrived_ = 0;
};

// The OS threads that run a launch's CUDA threads, started once and kept: a launch used to start
// and join one std::thread per CUDA thread (a clone, a fresh stack and its TLS each time: half of
// the CPU run's time). Every kept thread takes part in every launch, those past its block size
// only by saying they saw it, so that none can still be reading one launch's job when the next
// is set up. Never joined: parked threads end with the process.
class Workers {
 public:
  static Workers& get() {
    static auto* workers = new Workers();
    return *workers;
  }
  // job(context, t) on n threads at once, t in [0, n); returns when all are done. One launch at a time.
  void run(int n, void (*job)(void*, int), void* context) {
    for (; count_ < n; ++count_) std::thread(&Workers::loop, this, count_, generation_.load()).detach();
    job_ = job;
    context_ = context;
    n_ = n;
    remaining_.store(static_cast<uint32_t>(count_), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    wake_all(generation_);
    for (uint32_t left; (left = remaining_.load(std::memory_order_acquire)) != 0;) wait_while_equal(remaining_, left);
  }

 private:
  void loop(int t, uint32_t seen) {
    for (;;) {
      wait_while_equal(generation_, seen);
      seen = generation_.load(std::memory_order_acquire);
      if (t < n_) job_(context_, t);
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) wake_all(remaining_);
    }
  }
  int count_ = 0;  // threads started (only run() touches it)
  void (*job_)(void*, int) = nullptr;
  void* context_ = nullptr;
  int n_ = 0;
  std::atomic<uint32_t> generation_{0}, remaining_{0};
};

struct Warp {
  Barrier barrier;
  int size = 0;
  alignas(16) unsigned char slots[32][16];  // one value per lane, up to 16 bytes
};

// What each emulated CUDA thread sees.
struct ThreadState {
  Dim3 thread_idx, block_idx, block_dim, grid_dim;
  Barrier* block_barrier = nullptr;
  Warp* warp = nullptr;
  int lane = 0;
  unsigned char* dynamic_shared = nullptr;
};
inline thread_local ThreadState current;

inline std::mutex& launch_mutex() {
  static std::mutex m;
  return m;
}

template <typename T>
T shuffle(T value, int source_lane) {
  static_assert(sizeof(T) <= 16, "shuffle of a value wider than 16 bytes");
  Warp& w = *current.warp;
  std::memcpy(w.slots[current.lane], &value, sizeof(T));
  w.barrier.arrive_and_wait();
  T result = value;
  if (source_lane >= 0 && source_lane < w.size) std::memcpy(&result, w.slots[source_lane], sizeof(T));
  w.barrier.arrive_and_wait();  // no lane overwrites its slot before every lane has read
  return result;
}

// The start of a width-sized segment of the warp, which shuffles stay within.
inline int segment_start(int width) { return current.lane / width * width; }

// Runs kernel(params) for every block of the grid, one OS thread per CUDA thread of a block.
template <typename Params>
void run_grid(void (*kernel_entry)(Params&), Params& params, Dim3 grid, Dim3 block, size_t shared_bytes) {
  const long threads = static_cast<long>(block.x) * block.y * block.z;
  if (threads <= 0 || threads > 1024 || grid.x == 0 || grid.y == 0 || grid.z == 0 || block.z > 64 || grid.y > 65535 ||
      grid.z > 65535)
    fg::detail::fail("cuda", "kernel launch of ", grid.x, " x ", block.x,
                     " threads failed: cudaErrorInvalidConfiguration (CPU run)");
  std::lock_guard<std::mutex> serialize(launch_mutex());
  const int n = static_cast<int>(threads);
  const int warps = (n + warpSize - 1) / warpSize;
  Barrier block_barrier, end_of_block;
  std::unique_ptr<Warp[]> warp(new Warp[warps]);
  auto reset_barriers = [&] {
    block_barrier.reset(n);
    for (int w = 0; w < warps; ++w) {
      warp[w].size = w + 1 < warps ? warpSize : n - w * warpSize;
      warp[w].barrier.reset(warp[w].size);
    }
  };
  reset_barriers();
  end_of_block.reset(n);
  std::vector<unsigned char> dynamic(shared_bytes > 0 ? shared_bytes : 1);  // exact: ASan sees overruns
  auto body = [&](int tid) {
    ThreadState& s = current;
    s.thread_idx = Dim3(tid % block.x, tid / block.x % block.y, tid / (block.x * block.y));
    s.block_dim = block;
    s.grid_dim = grid;
    s.block_barrier = &block_barrier;
    s.warp = &warp[tid / warpSize];
    s.lane = tid % warpSize;
    s.dynamic_shared = dynamic.data();
    for (unsigned z = 0; z < grid.z; ++z)
      for (unsigned y = 0; y < grid.y; ++y)
        for (unsigned x = 0; x < grid.x; ++x) {
          s.block_idx = Dim3(x, y, z);
          kernel_entry(params);
          block_barrier.arrive_and_drop();
          s.warp->barrier.arrive_and_drop();
          end_of_block.arrive_and_wait();  // every thread is done with this block ...
          if (tid == 0) reset_barriers();
          end_of_block.arrive_and_wait();  // ... and the next one starts with fresh barriers
        }
  };
  auto job = [](void* b, int tid) { (*static_cast<decltype(body)*>(b))(tid); };
  Workers::get().run(n, job, &body);
}

}  // namespace fg::cuda::sim

#define dim3 ::fg::cuda::sim::Dim3
#define threadIdx (::fg::cuda::sim::current.thread_idx)
#define blockIdx (::fg::cuda::sim::current.block_idx)
#define blockDim (::fg::cuda::sim::current.block_dim)
#define gridDim (::fg::cuda::sim::current.grid_dim)
#define FG_DYNAMIC_SHARED(T, name) T* name = reinterpret_cast<T*>(::fg::cuda::sim::current.dynamic_shared)

inline void __syncthreads() { ::fg::cuda::sim::current.block_barrier->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { ::fg::cuda::sim::current.warp->barrier.arrive_and_wait(); }

template <typename T>
T __shfl_sync(unsigned, T value, int source, int width = warpSize) {
  using namespace ::fg::cuda::sim;
  return shuffle(value, segment_start(width) + source % width);
}
template <typename T>
T __shfl_down_sync(unsigned, T value, unsigned delta, int width = warpSize) {
  using namespace ::fg::cuda::sim;
  const int source = current.lane + static_cast<int>(delta);
  return shuffle(value, source < segment_start(width) + width ? source : current.lane);
}
template <typename T>
T __shfl_xor_sync(unsigned, T value, int mask, int width = warpSize) {
  using namespace ::fg::cuda::sim;
  const int source = current.lane ^ mask;
  return shuffle(value, source < segment_start(width) + width ? source : current.lane);
}

// Atomics through the compiler's builtins (ThreadSanitizer understands them).
template <typename T>
T fg_sim_atomic_add(T* address, T value) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits* raw = reinterpret_cast<Bits*>(address);
  Bits expected = __atomic_load_n(raw, __ATOMIC_RELAXED);
  for (;;) {
    T old;
    std::memcpy(&old, &expected, sizeof(T));
    const T updated = old + value;
    Bits desired;
    std::memcpy(&desired, &updated, sizeof(T));
    if (__atomic_compare_exchange_n(raw, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return old;
  }
}
inline float atomicAdd(float* address, float value) { return fg_sim_atomic_add(address, value); }
inline double atomicAdd(double* address, double value) { return fg_sim_atomic_add(address, value); }
inline unsigned long long atomicAdd(unsigned long long* address, unsigned long long value) {  // NOLINT(runtime/int)
  return __atomic_fetch_add(address, value, __ATOMIC_ACQ_REL);
}

namespace fg::cuda {
inline namespace FG_CUDA_MODE {
// The CPU run of kernel<<<grid, block, shared_bytes, stream>>>(args...): synchronous; the kernel
// receives its own copies of the arguments, as a launch passes them by value.
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t, Args&&... args) {
  using Tuple = std::tuple<Params...>;
  struct Call {
    void (*kernel)(Params...);
    Tuple params;
  };
  Call call{kernel, Tuple(static_cast<Args&&>(args)...)};
  sim::run_grid<Call>([](Call& c) { std::apply(c.kernel, Tuple(c.params)); }, call, grid, block, shared_bytes);
}
}  // namespace FG_CUDA_MODE
}  // namespace fg::cuda

#endif
