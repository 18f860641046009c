#include "bench_common.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <thread>

#include <dlfcn.h>

#include <tessera/core/cpu.hpp>
#include <tessera/core/thread_pool.hpp>

#include "commands.hpp"

namespace tessera::cli {

void add_bench_options(CLI::App* cmd, BenchOptions& o) {
  cmd->add_option("--threads", o.threads,
                  "Threads for tessera and every anchor; a list such as 1,2 runs each "
                  "(default: the CPUs in the affinity mask)");
  cmd->add_option("--repeat", o.repeat, "At least this many timed samples (default 3)");
  cmd->add_option("--min-time", o.min_time,
                  "At least this many seconds of timed samples per library (default 0.2)");
  cmd->add_option("--vs", o.vs,
                  "Anchors to compare with: a list of openblas, blis, or none (default: every "
                  "one installed)");
  cmd->add_flag("--json", o.json, "Print one JSON object instead of a table");
}

void check_bench_options(const BenchOptions& o) {
  if (o.repeat < 1)
    throw CommandError{"--repeat = " + std::to_string(o.repeat) + " must be >= 1", 2};
  if (!(o.min_time >= 0) || o.min_time > 3600)
    throw CommandError{"--min-time must be between 0 and 3600 seconds", 2};
  thread_counts(o);
}

std::vector<int> thread_counts(const BenchOptions& o) {
  if (o.threads.empty()) return {default_num_threads()};
  std::vector<int> out;
  std::stringstream ss(o.threads);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || v < 1 || v > 1024)
      throw CommandError{"--threads: '" + item + "' is not a thread count between 1 and 1024", 2};
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) throw CommandError{"--threads needs at least one thread count", 2};
  return out;
}

void AlignedBuffer::Free::operator()(void* p) const {
  std::free(p);
}

AlignedBuffer::AlignedBuffer(std::size_t bytes, const std::string& what) {
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
  if (rounded < bytes) throw CommandError{"cannot allocate " + what + ": size overflows", 1};
  // Refuse what cannot fit rather than let the kernel's out-of-memory killer end the run.
  const auto total = static_cast<std::size_t>(cpu_info().memory_total_bytes);
  if (total > 0 && bytes > total)
    throw CommandError{what + " needs " + std::to_string(bytes >> 20) + " MiB, more than the " +
                           std::to_string(total >> 20) + " MiB of this machine",
                       1};
  data_.reset(std::aligned_alloc(64, rounded));
  if (!data_)
    throw CommandError{"cannot allocate " + std::to_string(bytes) + " bytes for " + what, 1};
  bytes_ = bytes;
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Samples of one call, taken a turn at a time.
class Sampler {
 public:
  Sampler(const std::function<void()>& call, const std::function<void()>& restore,
          const BenchOptions& o)
      : call_(call), restore_(restore), o_(o) {}

  // Samples until done, or (turn_share < 1) until this turn's share of the target.
  void turn(double turn_share) {
    const auto start = Clock::now();
    const double total0 = total_;
    const std::size_t n0 = per_call_.size();
    if (t_.calls == 0) first_call();
    while (!done()) {
      if (turn_share < 1 && static_cast<double>(per_call_.size() - n0) >= turn_share * o_.repeat &&
          (total_ - total0 >= turn_share * o_.min_time ||
           seconds(start, Clock::now()) >= 5 * turn_share * o_.min_time))
        return;
      if (restore_) restore_();
      const auto t0 = Clock::now();
      for (std::int64_t i = 0; i < batch_; ++i) call_();
      const double s = seconds(t0, Clock::now());
      per_call_.push_back(s / static_cast<double>(batch_));
      total_ += s;
      t_.calls += batch_;
      if (per_call_.size() >= 1000000) forced_done_ = true;
    }
  }
  // Enough samples, and enough timed seconds, unless untimed restores take most of the time.
  bool done() const {
    if (forced_done_) return true;
    if (static_cast<int>(per_call_.size()) < o_.repeat) return false;
    return total_ >= o_.min_time || elapsed() >= 5 * o_.min_time;
  }
  Timing result() {
    std::sort(per_call_.begin(), per_call_.end());
    const std::size_t n = per_call_.size();
    t_.samples = static_cast<int>(n);
    t_.best_s = per_call_.front();
    t_.median_s = n % 2 ? per_call_[n / 2] : 0.5 * (per_call_[n / 2 - 1] + per_call_[n / 2]);
    return t_;
  }

 private:
  // The first call decides the batch size; a call of a millisecond or more is a sample.
  void first_call() {
    start_ = Clock::now();
    if (restore_) restore_();
    const auto t0 = Clock::now();
    call_();
    const double first = seconds(t0, Clock::now());
    ++t_.calls;
    if (restore_ || first >= 1e-3) {
      per_call_.push_back(first);
      total_ += first;
    } else {
      batch_ = std::clamp<std::int64_t>(static_cast<std::int64_t>(1e-3 / std::max(first, 1e-9)), 1,
                                        std::int64_t{1} << 20);
    }
  }
  // Wall time with untimed restores (measure() only, one sampler); else the timed seconds.
  double elapsed() const { return restore_ ? seconds(start_, Clock::now()) : total_; }

  const std::function<void()>& call_;
  const std::function<void()>& restore_;
  const BenchOptions& o_;
  std::vector<double> per_call_;
  double total_ = 0;
  std::int64_t batch_ = 1;
  bool forced_done_ = false;
  Clock::time_point start_;
  Timing t_;
};

}  // namespace

