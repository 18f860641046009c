#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include <tessera/core/thread_pool.hpp>

namespace tessera {
namespace {

TEST(ThreadPool, PartitionIsStaticAndCoversTheRange) {
  EXPECT_EQ(ThreadPool::partition(0, 10, 1, 3), (std::vector<std::int64_t>{0, 4, 7, 10}));
  EXPECT_EQ(ThreadPool::partition(5, 6, 1, 8), (std::vector<std::int64_t>{5, 6}));
  EXPECT_EQ(ThreadPool::partition(0, 100, 40, 8), (std::vector<std::int64_t>{0, 34, 67, 100}));
  EXPECT_EQ(ThreadPool::partition(3, 3, 1, 4), (std::vector<std::int64_t>{3, 3}));
  for (int threads = 1; threads <= 9; ++threads)
    for (std::int64_t n : {1, 2, 7, 64, 1000, 1 << 20}) {
      auto b = ThreadPool::partition(-5, n, 3, threads);
      EXPECT_EQ(b.front(), -5);
      EXPECT_EQ(b.back(), n);
      EXPECT_LE(static_cast<int>(b.size()) - 1, threads);
      for (std::size_t i = 1; i < b.size(); ++i) EXPECT_GT(b[i], b[i - 1]);
    }
}

TEST(ThreadPool, EveryIndexRunsExactlyOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> hits(10007);
    for (int rep = 0; rep < 50; ++rep)
      pool.parallel_for(0, 10007, 1, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)]++;
      });
    for (auto& h : hits) ASSERT_EQ(h.load(), 50);
  }
}

// parallel_for's chunks are exactly partition()'s, whichever thread runs them; workers
// that went to sleep between calls (gaps longer than their spin) and a caller that blocks on
// a slow chunk both wake up.
TEST(ThreadPool, ChunksArePartitionsAndSleepersWake) {
  for (int threads : {2, 3, 5}) {
    ThreadPool pool(threads);
    for (std::int64_t n : {2, 3, 7, 100, 1001}) {
      for (std::int64_t grain : {1, 4, 40}) {
        const auto want = ThreadPool::partition(-3, n, grain, threads);
        std::vector<std::pair<std::int64_t, std::int64_t>> got(want.size() - 1, {0, 0});
        std::atomic<int> calls{0};
        pool.parallel_for(-3, n, grain, [&](std::int64_t b, std::int64_t e) {
          for (std::size_t i = 0; i + 1 < want.size(); ++i)
            if (want[i] == b) got[i] = {b, e};
          ++calls;
        });
        ASSERT_EQ(calls.load(), static_cast<int>(want.size()) - 1) << n << " " << grain;
        for (std::size_t i = 0; i + 1 < want.size(); ++i) EXPECT_EQ(got[i], std::make_pair(want[i], want[i + 1]));
      }
    }
    for (int rep = 0; rep < 3; ++rep) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // workers block on the futex
      std::atomic<int> ran{0};
      pool.parallel_for(0, threads, 1, [&](std::int64_t b, std::int64_t e) {
        if (b == threads - 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the caller blocks
        ran += static_cast<int>(e - b);
      });
      EXPECT_EQ(ran.load(), threads);
    }
  }
}

