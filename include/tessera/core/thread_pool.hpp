// The CPU thread pool every library runs its parallel loops on.
//
// parallel_for splits [begin, end) into at most num_threads() contiguous chunks with a
// static, deterministic partition: the same range and thread count always give the same
// chunks. The calling thread works too. A parallel_for issued from inside a pool task (or
// while another thread is using the pool) runs inline on the caller, so nesting never
// oversubscribes. Results must not depend on the partition: reduce per output element,
// or use parallel_reduce, whose blocks do not depend on the thread count.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
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

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one parallel_for at a time; others run inline
  // Job state published to workers through generation_.
  const std::function<void(std::int64_t, std::int64_t)>* job_ = nullptr;
  std::vector<std::int64_t> bounds_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
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
