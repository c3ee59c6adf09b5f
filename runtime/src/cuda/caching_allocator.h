// Device memory for the CUDA backend, cached for reuse as PyTorch's CUDACachingAllocator does
// (simplified): cudaMalloc/cudaFree synchronize the device and cost far more than a kernel, so
// freed blocks are kept and handed out again. The logic is plain C++ over a MemoryBackend, so it
// is tested on machines without a GPU (tests/cuda/test_caching_allocator.cpp) against a fake.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <unordered_map>

namespace fg::cuda::detail {

using StreamId = std::uintptr_t;  // an opaque stream handle (a cudaStream_t cast); 0 is the default stream

// What the allocator asks of the device: the CUDA backend calls cudaMalloc/cudaFree, tests a fake.
class MemoryBackend {
 public:
  virtual ~MemoryBackend() = default;
  virtual void* raw_alloc(size_t bytes) = 0;  // nullptr when the device is out of memory
  virtual void raw_free(void* p) = 0;
};

// Byte counts are of whole blocks (the size class, or the larger cached block a request reused), so
// reserved_bytes - allocated_bytes is exactly what the cache holds.
struct AllocatorStats {
  size_t allocated_bytes = 0;       // in blocks users hold
  size_t peak_allocated_bytes = 0;  // since construction or reset_peak_stats()
  size_t reserved_bytes = 0;        // obtained from the backend and not yet given back (held or cached)
  size_t peak_reserved_bytes = 0;
  uint64_t num_allocs = 0;          // allocate() calls
  uint64_t num_cache_hits = 0;      // of those, served from the cache
  uint64_t num_backend_allocs = 0;  // successful raw_alloc calls
  uint64_t num_backend_frees = 0;   // raw_free calls
  uint64_t num_oom_retries = 0;     // raw_alloc failed, the cache was emptied and raw_alloc asked again
  uint64_t num_failed_allocs = 0;   // allocate() calls that returned nullptr
};

// Thread-safe (one mutex; the backend is called with it held, so a MemoryBackend needs no locking
// of its own).
//
// Free lists are per stream: a block freed on stream s may still be read or written by kernels
// queued on s, so only later work on s (ordered after them) may reuse it. Another stream would
// need an event to wait on, which this allocator does not record (no record_stream).
//
// Blocks are never split or merged: each is one raw_alloc. Reuse is best fit within the stream,
// and bounded so a small request does not pin a much larger block (see allocate).
class CachingAllocator {
 public:
  explicit CachingAllocator(MemoryBackend& backend);
  // Gives every cached block back to the backend. Blocks users still hold are left alone: their
  // owners may outlive the allocator, and freeing memory a kernel may still use is worse than a leak.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least round_size(bytes) (0 bytes included: a unique pointer of the smallest
  // class) for use on `stream`. A small request (class <= 1 MiB) reuses the smallest cached small
  // block of the stream that fits; a large one the smallest cached block of at most twice its class.
  // Otherwise the backend is asked; when it is out of memory and the cache holds blocks, the whole
  // cache (every stream) is emptied and it is asked once more. nullptr when the backend stays out
  // of memory, or when bytes has no size class (above max_size(): no device has that much).
  void* allocate(size_t bytes, StreamId stream);
  // Returns p to the cache of the stream it was allocated on. nullptr is a no-op; a pointer not
  // held from this allocator (unknown, or already freed) throws fg::Error ("fg::cuda_free: ...").
  void deallocate(void* p);
  // Gives every cached (unheld) block of every stream back to the backend.
  void empty_cache();

  AllocatorStats stats() const;
  void reset_peak_stats();  // peaks := current values

  // The size class of a request: sizes up to 1 MiB round up to a multiple of 512 bytes (at least
  // 512), larger ones to a multiple of 2 MiB. 512 keeps small tensors aligned for any vector
  // access while wasting little; 2 MiB is the device's large-page granule (cudaMalloc hands out
  // large blocks in it anyway), so the rounding costs no real memory and makes blocks of nearby
  // sizes interchangeable. Throws fg::Error for bytes > max_size().
  static size_t round_size(size_t bytes);
  static size_t max_size();  // the largest request that has a size class

 private:
  struct Held {
    size_t size;
    StreamId stream;
  };
  struct Cached {
    StreamId stream;
    size_t size;
    std::uintptr_t address;
    bool operator<(const Cached& o) const;  // by stream, then size, then address: best fit is a lower_bound
  };

  void* take_cached(size_t size, StreamId stream);
  void* alloc_from_backend(size_t size);
  void empty_cache_locked();
  void hold(void* p, size_t size, StreamId stream);

  MemoryBackend& backend_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, Held> held_;
  std::set<Cached> cached_;
  AllocatorStats stats_;
};

}  // namespace fg::cuda::detail
