// cuda/caching_allocator.h on the CPU, against a fake device: size classes, per-stream reuse, best
// fit and its 2x bound, emptying the cache, the retry after running out of memory, exact
// statistics, misuse, and many threads at once.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cuda/caching_allocator.h"
#include "funcgen/runtime/error.h"

namespace {

using fg::cuda::detail::AllocatorStats;
using fg::cuda::detail::CachingAllocator;
using fg::cuda::detail::MemoryBackend;
using fg::cuda::detail::StreamId;

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;
constexpr StreamId kS1 = 0x1000, kS2 = 0x2000;

// A device of `capacity` bytes handing out distinct fake addresses (never dereferenced), so blocks
// of any size cost nothing. Records every call and fails the test on a free it did not hand out.
class FakeBackend : public MemoryBackend {
 public:
  explicit FakeBackend(size_t capacity = std::numeric_limits<size_t>::max()) : capacity_(capacity) {}

  void* raw_alloc(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++alloc_calls_;
    if (bytes > capacity_ - live_bytes_) {
      ++refused_;
      return nullptr;
    }
    void* p = reinterpret_cast<void*>(next_);
    next_ += bytes + 4096;  // a gap, so no block starts where another ends
    live_.emplace(p, bytes);
    live_bytes_ += bytes;
    return p;
  }

  void raw_free(void* p) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++free_calls_;
    const auto it = live_.find(p);
    if (it == live_.end()) {
      ADD_FAILURE() << "raw_free of " << p << ", which the backend does not hold";
      return;
    }
    live_bytes_ -= it->second;
    live_.erase(it);
    freed_.push_back(p);
  }

  size_t alloc_calls() const { return locked(alloc_calls_); }
  size_t free_calls() const { return locked(free_calls_); }
  size_t refused() const { return locked(refused_); }
  size_t live_bytes() const { return locked(live_bytes_); }
  size_t live_count() const { return locked(live_.size()); }
  bool is_live(void* p) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.count(p) != 0;
  }
  size_t size_of(void* p) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = live_.find(p);
    return it == live_.end() ? 0 : it->second;
  }
  std::multiset<void*> freed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {freed_.begin(), freed_.end()};
  }

 private:
  template <typename T>
  T locked(const T& v) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return v;
  }

  mutable std::mutex mutex_;
  size_t capacity_;
  std::uintptr_t next_ = std::uintptr_t{1} << 32;
  std::unordered_map<void*, size_t> live_;
  std::vector<void*> freed_;
  size_t live_bytes_ = 0, alloc_calls_ = 0, free_calls_ = 0, refused_ = 0;
};

// The allocator's counters agree with what the backend saw.
void expect_consistent(const CachingAllocator& a, const FakeBackend& fake) {
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.reserved_bytes, fake.live_bytes());
  EXPECT_EQ(s.num_backend_allocs, fake.alloc_calls() - fake.refused());
  EXPECT_EQ(s.num_backend_frees, fake.free_calls());
  EXPECT_LE(s.allocated_bytes, s.reserved_bytes);
  EXPECT_LE(s.allocated_bytes, s.peak_allocated_bytes);
  EXPECT_LE(s.reserved_bytes, s.peak_reserved_bytes);
}

TEST(CachingAllocator, SizeClasses) {
  EXPECT_EQ(CachingAllocator::round_size(0), 512u);
  EXPECT_EQ(CachingAllocator::round_size(1), 512u);
  EXPECT_EQ(CachingAllocator::round_size(512), 512u);
  EXPECT_EQ(CachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(CachingAllocator::round_size(1000 * KiB + 1), 1000 * KiB + 512);
  EXPECT_EQ(CachingAllocator::round_size(MiB - 1), MiB);
  EXPECT_EQ(CachingAllocator::round_size(MiB), MiB);  // still small: a whole 2 MiB would waste half
  EXPECT_EQ(CachingAllocator::round_size(MiB + 1), 2 * MiB);
  EXPECT_EQ(CachingAllocator::round_size(2 * MiB), 2 * MiB);
  EXPECT_EQ(CachingAllocator::round_size(2 * MiB + 1), 4 * MiB);
  EXPECT_EQ(CachingAllocator::round_size(10 * MiB + 1), 12 * MiB);
  EXPECT_EQ(CachingAllocator::round_size(100 * MiB), 100 * MiB);
  EXPECT_EQ(CachingAllocator::round_size(CachingAllocator::max_size()), CachingAllocator::max_size());
  EXPECT_THROW(CachingAllocator::round_size(CachingAllocator::max_size() + 1), fg::Error);
  EXPECT_THROW(CachingAllocator::round_size(std::numeric_limits<size_t>::max()), fg::Error);
  // Every class holds the request, is at least 512 and a multiple of it, and never more than one
  // granule above the request.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    const size_t bytes = rng() % (64 * MiB);
    const size_t c = CachingAllocator::round_size(bytes);
    const size_t granule = bytes <= MiB ? 512 : 2 * MiB;
    ASSERT_GE(c, bytes);
    ASSERT_GE(c, 512u);
    ASSERT_EQ(c % granule, 0u) << bytes;
    ASSERT_LT(c - bytes, granule) << bytes;
  }
}

