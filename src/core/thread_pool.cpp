#include <algorithm>
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

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads < 1 ? 1 : num_threads),
      slots_(std::make_unique<Slot[]>(static_cast<std::size_t>(num_threads_))) {
  workers_.reserve(static_cast<std::size_t>(num_threads_ - 1));
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::in_parallel_region() {
  return tl_in_region;
}

namespace {

// Spins of a waiting thread before it blocks: loops issued back to back are common, and a
// futex wake-up costs microseconds (more in a virtual machine). PAUSE is 25 ns on Zen 4 and
// about 40 ns on Skylake and later: 4000 spins are 0.1-0.2 ms.
constexpr int kSpins = 4000;

// The static partition: the number of chunks, and chunk i's bounds (computed without
// allocating, so parallel_for's workers each find their own).
std::int64_t chunk_count(std::int64_t len, std::int64_t grain, int num_threads) {
  if (grain < 1) grain = 1;
  return std::clamp<std::int64_t>((len + grain - 1) / grain, 1, std::max(num_threads, 1));
}
void chunk_of(std::int64_t begin, std::int64_t end, std::int64_t chunks, std::int64_t i,
              std::int64_t& b, std::int64_t& e) {
  const std::int64_t len = end - begin, base = len / chunks, extra = len % chunks;
  b = begin + i * base + std::min(i, extra);
  e = b + base + (i < extra ? 1 : 0);
}

// Takes generation g's chunk of a slot: true for the first taker, false once the slot holds
// g or a later generation (a worker that woke with a generation the caller has already
// finished finds g, or a later one, there). Generations compare modulo 2^32.
bool claim(std::atomic<std::uint32_t>& claimed, std::uint32_t g) {
  std::uint32_t cur = claimed.load(std::memory_order_relaxed);
  while (static_cast<std::int32_t>(g - cur) > 0)
    if (claimed.compare_exchange_weak(cur, g, std::memory_order_acq_rel, std::memory_order_relaxed)) return true;
  return false;
}

}  // namespace

std::vector<std::int64_t> ThreadPool::partition(std::int64_t begin, std::int64_t end,
                                                std::int64_t grain, int num_threads) {
  if (end <= begin) return {begin, begin};
  const std::int64_t chunks = chunk_count(end - begin, grain, num_threads);
  std::vector<std::int64_t> bounds{begin};
  for (std::int64_t i = 0; i < chunks; ++i) {
    std::int64_t b = 0, e = 0;
    chunk_of(begin, end, chunks, i, b, e);
    bounds.push_back(e);
  }
  return bounds;
}

// Every generation wakes every worker; each first claims its slot. A worker that wins reads
// the job and marks the slot done, and the caller (which lost that claim) waits for it: the
// job fields are never rewritten while a worker may still read them. A worker that loses (the
// caller ran its chunk, or moved on to a later generation) reads nothing of the job.
void ThreadPool::worker_loop(int index) {
  tl_in_region = true;
  std::uint32_t seen = 0;
  Slot& slot = slots_[static_cast<std::size_t>(index)];
  while (true) {
    std::uint32_t g = generation_.load(std::memory_order_acquire);
    for (int i = 0; i < kSpins && g == seen; ++i) {
      spin_pause();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      // Blocks; the caller notifies only while sleepers_ > 0 (both sides seq_cst: either it
      // sees this increment or this wait sees its new generation).
      sleepers_.fetch_add(1);
      while ((g = generation_.load()) == seen) generation_.wait(seen);
      sleepers_.fetch_sub(1);
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    if (!claim(slot.claimed, g)) continue;
    if (index < chunks_) {
      std::int64_t b = 0, e = 0;
      chunk_of(begin_, end_, chunks_, index, b, e);
      try {
        (*job_)(b, e);
      } catch (...) {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
      }
    }
    slot.done.store(g);
    if (caller_waits_.load()) slot.done.notify_one();
  }
}

void ThreadPool::wait_for(int index, std::uint32_t g) {
  std::atomic<std::uint32_t>& done = slots_[static_cast<std::size_t>(index)].done;
  for (int i = 0; i < kSpins; ++i) {
    if (done.load(std::memory_order_acquire) == g) return;
    spin_pause();
  }
  caller_waits_.store(true);  // seq_cst against the worker's store of done, as above
  for (std::uint32_t v; (v = done.load()) != g;) done.wait(v);
}

void ThreadPool::parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                              const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (end <= begin) return;
  // Nested or concurrent use runs inline: never more threads than cores.
  std::unique_lock lock(run_mutex_, std::defer_lock);
  const std::int64_t chunks = chunk_count(end - begin, grain, num_threads_);
  if (num_threads_ == 1 || chunks <= 1 || tl_in_region || !lock.try_lock()) {
    RegionGuard guard;
    fn(begin, end);
    return;
  }
  job_ = &fn;
  begin_ = begin, end_ = end, chunks_ = chunks;
  const std::uint32_t g = generation_.fetch_add(1) + 1;  // publishes the job (seq_cst)
  if (sleepers_.load() > 0) generation_.notify_all();
  // Chunk 0, then every chunk whose worker has not claimed it yet (slots past the chunks are
  // claimed too, so their late workers read nothing; a slot taken here is marked done here,
  // its worker writing nothing for this generation); then the workers that did claim theirs.
  {
    RegionGuard guard;
    auto run_chunk = [&](std::int64_t i) {
      std::int64_t b = 0, e = 0;
      chunk_of(begin, end, chunks, i, b, e);
      try {
        fn(b, e);
      } catch (...) {
        std::lock_guard elock(error_mutex_);
        if (!error_) error_ = std::current_exception();
      }
    };
    run_chunk(0);
    for (int i = 1; i < num_threads_; ++i) {
      Slot& slot = slots_[static_cast<std::size_t>(i)];
      if (!claim(slot.claimed, g)) continue;
      if (i < chunks) run_chunk(i);
      slot.done.store(g, std::memory_order_relaxed);
    }
  }
  for (int i = 1; i < num_threads_; ++i) wait_for(i, g);
  caller_waits_.store(false, std::memory_order_relaxed);
  job_ = nullptr;
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

WorkShares::WorkShares(const std::vector<std::int64_t>& bounds)
    : r_(std::make_unique<Range[]>(bounds.size() > 1 ? bounds.size() - 1 : 1)),
      n_(bounds.size() > 1 ? static_cast<int>(bounds.size() - 1) : 0) {
  for (int s = 0; s < n_; ++s) {
    const auto f = static_cast<std::uint64_t>(bounds[static_cast<std::size_t>(s)]);
    const auto b = static_cast<std::uint64_t>(bounds[static_cast<std::size_t>(s) + 1]);
    r_[static_cast<std::size_t>(s)].front_back.store(f << 32 | b, std::memory_order_relaxed);
  }
}

namespace {
std::vector<std::int64_t> even_bounds(std::int64_t n, int shares) {
  std::vector<std::int64_t> b(static_cast<std::size_t>(std::max(shares, 1)) + 1);
  for (std::size_t s = 0; s < b.size(); ++s) b[s] = n * static_cast<std::int64_t>(s) / static_cast<std::int64_t>(b.size() - 1);
  return b;
}
}  // namespace

WorkShares::WorkShares(std::int64_t n, int shares) : WorkShares(even_bounds(n, shares)) {}

std::int64_t WorkShares::next(int s) {
  // Own share: from the front.
  std::atomic<std::uint64_t>& own = r_[static_cast<std::size_t>(s)].front_back;
  for (std::uint64_t v = own.load(std::memory_order_relaxed); (v >> 32) < (v & 0xffffffffu);)
    if (own.compare_exchange_weak(v, v + (std::uint64_t{1} << 32), std::memory_order_relaxed))
      return static_cast<std::int64_t>(v >> 32);
  // The others', from the back, the next share first.
  for (int k = 1; k < n_; ++k) {
    std::atomic<std::uint64_t>& o = r_[static_cast<std::size_t>((s + k) % n_)].front_back;
    for (std::uint64_t v = o.load(std::memory_order_relaxed); (v >> 32) < (v & 0xffffffffu);)
      if (o.compare_exchange_weak(v, v - 1, std::memory_order_relaxed))
        return static_cast<std::int64_t>((v & 0xffffffffu) - 1);
  }
  return -1;
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
