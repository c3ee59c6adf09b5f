// See caching_allocator.h.
#include "cuda/caching_allocator.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "funcgen/runtime/error.h"

namespace fg::cuda::detail {
namespace {

constexpr size_t kSmallRound = 512;
constexpr size_t kSmallMax = size_t{1} << 20;  // 1 MiB: the largest small class
constexpr size_t kLargeRound = size_t{2} << 20;

size_t round_up(size_t bytes, size_t granule) { return (bytes + granule - 1) / granule * granule; }

// Whether a cached block of `block` bytes may serve a request of class `size` (block >= size).
// Small requests take only small blocks, so at most 1 MiB idles in one; large ones at most twice
// their class, so a big block stays cached for a request that needs it.
bool reusable(size_t block, size_t size) { return size <= kSmallMax ? block <= kSmallMax : block - size <= size; }

void raise_peak(size_t current, size_t& peak) { peak = std::max(peak, current); }

}  // namespace

bool CachingAllocator::Cached::operator<(const Cached& o) const {
  return std::tie(stream, size, address) < std::tie(o.stream, o.size, o.address);
}

CachingAllocator::CachingAllocator(MemoryBackend& backend) : backend_(backend) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  empty_cache_locked();
}

size_t CachingAllocator::max_size() { return std::numeric_limits<size_t>::max() / kLargeRound * kLargeRound; }

size_t CachingAllocator::round_size(size_t bytes) {
  if (bytes > max_size()) fg::detail::fail("cuda_malloc", "a request of ", bytes, " bytes has no size class");
  if (bytes <= kSmallMax) return std::max(kSmallRound, round_up(bytes, kSmallRound));
  return round_up(bytes, kLargeRound);
}

void* CachingAllocator::allocate(size_t bytes, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.num_allocs;
  if (bytes <= max_size()) {
    const size_t size = round_size(bytes);
    if (void* p = take_cached(size, stream)) return p;
    if (void* p = alloc_from_backend(size)) {
      try {
        hold(p, size, stream);
      } catch (...) {  // no room to record it: give it back rather than leak device memory
        backend_.raw_free(p);
        ++stats_.num_backend_frees;
        stats_.reserved_bytes -= size;
        throw;
      }
      return p;
    }
  }
  ++stats_.num_failed_allocs;
  return nullptr;
}

// The best fit: the smallest cached block of the stream of at least `size` bytes.
void* CachingAllocator::take_cached(size_t size, StreamId stream) {
  const auto it = cached_.lower_bound(Cached{stream, size, 0});
  if (it == cached_.end() || it->stream != stream || !reusable(it->size, size)) return nullptr;
  void* p = reinterpret_cast<void*>(it->address);
  hold(p, it->size, stream);  // first, so the block stays cached if this throws
  cached_.erase(it);
  ++stats_.num_cache_hits;
  return p;
}

void* CachingAllocator::alloc_from_backend(size_t size) {
  void* p = backend_.raw_alloc(size);
  if (p == nullptr && !cached_.empty()) {  // cached blocks may be what the device lacks
    empty_cache_locked();
    ++stats_.num_oom_retries;
    p = backend_.raw_alloc(size);
  }
  if (p == nullptr) return nullptr;
  ++stats_.num_backend_allocs;
  stats_.reserved_bytes += size;
  raise_peak(stats_.reserved_bytes, stats_.peak_reserved_bytes);
  return p;
}

void CachingAllocator::hold(void* p, size_t size, StreamId stream) {
  held_.emplace(p, Held{size, stream});
  stats_.allocated_bytes += size;
  raise_peak(stats_.allocated_bytes, stats_.peak_allocated_bytes);
}

void CachingAllocator::deallocate(void* p) {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = held_.find(p);
  if (it == held_.end())
    fg::detail::fail("cuda_free", "pointer ", p,
                     " is not held from this allocator (never allocated, or already freed)");
  const Held h = it->second;
  cached_.insert(Cached{h.stream, h.size, reinterpret_cast<std::uintptr_t>(p)});  // first: p stays held if this throws
  held_.erase(it);
  stats_.allocated_bytes -= h.size;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  empty_cache_locked();
}

void CachingAllocator::empty_cache_locked() {
  while (!cached_.empty()) {
    const auto it = cached_.begin();
    backend_.raw_free(reinterpret_cast<void*>(it->address));
    ++stats_.num_backend_frees;
    stats_.reserved_bytes -= it->size;
    cached_.erase(it);
  }
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
  stats_.peak_reserved_bytes = stats_.reserved_bytes;
}

}  // namespace fg::cuda::detail