Timing measure(const std::function<void()>& call, const std::function<void()>& restore,
               const BenchOptions& o) {
  Sampler s(call, restore, o);
  s.turn(1.0);
  return s.result();
}

std::pair<Timing, Timing> measure_alternating(const std::function<void()>& a,
                                              const std::function<void()>& b,
                                              const BenchOptions& o,
                                              const std::function<void()>& between) {
  constexpr int kTurns = 4;
  const std::function<void()> none;
  Sampler sa(a, none, o), sb(b, none, o);
  while (!sa.done() || !sb.done()) {
    if (!sa.done()) sa.turn(1.0 / kTurns);
    if (between) between();
    if (!sb.done()) sb.turn(1.0 / kTurns);
    if (between && (!sa.done() || !sb.done())) between();
  }
  return {sa.result(), sb.result()};
}

// ---- Anchors -----------------------------------------------------------------------------

namespace {

struct AnchorSpec {
  const char* name;
  const char* marker;  // a symbol only this library has: guards against a look-alike file
  std::vector<const char*> paths;
};

// Debian/Ubuntu alternatives first (pthread, then OpenMP, then serial builds), then whatever
// the dynamic loader finds by soname, then common install prefixes.
const std::vector<AnchorSpec>& anchor_specs() {
  static const std::vector<AnchorSpec> specs = {
      {"openblas",
       "openblas_get_config",
       {"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0",
        "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0",
        "/usr/lib/x86_64-linux-gnu/openblas-serial/libopenblas.so.0", "libopenblas.so.0",
        "/usr/lib64/libopenblas.so.0", "/usr/local/lib/libopenblas.so.0",
        "/opt/OpenBLAS/lib/libopenblas.so.0", "libopenblas.so"}},
      {"blis",
       "bli_info_get_version_str",
       {"/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4",
        "/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4",
        "/usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4", "libblis.so.4",
        "/usr/lib64/libblis.so.4", "/usr/local/lib/libblis.so.4", "libblis.so"}},
  };
  return specs;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// Opens the first file of the spec that has its marker symbol; nullopt when none does.
std::optional<Anchor> try_open(const AnchorSpec& spec) {
  for (const char* path : spec.paths) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) continue;
    if (dlsym(h, spec.marker) == nullptr) {
      dlclose(h);
      continue;
    }
    Anchor a;
    a.name = spec.name;
    a.path = path;
    a.handle = h;
    if (a.name == "openblas") {
      if (auto config = reinterpret_cast<const char* (*)()>(dlsym(h, "openblas_get_config")))
        a.version = trim(config());
      if (auto set = reinterpret_cast<void (*)(int)>(dlsym(h, "openblas_set_num_threads")))
        a.set_threads = set;
    } else {
      if (auto version = reinterpret_cast<const char* (*)()>(dlsym(h, spec.marker)))
        a.version = "BLIS " + trim(version());
      // bli_thread_set_num_threads takes a dim_t (64-bit).
      using SetThreads = void (*)(std::int64_t);
      if (auto set = reinterpret_cast<SetThreads>(dlsym(h, "bli_thread_set_num_threads")))
        a.set_threads = [set](int n) { set(n); };
    }
    return a;
  }
  return std::nullopt;
}

}  // namespace