// A worker still asleep when the caller finishes its own chunk loses its chunk to the caller;
// whoever runs it, every chunk runs exactly once per call, with its own bounds, and a worker
// that wakes after the call (or after later calls) runs nothing stale. Calls alternate
// between ones the sleeping workers are likely to lose (an empty chunk 0 right after a pause)
// and back-to-back ones they win.
TEST(ThreadPool, ChunksOfLateWorkersRunOnceOnTheCaller) {
  for (int threads : {2, 4}) {
    ThreadPool pool(threads);
    const auto want = ThreadPool::partition(0, 4 * threads, 1, threads);
    for (int rep = 0; rep < 40; ++rep) {
      if (rep % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // workers block
      std::vector<std::atomic<int>> runs(want.size() - 1);
      std::vector<std::pair<std::int64_t, std::int64_t>> got(want.size() - 1, {0, 0});
      pool.parallel_for(0, 4 * threads, 1, [&](std::int64_t b, std::int64_t e) {
        for (std::size_t i = 0; i + 1 < want.size(); ++i)
          if (want[i] == b) {
            got[i] = {b, e};
            ++runs[i];
          }
        if (b != 0 && rep % 4 != 0) {  // workers' chunks take a little while
          volatile double x = 0;
          for (int k = 0; k < 2000; ++k) x = x + k;
        }
      });
      for (std::size_t i = 0; i + 1 < want.size(); ++i) {
        EXPECT_EQ(runs[i].load(), 1) << threads << " threads, call " << rep << ", chunk " << i;
        EXPECT_EQ(got[i], std::make_pair(want[i], want[i + 1]));
      }
    }
  }
}

// Every item is taken exactly once, whether a share's own thread runs it or another steals
// it from the back; a slow share loses items, a share run inline takes them all.
TEST(ThreadPool, WorkSharesHandOutEveryItemOnce) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (std::vector<std::int64_t> bounds :
         {std::vector<std::int64_t>{0, 0}, {0, 5, 5, 9}, {0, 1, 2, 3, 4}, {3, 40, 41, 100, 300}}) {
      bounds.resize(static_cast<std::size_t>(std::min<int>(threads, static_cast<int>(bounds.size()) - 1)) + 1);
      WorkShares work(bounds);
      const std::int64_t lo = bounds.front(), hi = bounds.back();
      std::vector<std::atomic<int>> hits(static_cast<std::size_t>(hi));
      std::atomic<int> stolen{0}, others_done{0};
      pool.parallel_for(0, work.shares(), 1, [&](std::int64_t b, std::int64_t e) {
        const int s = static_cast<int>(b);
        // Share 0 (when it has a thread of its own) starts only after the others ran out.
        if (s == 0 && e == 1)
          while (others_done.load() < work.shares() - 1) std::this_thread::yield();
        for (std::int64_t i; (i = work.next(s)) >= 0;) {
          hits[static_cast<std::size_t>(i)]++;
          if (s != 0 && i < bounds[1]) ++stolen;  // share 0's item, run by another thread
        }
        if (s != 0) ++others_done;
      });
      for (std::int64_t i = 0; i < hi; ++i) {
        EXPECT_EQ(hits[static_cast<std::size_t>(i)].load(), i >= lo ? 1 : 0) << i;
      }
      // The others took all of share 0's items.
      if (work.shares() > 1) {
        EXPECT_EQ(stolen.load(), bounds[1] - bounds[0]);
      }
    }
  }
}

TEST(ThreadPool, NestedCallsRunInlineWithoutDeadlock) {
  ThreadPool pool(3);
  std::atomic<std::int64_t> total{0};
  pool.parallel_for(0, 8, 1, [&](std::int64_t b, std::int64_t e) {
    EXPECT_TRUE(ThreadPool::in_parallel_region());
    for (std::int64_t i = b; i < e; ++i)
      pool.parallel_for(0, 100, 1, [&](std::int64_t b2, std::int64_t e2) {
        EXPECT_EQ(b2, 0);  // inline: one chunk, the whole range
        EXPECT_EQ(e2, 100);
        total += e2 - b2;
      });
  });
  EXPECT_EQ(total.load(), 800);
  EXPECT_FALSE(ThreadPool::in_parallel_region());
}

TEST(ThreadPool, ConcurrentCallersBothComplete) {
  ThreadPool pool(2);
  std::atomic<std::int64_t> sum{0};
  auto work = [&] {
    for (int rep = 0; rep < 200; ++rep)
      pool.parallel_for(0, 1000, 1, [&](std::int64_t b, std::int64_t e) { sum += e - b; });
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(sum.load(), 2 * 200 * 1000);
}

TEST(ThreadPool, ExceptionsPropagateToTheCaller) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.parallel_for(0, 30, 1,
                                 [](std::int64_t b, std::int64_t) {
                                   if (b >= 10) throw std::runtime_error("chunk failed");
                                 }),
               std::runtime_error);
  // The pool is usable afterwards.
  std::atomic<int> n{0};
  pool.parallel_for(0, 30, 1,
                    [&](std::int64_t b, std::int64_t e) { n += static_cast<int>(e - b); });
  EXPECT_EQ(n.load(), 30);
}

TEST(ThreadPool, ReduceIsBitwiseIdenticalForAnyThreadCount) {
  std::vector<float> x(300001);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(-1e3f, 1e3f);
  for (float& v : x) v = d(rng);
  auto sum = [&] {
    return parallel_reduce<float>(
        0, static_cast<std::int64_t>(x.size()), 1000, 0.0f,
        [&](std::int64_t b, std::int64_t e) {
          float s = 0;
          for (std::int64_t i = b; i < e; ++i) s += x[static_cast<std::size_t>(i)];
          return s;
        },
        [](float a, float b) { return a + b; });
  };
  set_num_threads(1);
  const float ref = sum();
  for (int t : {2, 3, 4, 7}) {
    set_num_threads(t);
    EXPECT_EQ(thread_pool().num_threads(), t);
    float s = sum();
    EXPECT_EQ(std::memcmp(&s, &ref, sizeof s), 0) << t << " threads";
  }
  set_num_threads(0);
  EXPECT_EQ(thread_pool().num_threads(), default_num_threads());
}

TEST(ThreadPool, EmptyRangeCallsNothing) {
  ThreadPool pool(2);
  bool called = false;
  pool.parallel_for(5, 5, 1, [&](std::int64_t, std::int64_t) { called = true; });
  pool.parallel_for(5, 2, 1, [&](std::int64_t, std::int64_t) { called = true; });
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace tessera
