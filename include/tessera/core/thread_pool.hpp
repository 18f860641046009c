// The CPU thread pool every library runs its parallel loops on.
//
// parallel_for splits [begin, end) into at most num_threads() contiguous chunks with a
// static, deterministic partition: the same range and thread count always give the same
// chunks. The calling thread works too, and once its own chunk is done it runs any chunk
// whose worker has not started yet (a worker descheduled or still waking up no longer holds
// the call up), so a chunk may run on any thread. A parallel_for issued from inside a pool task (or
// while another thread is using the pool) runs inline on the caller, so nesting never
// oversubscribes. Results must not depend on the partition: reduce per output element,
// or use parallel_reduce, whose blocks do not depend on the thread count.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera {

class ThreadPool {
 public:
  // num_threads counts the caller: 1 means no worker threads.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // fn(chunk_begin, chunk_end) for each chunk; chunks are at least `grain` long (except when
  // the range is shorter). The first exception thrown by fn is rethrown here after all
  // chunks finish.
  void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                    const std::function<void(std::int64_t, std::int64_t)>& fn);

  // The chunks parallel_for would use: chunk i is [bounds[i], bounds[i+1]).
  static std::vector<std::int64_t> partition(std::int64_t begin, std::int64_t end,
                                             std::int64_t grain, int num_threads);

  // True on a pool worker thread (of any pool) and inside a parallel_for body.
  static bool in_parallel_region();

 private:
  void worker_loop(int index);
  // Waits until worker `index` has finished generation g.
  void wait_for(int index, std::uint32_t g);

  // One cache line per worker: the last generation whose chunk was claimed (by the worker or
  // by the caller, whichever came first) and the last one finished, written by whichever
  // claimed it. The caller spins on `done`.
  struct alignas(64) Slot {
    std::atomic<std::uint32_t> claimed{0};
    std::atomic<std::uint32_t> done{0};
  };

  int num_threads_;
  std::vector<std::thread> workers_;
  std::unique_ptr<Slot[]> slots_;
  std::mutex run_mutex_;  // one parallel_for at a time; others run inline
  // Job state published to workers through generation_ (chunk i is computed by each thread
  // from the range: nothing is allocated per call).
  const std::function<void(std::int64_t, std::int64_t)>* job_ = nullptr;
  std::int64_t begin_ = 0, end_ = 0, chunks_ = 0;
  alignas(64) std::atomic<std::uint32_t> generation_{0};
  std::atomic<int> sleepers_{0};       // workers blocked on generation_ (notify only then)
  std::atomic<bool> caller_waits_{false};  // the caller is blocked on a slot
  std::atomic<bool> stop_{false};
  alignas(64) std::mutex error_mutex_;
  std::exception_ptr error_;
};

// Items [0, n) cut into contiguous shares, one per thread of a parallel_for over the shares:
// the thread of share s takes its own items from the front, then single items from the backs
// of the other shares. A thread that starts late (a worker waking up) or runs slow loses
// items to the others instead of holding up the call, and each thread still walks mostly its
// own contiguous run (the data it touched on the last call). Which thread runs an item must
// not change its result: use it for items that each write their own outputs.
class WorkShares {
 public:
  // bounds[s] .. bounds[s + 1] is share s; bounds ascending, at most 2^32 - 1 items.
  explicit WorkShares(const std::vector<std::int64_t>& bounds);
  // n items in `shares` near-equal contiguous shares.
  WorkShares(std::int64_t n, int shares);
  int shares() const { return n_; }
  // The next item for share s's thread, or -1 when every item has been taken.
  std::int64_t next(int s);

 private:
  struct alignas(64) Range {
    std::atomic<std::uint64_t> front_back{0};  // front << 32 | back: items [front, back) left
  };
  std::unique_ptr<Range[]> r_;
  int n_ = 0;
};

// The process-wide pool: TESSERA_NUM_THREADS threads, default the CPUs in the affinity mask.
ThreadPool& thread_pool();
int default_num_threads();
// Replaces the process-wide pool with one of n threads (n <= 0: the default). Not safe while
// another thread is inside parallel_for.
void set_num_threads(int n);

// Deterministic for any thread count: the range is cut into blocks of `block` elements
// (independent of threads), each reduced by `map(b, e)`, then combined left to right.
template <typename T>
T parallel_reduce(std::int64_t begin, std::int64_t end, std::int64_t block, T init,
                  const std::function<T(std::int64_t, std::int64_t)>& map,
                  const std::function<T(T, T)>& combine) {
  if (end <= begin) return init;
  if (block < 1) block = 1;
  const std::int64_t nblocks = (end - begin + block - 1) / block;
  std::vector<T> partial(static_cast<std::size_t>(nblocks));
  thread_pool().parallel_for(0, nblocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      std::int64_t lo = begin + b * block;
      std::int64_t hi = lo + block < end ? lo + block : end;
      partial[static_cast<std::size_t>(b)] = map(lo, hi);
    }
  });
  T acc = init;
  for (const T& p : partial) acc = combine(acc, p);
  return acc;
}

}  // namespace tessera
