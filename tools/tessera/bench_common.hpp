// Shared pieces of the `tessera bench <library>` commands: the common options, timing,
// anchor libraries opened at run time, aligned buffers and text-table output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace tessera::cli {

// The bench sub-commands: each bench_<library>.cpp adds one to `tessera bench`.
void add_bench_blas_command(CLI::App& bench);

// Options every bench command takes.
struct BenchOptions {
  std::string threads;    // comma-separated thread counts; empty: the default pool size
  int repeat = 3;         // at least this many timed samples
  double min_time = 0.2;  // and at least this many seconds of them
  std::string vs;         // comma-separated anchors; empty: every one found; "none": no anchor
  bool json = false;
};
void add_bench_options(CLI::App* cmd, BenchOptions& o);
// Validates the options; throws CommandError on a bad value.
void check_bench_options(const BenchOptions& o);
// The thread counts to run (each >= 1); throws CommandError on a bad list.
std::vector<int> thread_counts(const BenchOptions& o);

// Sets tessera's process thread pool and every anchor to `threads`.
void use_threads(int threads);
// With more than one thread, waits a moment before the next library is timed, so the worker
// threads of the one that ran last have gone idle (OpenBLAS's keep spinning for a while
// after each call, which would slow down whatever runs next).
void settle_threads(int threads);

// A 64-byte aligned, uninitialised block; throws CommandError when it cannot be allocated.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t bytes, const std::string& what);
  void* data() const { return data_.get(); }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
  std::size_t bytes_ = 0;
};

struct Timing {
  double median_s = 0, best_s = 0;  // per call
  int samples = 0;
  std::int64_t calls = 0;
};
// Times `call` (already warmed up by the caller) until BenchOptions::repeat samples and
// min_time timed seconds. Without `restore`, calls are grouped into samples of about a
// millisecond; with it, every call is a sample and restore() runs untimed before each (for
// calls whose repetition would change what they compute), and the loop also ends after
// 5 * min_time seconds of wall time.
Timing measure(const std::function<void()>& call, const std::function<void()>& restore,
               const BenchOptions& o);
// Times a and b (both warmed up) as measure() does, in alternating turns of a quarter of the
// samples and seconds each, so a drift in the machine's speed (other tenants, memory
// bandwidth) reaches both alike; `between` (if set) runs untimed at each switch.
std::pair<Timing, Timing> measure_alternating(const std::function<void()>& a,
                                              const std::function<void()>& b,
                                              const BenchOptions& o,
                                              const std::function<void()>& between);

// A library to compare with, opened with dlopen (never linked).
struct Anchor {
  std::string name;     // "openblas", "blis"
  std::string path;     // the file that was opened
  std::string version;  // as the library reports it, or ""
  void* handle = nullptr;
  std::function<void(int)> set_threads;  // empty when the library has no such call
  // The address of `symbol`, or nullptr when this library does not have it.
  void* symbol(const std::string& symbol) const;
};
// The anchors tessera knows, in display order.
std::vector<std::string> known_anchor_names();
// Opens the anchors `vs` names (see BenchOptions::vs). Those named explicitly must be found;
// throws CommandError for an unknown name or a library that is not installed. Handles stay
// open for the life of the process. Call once.
const std::vector<Anchor>& open_anchors(const std::string& vs);
// The anchors open_anchors opened (empty before it is called).
const std::vector<Anchor>& opened_anchors();

// "123.4", "0.123", "12345": three significant digits or more, no exponent.
std::string format_rate(double v);
// "%.2f" for ratios; "-" when not finite or <= 0.
std::string format_ratio(double v);

// A text table printed row by row, so long runs show progress.
class Table {
 public:
  struct Column {
    std::string title;
    int width;
    bool left = false;  // left-aligned (text) or right-aligned (numbers)
  };
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void print_header() const;
  void print_row(const std::vector<std::string>& cells) const;

 private:
  std::vector<Column> columns_;
};

}  // namespace tessera::cli