void* Anchor::symbol(const std::string& symbol) const {
  return dlsym(handle, symbol.c_str());
}

std::vector<std::string> known_anchor_names() {
  std::vector<std::string> names;
  for (const AnchorSpec& s : anchor_specs()) names.push_back(s.name);
  return names;
}

namespace {
std::vector<Anchor>& anchor_storage() {
  static std::vector<Anchor> opened;
  return opened;
}
}  // namespace

const std::vector<Anchor>& opened_anchors() {
  return anchor_storage();
}

const std::vector<Anchor>& open_anchors(const std::string& vs) {
  std::vector<Anchor>& opened = anchor_storage();
  std::vector<std::string> wanted;
  bool all = vs.empty();
  if (!all && vs != "none") {
    std::stringstream ss(vs);
    for (std::string item; std::getline(ss, item, ',');) {
      auto known = known_anchor_names();
      if (std::find(known.begin(), known.end(), item) == known.end())
        throw CommandError{"--vs: unknown anchor '" + item + "' (known: openblas, blis, none)", 2};
      if (std::find(wanted.begin(), wanted.end(), item) == wanted.end()) wanted.push_back(item);
    }
  }
  for (const AnchorSpec& spec : anchor_specs()) {
    if (!all && std::find(wanted.begin(), wanted.end(), spec.name) == wanted.end()) continue;
    std::optional<Anchor> a = try_open(spec);
    if (a) {
      opened.push_back(std::move(*a));
    } else if (!all) {
      std::string tried;
      for (const char* p : spec.paths) tried += std::string(tried.empty() ? "" : ", ") + p;
      throw CommandError{std::string("--vs ") + spec.name + ": not installed (tried " + tried + ")",
                         1};
    }
  }
  return opened;
}

void use_threads(int threads) {
  if (thread_pool().num_threads() != threads) set_num_threads(threads);
  for (const Anchor& a : opened_anchors())
    if (a.set_threads) a.set_threads(threads);
}

void settle_threads(int threads) {
  if (threads > 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

// ---- Output ------------------------------------------------------------------------------

std::string format_rate(double v) {
  if (!std::isfinite(v) || v < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf,
                v >= 100  ? "%.0f"
                : v >= 10 ? "%.1f"
                : v >= 1  ? "%.2f"
                          : "%.3f",
                v);
  return buf;
}

std::string format_ratio(double v) {
  if (!std::isfinite(v) || v <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

void Table::print_header() const {
  std::vector<std::string> titles;
  for (const Column& c : columns_) titles.push_back(c.title);
  print_row(titles);
}

void Table::print_row(const std::vector<std::string>& cells) const {
  std::string line;
  for (std::size_t i = 0; i < columns_.size() && i < cells.size(); ++i) {
    const Column& c = columns_[i];
    const std::string& s = cells[i];
    const std::size_t pad = s.size() < static_cast<std::size_t>(c.width) ? c.width - s.size() : 0;
    if (i > 0) line += "  ";
    if (c.left)
      line += s + (i + 1 < cells.size() ? std::string(pad, ' ') : "");
    else
      line += std::string(pad, ' ') + s;
  }
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace tessera::cli