TEST(CachingAllocator, ZeroBytesGivesUniquePointersOfTheSmallestClass) {
  FakeBackend fake;
  CachingAllocator a(fake);
  void* p = a.allocate(0, kS1);
  void* q = a.allocate(0, kS1);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(p, q);
  EXPECT_EQ(fake.size_of(p), 512u);
  EXPECT_EQ(a.stats().allocated_bytes, 1024u);
  a.deallocate(p);
  a.deallocate(q);
}

TEST(CachingAllocator, BackendIsAskedForTheSizeClass) {
  FakeBackend fake;
  CachingAllocator a(fake);
  void* small = a.allocate(1000, kS1);
  void* large = a.allocate(3 * MiB, kS1);
  EXPECT_EQ(fake.size_of(small), 1024u);
  EXPECT_EQ(fake.size_of(large), 4 * MiB);
  a.deallocate(small);
  a.deallocate(large);
}

TEST(CachingAllocator, FreedBlockIsReusedOnItsStream) {
  FakeBackend fake;
  CachingAllocator a(fake);
  void* p = a.allocate(1000, kS1);
  a.deallocate(p);
  EXPECT_EQ(a.allocate(700, kS1), p);  // same class (1024): no new backend call
  EXPECT_EQ(fake.alloc_calls(), 1u);
  EXPECT_EQ(fake.free_calls(), 0u);
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.num_allocs, 2u);
  EXPECT_EQ(s.num_cache_hits, 1u);
  EXPECT_EQ(s.num_backend_allocs, 1u);
}

TEST(CachingAllocator, FreedBlockIsNotReusedOnAnotherStream) {
  FakeBackend fake;
  CachingAllocator a(fake);
  // Both a higher and a lower stream id than the block's, so ordering cannot hide a missed check.
  void* p = a.allocate(4 * MiB, kS2);
  a.deallocate(p);
  void* q = a.allocate(4 * MiB, kS1);  // kernels queued on kS2 may still use p
  EXPECT_NE(q, p);
  void* r = a.allocate(4 * MiB, 0);  // nor on the default stream
  EXPECT_NE(r, p);
  void* s = a.allocate(4 * MiB, 0x3000);
  EXPECT_NE(s, p);
  EXPECT_EQ(fake.alloc_calls(), 4u);
  EXPECT_EQ(a.stats().num_cache_hits, 0u);
  // ... and a block freed on kS1 goes back to kS1's list, not kS2's.
  a.deallocate(q);
  EXPECT_EQ(a.allocate(4 * MiB, kS2), p);
  EXPECT_EQ(a.allocate(4 * MiB, kS1), q);
  EXPECT_EQ(fake.alloc_calls(), 4u);
}

TEST(CachingAllocator, ReusesTheBestFittingCachedBlock) {
  FakeBackend fake;
  CachingAllocator a(fake);
  // Allocated out of size order, so neither address nor insertion order can stand in for size.
  void* b8 = a.allocate(8 * MiB, kS1);
  void* b4 = a.allocate(4 * MiB, kS1);
  void* b6 = a.allocate(6 * MiB, kS1);
  void* other = a.allocate(6 * MiB, kS2);  // the best fit for 5 MiB, but on another stream
  for (void* p : {b6, other, b8, b4}) a.deallocate(p);
  EXPECT_EQ(a.allocate(5 * MiB, kS1), b6);  // class 6 MiB
  EXPECT_EQ(a.allocate(3 * MiB, kS1), b4);  // class 4 MiB
  EXPECT_EQ(a.allocate(7 * MiB, kS1), b8);  // class 8 MiB
  EXPECT_EQ(fake.alloc_calls(), 4u);

  void* s2k = a.allocate(2 * KiB, kS1);
  void* s512 = a.allocate(512, kS1);
  void* s1k = a.allocate(KiB, kS1);
  for (void* p : {s512, s2k, s1k}) a.deallocate(p);
  EXPECT_EQ(a.allocate(600, kS1), s1k);  // class 1 KiB
  EXPECT_EQ(a.allocate(1, kS1), s512);
  EXPECT_EQ(a.allocate(1500, kS1), s2k);
  EXPECT_EQ(fake.alloc_calls(), 7u);
  EXPECT_EQ(a.stats().num_cache_hits, 6u);
}

