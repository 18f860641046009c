#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <tessera/core/cpu.hpp>
#include <tessera/core/log.hpp>
#include <tessera/core/thread_pool.hpp>

namespace tessera {
namespace {

thread_local bool tl_in_region = false;

// Marks the current thread as inside a parallel region for the guard's lifetime.
class RegionGuard {
 public:
  RegionGuard() : previous_(tl_in_region) { tl_in_region = true; }
  ~RegionGuard() { tl_in_region = previous_; }

 private:
  bool previous_;
};

void spin_pause() {
  __builtin_ia32_pause();
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads < 1 ? 1 : num_threads) {
  workers_.reserve(static_cast<std::size_t>(num_threads_ - 1));
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::in_parallel_region() {
  return tl_in_region;
}

std::vector<std::int64_t> ThreadPool::partition(std::int64_t begin, std::int64_t end,
                                                std::int64_t grain, int num_threads) {
  std::vector<std::int64_t> bounds{begin};
  if (end <= begin) {
    bounds.push_back(begin);
    return bounds;
  }
  const std::int64_t len = end - begin;
  if (grain < 1) grain = 1;
  std::int64_t chunks = (len + grain - 1) / grain;
  if (chunks > num_threads) chunks = num_threads;
  if (chunks < 1) chunks = 1;
  const std::int64_t base = len / chunks, extra = len % chunks;
  std::int64_t at = begin;
  for (std::int64_t i = 0; i < chunks; ++i) {
    at += base + (i < extra ? 1 : 0);
    bounds.push_back(at);
  }
  return bounds;
}

void ThreadPool::worker_loop(int index) {
  tl_in_region = true;
  std::uint64_t seen = 0;
  while (true) {
    // Spin briefly (loops issued back to back are common), then sleep on the futex.
    for (int i = 0; i < 4000 && generation_.load(std::memory_order_acquire) == seen; ++i)
      spin_pause();
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    const auto chunk = static_cast<std::size_t>(index);
    if (chunk + 1 < bounds_.size()) {
      try {
        (*job_)(bounds_[chunk], bounds_[chunk + 1]);
      } catch (...) {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
      }
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void ThreadPool::parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                              const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (end <= begin) return;
  // Nested or concurrent use runs inline: never more threads than cores.
  std::unique_lock lock(run_mutex_, std::defer_lock);
  if (num_threads_ == 1 || tl_in_region || !lock.try_lock()) {
    RegionGuard guard;
    fn(begin, end);
    return;
  }
  bounds_ = partition(begin, end, grain, num_threads_);
  if (bounds_.size() == 2) {
    RegionGuard guard;
    fn(begin, end);
    return;
  }
  job_ = &fn;
  error_ = nullptr;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  {
    RegionGuard guard;
    try {
      fn(bounds_[0], bounds_[1]);
    } catch (...) {
      std::lock_guard elock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
  for (int p; (p = pending_.load(std::memory_order_acquire)) != 0;) {
    bool done = false;
    for (int i = 0; i < 4000; ++i) {
      if (pending_.load(std::memory_order_acquire) == 0) {
        done = true;
        break;
      }
      spin_pause();
    }
    if (!done) pending_.wait(p, std::memory_order_acquire);
  }
  job_ = nullptr;
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

namespace {

std::mutex g_pool_mutex;
std::unique_ptr<ThreadPool> g_pool;

}  // namespace

int default_num_threads() {
  if (const char* env = std::getenv("TESSERA_NUM_THREADS"); env && *env) {
    char* rest = nullptr;
    long n = std::strtol(env, &rest, 10);
    if (rest && *rest == '\0' && n >= 1 && n <= 4096) return static_cast<int>(n);
    static bool warned = false;
    if (!warned) {
      warned = true;
      std::fprintf(stderr,
                   "tessera: TESSERA_NUM_THREADS='%s' is not a thread count in 1..4096; ignored\n",
                   env);
    }
  }
  return cpu_info().logical_cpus > 0 ? cpu_info().logical_cpus : 1;
}

ThreadPool& thread_pool() {
  std::lock_guard lock(g_pool_mutex);
  if (!g_pool) g_pool = std::make_unique<ThreadPool>(default_num_threads());
  return *g_pool;
}

void set_num_threads(int n) {
  std::lock_guard lock(g_pool_mutex);
  g_pool.reset();
  g_pool = std::make_unique<ThreadPool>(n > 0 ? n : default_num_threads());
  TESSERA_VLOG(kTrace) << "thread pool: " << g_pool->num_threads() << " threads";
}

}  // namespace tessera
