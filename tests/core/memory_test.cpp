#include <thread>

#include <gtest/gtest.h>

#include <tessera/core/memory.hpp>

#include "test_util.hpp"

namespace tessera {
namespace {

// Host memory that fails once `budget` bytes are handed out: exercises the out-of-memory path.
class LimitedMemory final : public RawMemory {
 public:
  explicit LimitedMemory(std::size_t budget) : inner_(make_host_raw_memory()), budget_(budget) {}
  Result<void*> allocate(std::size_t bytes, std::size_t alignment) override {
    if (used_ + bytes > budget_) return out_of_memory("test budget exhausted");
    used_ += bytes;
    return inner_->allocate(bytes, alignment);
  }
  void free(void* p, std::size_t bytes) override {
    used_ -= bytes;
    inner_->free(p, bytes);
  }
  DeviceLoc device() const override { return {}; }

 private:
  std::unique_ptr<RawMemory> inner_;
  std::size_t budget_, used_ = 0;
};

TEST(CachingAllocator, SizeClasses) {
  EXPECT_EQ(CachingAllocator::size_class(1), 64u);
  EXPECT_EQ(CachingAllocator::size_class(64), 64u);
  EXPECT_EQ(CachingAllocator::size_class(65), 128u);
  EXPECT_EQ(CachingAllocator::size_class(4096), 4096u);
  EXPECT_EQ(CachingAllocator::size_class(4097), 5120u);
  EXPECT_EQ(CachingAllocator::size_class(1 << 20), 1u << 20);
  EXPECT_EQ(CachingAllocator::size_class((1 << 20) + 1), (1u << 20) + (1u << 18));
  for (std::size_t b = 1; b < (1 << 22); b = b * 3 + 1) {
    std::size_t c = CachingAllocator::size_class(b);
    EXPECT_GE(c, b);
    EXPECT_LE(c, b + b / 4 + 64);
    EXPECT_EQ(c % 64, 0u);
  }
}

TEST(CachingAllocator, ReusesBlocksAndKeepsStatistics) {
  auto alloc = CachingAllocator::create(make_host_raw_memory());
  void* first;
  {
    auto b = testing::value_or_fail(alloc->allocate(1000));
    first = b->data();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % kDefaultAlignment, 0u);
    EXPECT_EQ(b->size(), 1000u);
    MemoryStats s = alloc->stats();
    EXPECT_EQ(s.bytes_in_use, 1024u);
    EXPECT_EQ(s.system_allocations, 1u);
  }
  MemoryStats s = alloc->stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.bytes_cached, 1024u);
  EXPECT_EQ(s.peak_bytes_in_use, 1024u);
  auto again = testing::value_or_fail(alloc->allocate(1010));  // same class
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(alloc->stats().cache_hits, 1u);
  auto other = testing::value_or_fail(alloc->allocate(5000));
  EXPECT_EQ(alloc->stats().peak_bytes_in_use, 1024u + 5120u);
  other.reset();
  alloc->trim();
  s = alloc->stats();
  EXPECT_EQ(s.bytes_cached, 0u);
  EXPECT_EQ(s.system_frees, 1u);
  EXPECT_EQ(s.allocations, 3u);
}

TEST(CachingAllocator, ZeroBytesAndOutOfMemory) {
  auto alloc = CachingAllocator::create(std::make_unique<LimitedMemory>(1 << 16));
  auto zero = testing::value_or_fail(alloc->allocate(0));
  EXPECT_EQ(zero->data(), nullptr);
  EXPECT_EQ(zero->size(), 0u);
  auto big = alloc->allocate(1 << 20);
  ASSERT_FALSE(big.is_ok());
  EXPECT_EQ(big.status().code(), StatusCode::kOutOfMemory);
  auto absurd = alloc->allocate(std::size_t{1} << 60);
  ASSERT_FALSE(absurd.is_ok());
  EXPECT_NE(absurd.status().message().find("2^48"), std::string::npos);
  // A cached block is given back to the system when a new request would not fit otherwise.
  { auto a = testing::value_or_fail(alloc->allocate(40000)); }
  EXPECT_EQ(alloc->stats().bytes_cached, 40960u);
  auto b = alloc->allocate(50000);
  EXPECT_TRUE(b.is_ok()) << b.status().to_string();
}

TEST(CachingAllocator, CacheLimitSendsFreesToTheSystem) {
  auto alloc = CachingAllocator::create(make_host_raw_memory(), {.max_cached_bytes = 4096});
  {
    auto a = testing::value_or_fail(alloc->allocate(3000));
    auto b = testing::value_or_fail(alloc->allocate(3000));
  }
  MemoryStats s = alloc->stats();
  EXPECT_EQ(s.bytes_cached, 3008u);
  EXPECT_EQ(s.system_frees, 1u);
}

TEST(CachingAllocator, ThreadSafe) {
  auto alloc = CachingAllocator::create(make_host_raw_memory());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        auto b = alloc->allocate(static_cast<std::size_t>(64 * (1 + (i + t) % 7)));
        ASSERT_TRUE(b.is_ok());
        static_cast<char*>((*b)->data())[0] = 1;
      }
    });
  for (auto& t : threads) t.join();
  MemoryStats s = alloc->stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.allocations, 8000u);
}

TEST(Buffer, BuffersKeepTheirAllocatorAlive) {
  std::shared_ptr<Buffer> b;
  {
    auto alloc = CachingAllocator::create(make_host_raw_memory());
    b = testing::value_or_fail(alloc->allocate(128));
  }
  static_cast<char*>(b->data())[127] = 1;  // still valid: the allocator lives until b goes
  b.reset();
}

}  // namespace
}  // namespace tessera