TEST(CachingAllocator, LargeRequestReusesABlockOfAtMostTwiceItsClass) {
  FakeBackend fake;
  CachingAllocator a(fake);
  void* b10 = a.allocate(10 * MiB, kS1);
  a.deallocate(b10);
  void* p = a.allocate(4 * MiB, kS1);  // 10 MiB > 2 x 4 MiB: a new block
  EXPECT_NE(p, b10);
  EXPECT_EQ(fake.alloc_calls(), 2u);
  EXPECT_EQ(a.allocate(5 * MiB, kS1), b10);  // class 6 MiB, 10 MiB <= 12 MiB
  EXPECT_EQ(fake.alloc_calls(), 2u);

  void* b8 = a.allocate(8 * MiB, kS1);
  a.deallocate(b8);
  EXPECT_EQ(a.allocate(4 * MiB, kS1), b8);  // exactly twice: reused
  // The held block counts whole: the 8 MiB block, not the 4 MiB asked for.
  EXPECT_EQ(a.stats().allocated_bytes, 4 * MiB + 10 * MiB + 8 * MiB);
}

TEST(CachingAllocator, SmallRequestReusesOnlySmallBlocks) {
  FakeBackend fake;
  CachingAllocator a(fake);
  void* large = a.allocate(2 * MiB, kS1);
  void* small = a.allocate(MiB, kS1);
  a.deallocate(large);
  a.deallocate(small);
  EXPECT_EQ(a.allocate(512, kS1), small);  // any cached small block fits a small request
  void* p = a.allocate(MiB, kS1);          // the 2 MiB block is large: not for a small request
  EXPECT_NE(p, large);
  EXPECT_EQ(fake.alloc_calls(), 3u);
  EXPECT_EQ(a.allocate(2 * MiB, kS1), large);
}

TEST(CachingAllocator, EmptyCacheFreesExactlyTheCachedBlocks) {
  FakeBackend fake;
  CachingAllocator a(fake);
  void* p = a.allocate(3 * MiB, kS1);
  void* q = a.allocate(1000, kS1);
  void* r = a.allocate(5000, kS2);
  void* s = a.allocate(7 * MiB, kS2);
  a.deallocate(p);
  a.deallocate(r);
  EXPECT_EQ(a.stats().reserved_bytes, 4 * MiB + 1024 + 5120 + 8 * MiB);
  a.empty_cache();
  EXPECT_EQ(fake.freed(), (std::multiset<void*>{p, r}));
  EXPECT_TRUE(fake.is_live(q));
  EXPECT_TRUE(fake.is_live(s));
  AllocatorStats st = a.stats();
  EXPECT_EQ(st.reserved_bytes, 1024 + 8 * MiB);
  EXPECT_EQ(st.allocated_bytes, 1024 + 8 * MiB);
  EXPECT_EQ(st.num_backend_frees, 2u);
  expect_consistent(a, fake);
  a.empty_cache();  // nothing cached: nothing freed
  EXPECT_EQ(fake.free_calls(), 2u);
  // Blocks held through empty_cache are cached as usual when freed.
  a.deallocate(q);
  EXPECT_EQ(a.allocate(1000, kS1), q);
  a.deallocate(s);
  a.empty_cache();
  EXPECT_EQ(fake.freed(), (std::multiset<void*>{p, r, s}));
  EXPECT_EQ(a.stats().reserved_bytes, 1024u);
}

TEST(CachingAllocator, OutOfMemoryEmptiesTheCacheOfEveryStreamAndRetries) {
  FakeBackend fake(10 * MiB);
  CachingAllocator a(fake);
  void* p = a.allocate(6 * MiB, kS1);
  a.deallocate(p);
  // 6 + 8 > 10: refused; freeing kS1's cached block makes room for kS2's request.
  void* q = a.allocate(8 * MiB, kS2);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(fake.refused(), 1u);
  EXPECT_EQ(fake.freed(), (std::multiset<void*>{p}));
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.num_oom_retries, 1u);
  EXPECT_EQ(s.num_failed_allocs, 0u);
  EXPECT_EQ(s.num_backend_allocs, 2u);
  EXPECT_EQ(s.reserved_bytes, 8 * MiB);
  EXPECT_EQ(s.peak_reserved_bytes, 8 * MiB);  // p was given back before q was reserved
  EXPECT_EQ(s.allocated_bytes, 8 * MiB);
  expect_consistent(a, fake);
  a.deallocate(q);
}

