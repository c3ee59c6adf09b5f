// Large blocks are cached for reuse: glibc returns allocations above 32 MiB to the kernel on
// free, so every large temporary would otherwise pay a fresh mmap and a page fault per 4 KiB
// (measured: a 16M-element add ran at 7 GB/s instead of memory speed). Small blocks are recycled
// per thread by size class: generated code allocates a result per op and frees it a few ops
// later, and glibc's aligned_alloc/free of 4-64 KiB blocks (above its fast bins: splitting for
// the alignment, consolidation on free) took a quarter of a 4096-element jvp(grad(f)).
#include "allocator.h"

#include <sys/mman.h>

#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define FG_RECYCLE_SMALL_BLOCKS 0  // AddressSanitizer sees every free (use after free stays caught)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FG_RECYCLE_SMALL_BLOCKS 0
#endif
#endif
#ifndef FG_RECYCLE_SMALL_BLOCKS
#define FG_RECYCLE_SMALL_BLOCKS 1
#endif

namespace fg::detail {
namespace {

constexpr size_t kCachedAbove = size_t{1} << 20;  // 1 MiB
constexpr size_t kGranule = size_t{2} << 20;      // sizes round up to 2 MiB (one huge page)
constexpr size_t kCacheLimit = size_t{1} << 30;   // at most 1 GiB kept idle

class BlockCache {
 public:
  void* take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.find(bytes);
      if (it != free_.end()) {
        void* p = it->second;
        free_.erase(it);
        cached_ -= bytes;
        return p;
      }
    }
    void* p = std::aligned_alloc(kGranule, bytes);
    if (p != nullptr) madvise(p, bytes, MADV_HUGEPAGE);  // fewer faults and TLB misses
    return p;
  }

  void give(void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Over the limit: release the oldest-sized blocks (the smallest first) to make room.
    while (cached_ + bytes > kCacheLimit && !free_.empty()) {
      auto it = free_.begin();
      std::free(it->second);
      cached_ -= it->first;
      free_.erase(it);
    }
    if (bytes > kCacheLimit) {
      std::free(p);
      return;
    }
    free_.emplace(bytes, p);
    cached_ += bytes;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  size_t cached_ = 0;
};

BlockCache& cache() {
  static BlockCache* c = new BlockCache();  // never destroyed: storage may outlive static teardown
  return *c;
}

// Size classes of the small blocks: multiples of 64 bytes up to 1 KiB, then four per power of two
// (at most 25% unused) up to kCachedAbove.
constexpr int kLinearClasses = 16;
constexpr int kClasses = kLinearClasses + 4 * 10;  // 1 KiB .. 1 MiB

int size_class(size_t bytes) {
  if (bytes <= 1024) return static_cast<int>((bytes + 63) / 64) - 1;
  int power = 10;  // 2^power < bytes <= 2^(power+1)
  while ((size_t{1} << (power + 1)) < bytes) ++power;
  const size_t quarter = size_t{1} << (power - 2);
  const int step = static_cast<int>((bytes - (size_t{1} << power) + quarter - 1) / quarter);  // 1..4
  return kLinearClasses + 4 * (power - 10) + step - 1;
}

size_t class_bytes(int c) {
  if (c < kLinearClasses) return static_cast<size_t>(c + 1) * 64;
  const int power = 10 + (c - kLinearClasses) / 4, step = (c - kLinearClasses) % 4 + 1;
  return (size_t{1} << power) + step * (size_t{1} << (power - 2));
}

// The blocks one thread freed, by class; bounded so that an idle thread keeps little.
class ThreadBlocks {
 public:
  static constexpr size_t kLimit = size_t{32} << 20;  // bytes kept per thread
  static constexpr size_t kPerClass = 64;             // blocks kept per class

  ~ThreadBlocks() {
    gone_ = true;
    for (auto& blocks : free_)
      for (void* p : blocks) std::free(p);
  }
  // The calling thread's blocks; nullptr while the thread exits (after its destructor ran).
  static ThreadBlocks* mine() {
    if (gone_) return nullptr;
    thread_local ThreadBlocks blocks;
    return &blocks;
  }
  void* take(int c) {
    std::vector<void*>& blocks = free_[static_cast<size_t>(c)];
    if (blocks.empty()) return nullptr;
    void* p = blocks.back();
    blocks.pop_back();
    kept_ -= class_bytes(c);
    return p;
  }
  bool give(void* p, int c) {
    std::vector<void*>& blocks = free_[static_cast<size_t>(c)];
    if (blocks.size() >= kPerClass || kept_ + class_bytes(c) > kLimit) return false;
    blocks.push_back(p);
    kept_ += class_bytes(c);
    return true;
  }

 private:
  static thread_local bool gone_;  // trivially destructible: still readable during thread exit
  std::array<std::vector<void*>, kClasses> free_;
  size_t kept_ = 0;
};
thread_local bool ThreadBlocks::gone_ = false;

std::shared_ptr<void> allocate_small(size_t nbytes) {
  const int c = size_class(nbytes == 0 ? 1 : nbytes);
  void* p = nullptr;
  if (FG_RECYCLE_SMALL_BLOCKS)
    if (ThreadBlocks* blocks = ThreadBlocks::mine()) p = blocks->take(c);
  if (p == nullptr) p = std::aligned_alloc(64, class_bytes(c));
  if (p == nullptr) return nullptr;
  return std::shared_ptr<void>(p, [c](void* q) {
    ThreadBlocks* blocks = FG_RECYCLE_SMALL_BLOCKS ? ThreadBlocks::mine() : nullptr;
    if (blocks == nullptr || !blocks->give(q, c)) std::free(q);
  });
}

}  // namespace

// Above the 47 bits of user address space of x86-64 and AArch64 (4-level page tables): no such
// block can be mapped. Refused here, not asked of the C library, as sanitizer runtimes abort on
// requests that large instead of returning null.
constexpr size_t kMaxBytes = size_t{1} << 47;

std::shared_ptr<void> allocate_cpu(size_t nbytes) {
  if (nbytes > kMaxBytes) return nullptr;
  if (nbytes < kCachedAbove) return allocate_small(nbytes);
  const size_t bytes = (nbytes + kGranule - 1) / kGranule * kGranule;
  void* p = cache().take(bytes);
  if (p == nullptr) return nullptr;
  return std::shared_ptr<void>(p, [bytes](void* q) { cache().give(q, bytes); });
}

}  // namespace fg::detail