TEST(CachingAllocator, OutOfMemoryGivesNullWhenEmptyingTheCacheIsNotEnough) {
  FakeBackend fake(10 * MiB);
  CachingAllocator a(fake);
  void* held = a.allocate(6 * MiB, kS1);
  void* cached = a.allocate(2 * MiB, kS1);
  a.deallocate(cached);
  EXPECT_EQ(a.allocate(6 * MiB, kS1), nullptr);  // 6 + 6 > 10 even with the cache emptied
  EXPECT_EQ(fake.refused(), 2u);                 // asked, then asked again after emptying
  EXPECT_EQ(fake.freed(), (std::multiset<void*>{cached}));
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.num_oom_retries, 1u);
  EXPECT_EQ(s.num_failed_allocs, 1u);
  EXPECT_EQ(s.reserved_bytes, 6 * MiB);
  EXPECT_EQ(s.allocated_bytes, 6 * MiB);
  // With nothing cached there is nothing to retry with: one refusal, a failure, no retry.
  EXPECT_EQ(a.allocate(6 * MiB, kS1), nullptr);
  EXPECT_EQ(fake.refused(), 3u);
  s = a.stats();
  EXPECT_EQ(s.num_oom_retries, 1u);
  EXPECT_EQ(s.num_failed_allocs, 2u);
  EXPECT_EQ(s.num_allocs, 4u);
  // The allocator still works once there is room.
  void* p = a.allocate(4 * MiB, kS2);
  EXPECT_NE(p, nullptr);
  expect_consistent(a, fake);
  a.deallocate(p);
  a.deallocate(held);
}

TEST(CachingAllocator, RequestWithoutASizeClassGivesNull) {
  FakeBackend fake;
  CachingAllocator a(fake);
  EXPECT_EQ(a.allocate(std::numeric_limits<size_t>::max(), kS1), nullptr);
  EXPECT_EQ(a.allocate(CachingAllocator::max_size() + 1, kS1), nullptr);
  EXPECT_EQ(fake.alloc_calls(), 0u);
  EXPECT_EQ(a.stats().num_failed_allocs, 2u);
}

TEST(CachingAllocator, DestructorFreesTheCachedBlocksOnly) {
  FakeBackend fake;
  void* kept = nullptr;
  std::multiset<void*> cached;
  {
    CachingAllocator a(fake);
    kept = a.allocate(3 * MiB, kS1);
    void* p = a.allocate(100, kS1);
    void* q = a.allocate(5 * MiB, kS2);
    a.deallocate(p);
    a.deallocate(q);
    cached = {p, q};
    EXPECT_EQ(fake.free_calls(), 0u);
  }
  EXPECT_EQ(fake.freed(), cached);
  EXPECT_EQ(fake.live_count(), 1u);  // a block users still hold is theirs, not the allocator's
  EXPECT_TRUE(fake.is_live(kept));
}

TEST(CachingAllocator, StatisticsAfterASequence) {
  FakeBackend fake;
  CachingAllocator a(fake);
  void* p = a.allocate(1000, kS1);     // 1 KiB
  void* q = a.allocate(3 * MiB, kS1);  // 4 MiB
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 4 * MiB + 1024);
  EXPECT_EQ(s.reserved_bytes, 4 * MiB + 1024);
  EXPECT_EQ(s.peak_allocated_bytes, 4 * MiB + 1024);
  EXPECT_EQ(s.peak_reserved_bytes, 4 * MiB + 1024);

  a.deallocate(q);
  s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 1024u);
  EXPECT_EQ(s.reserved_bytes, 4 * MiB + 1024);
  EXPECT_EQ(s.peak_allocated_bytes, 4 * MiB + 1024);

  void* r = a.allocate(3 * MiB + 512 * KiB, kS1);  // reuses q's 4 MiB block
  EXPECT_EQ(r, q);
  void* t = a.allocate(MiB, kS2);  // 1 MiB, new
  s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 5 * MiB + 1024);
  EXPECT_EQ(s.reserved_bytes, 5 * MiB + 1024);
  EXPECT_EQ(s.peak_allocated_bytes, 5 * MiB + 1024);
  EXPECT_EQ(s.peak_reserved_bytes, 5 * MiB + 1024);

  for (void* x : {p, r, t}) a.deallocate(x);
  a.reset_peak_stats();
  s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.peak_allocated_bytes, 0u);
  EXPECT_EQ(s.reserved_bytes, 5 * MiB + 1024);
  EXPECT_EQ(s.peak_reserved_bytes, 5 * MiB + 1024);

  a.empty_cache();
  void* u = a.allocate(2 * MiB, kS1);
  s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 2 * MiB);
  EXPECT_EQ(s.peak_allocated_bytes, 2 * MiB);
  EXPECT_EQ(s.reserved_bytes, 2 * MiB);
  EXPECT_EQ(s.peak_reserved_bytes, 5 * MiB + 1024);  // the peak outlives empty_cache until reset
  a.reset_peak_stats();
  EXPECT_EQ(a.stats().peak_reserved_bytes, 2 * MiB);

  s = a.stats();
  EXPECT_EQ(s.num_allocs, 5u);
  EXPECT_EQ(s.num_cache_hits, 1u);
  EXPECT_EQ(s.num_backend_allocs, 4u);
  EXPECT_EQ(s.num_backend_frees, 3u);
  EXPECT_EQ(s.num_oom_retries, 0u);
  EXPECT_EQ(s.num_failed_allocs, 0u);
  expect_consistent(a, fake);
  a.deallocate(u);
}

std::string printed(const void* p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

TEST(CachingAllocator, DeallocateOfAPointerNotHeldThrows) {
  FakeBackend fake;
  CachingAllocator a(fake);
  a.deallocate(nullptr);  // a no-op
  int local = 0;
  try {
    a.deallocate(&local);
    ADD_FAILURE() << "no throw for an unknown pointer";
  } catch (const fg::Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("fg::cuda_free: ", 0), 0u) << what;
    EXPECT_NE(what.find(printed(&local)), std::string::npos) << what;
  }
  void* p = a.allocate(100, kS1);
  a.deallocate(p);
  EXPECT_THROW(a.deallocate(p), fg::Error);  // a double free
  // An interior pointer is not the block.
  void* q = a.allocate(4 * KiB, kS1);
  EXPECT_THROW(a.deallocate(static_cast<char*>(q) + 16), fg::Error);
  // Nothing changed by the failed calls.
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 4 * KiB);
  EXPECT_EQ(s.reserved_bytes, 4 * KiB + 512);
  a.deallocate(q);
  expect_consistent(a, fake);
}

TEST(CachingAllocator, ConcurrentAllocateAndDeallocateKeepCountsConsistent) {
  FakeBackend fake;
  CachingAllocator a(fake);
  constexpr int kThreads = 4, kIters = 3000;
  std::mutex live_mutex;
  std::set<void*> live;  // every block held by some thread: a pointer handed out twice shows here
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<void*> mine;
      for (int i = 0; i < kIters; ++i) {
        if (mine.size() < 8 && rng() % 3 != 0) {
          const size_t bytes = rng() % 2 ? rng() % (2 * MiB) : rng() % (16 * MiB);
          const StreamId stream = rng() % 2 ? StreamId(t + 1) : StreamId(0);  // own stream, or the shared default
          void* p = a.allocate(bytes, stream);
          ASSERT_NE(p, nullptr);
          std::lock_guard<std::mutex> lock(live_mutex);
          ASSERT_TRUE(live.insert(p).second) << p << " handed out while held";
          mine.push_back(p);
        } else if (!mine.empty()) {
          const size_t k = rng() % mine.size();
          void* p = mine[k];
          mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(k));
          {
            std::lock_guard<std::mutex> lock(live_mutex);
            live.erase(p);
          }
          a.deallocate(p);
        }
        if (i % 500 == 499) a.empty_cache();
      }
      for (void* p : mine) {
        {
          std::lock_guard<std::mutex> lock(live_mutex);
          live.erase(p);
        }
        a.deallocate(p);
      }
    });
  }
  for (auto& th : threads) th.join();
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.num_cache_hits + s.num_backend_allocs, s.num_allocs);
  EXPECT_GT(s.num_cache_hits, 0u);
  EXPECT_EQ(s.num_failed_allocs, 0u);
  expect_consistent(a, fake);
  a.empty_cache();
  EXPECT_EQ(a.stats().reserved_bytes, 0u);
  EXPECT_EQ(fake.live_count(), 0u);
  EXPECT_EQ(fake.free_calls(), fake.alloc_calls());
}

}  // namespace
