// `tessera bench dnn conv|pool|act|softmax|norm ...`: a MIOpenDriver / benchdnn-style driver.
// Times one primitive call on tessera and on oneDNN (opened at run time, never linked) with
// the same inputs, cross-checks the two results, and prints times, the time ratio, the rate
// (GFLOPS or GB/s) and the line that replays the case. The options accept the lines the
// library prints with TESSERA_LOG=bench.
#include "bench_dnn.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include <tessera/core/cpu.hpp>
#include <tessera/core/half.hpp>

#include "commands.hpp"

namespace tessera::cli {
namespace dnn_bench {

using nlohmann::json;

// ---- Parsing helpers ---------------------------------------------------------------------

void bad(const std::string& message) {
  throw CommandError{message, 2};
}

std::vector<std::int64_t> parse_dims(const std::string& flag, const std::string& text,
                                     std::int64_t min) {
  std::vector<std::int64_t> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, 'x');) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || v < min || v > (std::int64_t{1} << 40))
      bad(flag + " " + text + ": '" + item + "' is not an integer >= " + std::to_string(min) +
          " (values are joined by 'x', e.g. 56x56)");
    out.push_back(v);
  }
  if (out.empty() || text.back() == 'x')
    bad(flag + ": '" + text + "' is not a list of sizes joined by 'x', e.g. 56x56");
  return out;
}

std::string join_dims(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::int64_t e : v) s += (s.empty() ? "" : "x") + std::to_string(e);
  return s;
}

DType parse_dnn_dtype(const std::string& text) {
  const std::optional<DType> d = parse_dtype(text);
  if (!d || (*d != DType::kF32 && *d != DType::kBF16 && *d != DType::kF16))
    bad("--dtype: '" + text + "' is not one of f32, bf16, f16");
  return *d;
}

dnn::Layout parse_layout(const std::string& text) {
  if (text == "nchw") return dnn::Layout::kNCHW;
  if (text == "nhwc") return dnn::Layout::kNHWC;
  bad("--layout: '" + text + "' is not nchw or nhwc");
}

std::string format_number(double v) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

double bytes(DType dtype, std::int64_t count) {
  return static_cast<double>(dtype_size(dtype)) * static_cast<double>(count);
}

// ---- Plans -------------------------------------------------------------------------------

void* Plan::alloc(DType dtype, std::int64_t count, const std::string& what) {
  const std::size_t n = static_cast<std::size_t>(std::max<std::int64_t>(count, 1));
  storage.emplace_back(n * dtype_size(dtype), what);
  return storage.back().data();
}

void* Plan::random(DType dtype, std::int64_t count, const std::string& what, float lo, float hi) {
  void* p = alloc(dtype, count, what);
  std::mt19937 gen(seed++);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)));
  for (float& e : v) e = dist(gen);
  switch (dtype) {
    case DType::kBF16:
      convert_f32_to_bf16(v.data(), static_cast<bf16*>(p), v.size());
      break;
    case DType::kF16:
      convert_f32_to_f16(v.data(), static_cast<f16*>(p), v.size());
      break;
    default:
      std::copy(v.begin(), v.end(), static_cast<float*>(p));
      break;
  }
  return p;
}

namespace {

float load(const void* p, DType dtype, std::int64_t i) {
  switch (dtype) {
    case DType::kBF16:
      return bf16_bits_to_f32(static_cast<const std::uint16_t*>(p)[i]);
    case DType::kF16:
      return f16_bits_to_f32(static_cast<const std::uint16_t*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

// Largest |tessera - anchor| over the largest |anchor|; +inf when one has a NaN the other has
// not.
double relative_error(const Plan::Check& c) {
  double diff = 0, scale = 0;
  for (std::int64_t i = 0; i < c.count; ++i) {
    const double t = load(c.tessera, c.dtype, i), a = load(c.anchor, c.dtype, i);
    if (std::isnan(t) || std::isnan(a)) {
      if (std::isnan(t) != std::isnan(a)) return INFINITY;
      continue;
    }
    diff = std::max(diff, std::abs(t - a));
    scale = std::max(scale, std::abs(a));
  }
  return diff / std::max(scale, 1e-30);
}

// ---- Running -----------------------------------------------------------------------------

struct Anchor {
  bool use = false;
  const onednn::Info* info = nullptr;
  std::string why;  // when not used
};

Anchor open_anchor(const std::string& vs) {
  Anchor a;
  if (vs == "none") {
    a.why = "--vs none";
    return a;
  }
  if (!vs.empty() && vs != "onednn")
    bad("--vs: unknown anchor '" + vs + "' (bench dnn knows onednn, or none)");
  a.info = onednn::open(&a.why);
  if (a.info == nullptr && vs == "onednn") throw CommandError{"--vs onednn: " + a.why, 1};
  a.use = a.info != nullptr;
  return a;
}

struct Outcome {
  json j;
  std::vector<std::string> cells;
  std::vector<std::string> warnings;
  std::string error;
  double tessera_s = 0, anchor_s = 0, work = 0;  // medians; anchor_s 0: no anchor time
  double tessera_best_s = 0, anchor_best_s = 0;
  std::string unit;
};

std::string ms(double seconds) {
  return format_rate(seconds * 1e3);
}

Outcome run_case(const Case& c, int threads, const BenchOptions& o, const Anchor& anchor) {
  Outcome out;
  use_threads(threads);
  // Before the primitives are made: oneDNN partitions its work when it creates them.
  if (anchor.use) onednn::set_threads(threads);
  dnn::Handle h;
  if (Status s = h.set_num_threads(threads); !s.is_ok()) throw CommandError{s.message(), 1};
  Plan p;
  c.plan(h, anchor.use, p);
  const std::string command = c.command + " --threads " + std::to_string(threads);
  const std::string what =
      c.primitive + " " + c.shape + " (" + std::to_string(threads) + " threads)";
  out.unit = p.bandwidth ? "GB/s" : "GFLOPS";
  out.work = p.work;
  auto rate = [&](double seconds) { return seconds > 0 ? p.work / seconds * 1e-9 : 0.0; };
  auto timing_json = [&](const Timing& t) {
    return json{{"median_ms", t.median_s * 1e3}, {"best_ms", t.best_s * 1e3},
                {"samples", t.samples},          {"calls", t.calls},
                {"rate", rate(t.median_s)},      {"rate_best", rate(t.best_s)}};
  };
  json& j = out.j;
  j = {{"primitive", c.primitive}, {"shape", c.shape},       {"dtype", dtype_name(c.dtype)},
       {"threads", threads},       {"command", command},     {"args", c.args},
       {"unit", out.unit},         {"work_per_call", p.work}};
  if (!c.layer.empty()) {
    j["layer"] = c.layer;
    j["group"] = c.group;
    j["count"] = c.count;
  }
  out.cells = {c.layer.empty() ? c.primitive : c.layer, c.shape, std::to_string(threads)};

  settle_threads(threads);
  if (Status s = p.tessera(); !s.is_ok()) {
    out.error = s.message();
    j["error"] = out.error;
    out.cells.push_back("error: " + out.error);
    return out;
  }
  const std::function<void()> tessera_call = [&p] {
    if (!p.tessera().is_ok()) throw CommandError{"a repeated tessera call failed", 1};
  };
  if (p.anchor) {
    settle_threads(threads);
    Status s = p.anchor->run();
    if (s.is_ok()) s = p.anchor->fetch();
    if (!s.is_ok()) {
      p.anchor_missing = s.message();
      p.anchor.reset();
    }
  }
  // With an anchor, the two are timed in alternating turns (see measure_alternating).
  Timing tt, at;
  if (p.anchor) {
    std::tie(tt, at) = measure_alternating(
        tessera_call,
        [&p] {
          if (!p.anchor->run().is_ok()) throw CommandError{"a repeated oneDNN call failed", 1};
        },
        o, [threads] {  // the other library's idle threads stop spinning
          if (threads > 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        });
  } else {
    tt = measure(tessera_call, {}, o);
  }
  out.tessera_s = tt.median_s;
  out.tessera_best_s = tt.best_s;
  j["tessera"] = timing_json(tt);
  if (!p.algo.empty()) j["tessera"]["algo"] = p.algo;
  j["tessera"].update(p.info);

  json aj;
  if (p.anchor) {
    double err = 0;
    for (const Plan::Check& chk : p.checks) err = std::max(err, relative_error(chk));
    out.anchor_s = at.median_s;
    out.anchor_best_s = at.best_s;
    aj = timing_json(at);
    aj["available"] = true;
    aj["impl"] = p.anchor->impl();
    aj["ratio"] = tt.median_s / at.median_s;
    aj["max_rel_error"] = std::isfinite(err) ? json(err) : json("inf");
    aj["tolerance"] = p.tolerance;
    aj["matches"] = err <= p.tolerance;
    if (!(err <= p.tolerance)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3g > %.3g", err, p.tolerance);
      out.warnings.push_back(what + ": tessera and oneDNN differ: max relative error " + buf +
                             "; replay: " + command);
    }
  } else {
    aj = {{"available", false}, {"reason", anchor.use ? p.anchor_missing : anchor.why}};
  }
  j["onednn"] = aj;
  j["warnings"] = out.warnings;
  const bool have = out.anchor_s > 0;
  out.cells.push_back(p.algo.empty() ? "-" : p.algo);
  out.cells.push_back(ms(tt.median_s));
  out.cells.push_back(have ? ms(out.anchor_s) : "n/a");
  out.cells.push_back(have ? format_ratio(tt.median_s / out.anchor_s) : "-");
  out.cells.push_back(format_rate(rate(tt.median_s)));
  out.cells.push_back(have ? format_rate(rate(out.anchor_s)) : "-");
  out.cells.push_back(out.unit);
  out.cells.push_back(have ? p.anchor->impl() : "-");
  out.cells.push_back(command);
  return out;
}

// Sums of one group's rows: every distinct layer once, and weighted by the layer's count.
struct Total {
  std::string group, unit;
  int rows = 0, compared = 0, layers = 0;
  double tessera_s = 0, anchor_s = 0, work = 0;              // rows with both times
  double tessera_best_s = 0, anchor_best_s = 0;              // the same, best samples
  double net_tessera_s = 0, net_anchor_s = 0, net_work = 0;  // weighted by count
  double net_tessera_best_s = 0, net_anchor_best_s = 0;      // the same, best samples
  double all_tessera_s = 0;                                  // every row
  void add(const Outcome& r, int count) {
    ++rows;
    layers += count;
    unit = r.unit;
    all_tessera_s += r.tessera_s;
    if (r.anchor_s <= 0) return;
    ++compared;
    tessera_s += r.tessera_s, anchor_s += r.anchor_s, work += r.work;
    tessera_best_s += r.tessera_best_s, anchor_best_s += r.anchor_best_s;
    net_tessera_s += count * r.tessera_s, net_anchor_s += count * r.anchor_s;
    net_tessera_best_s += count * r.tessera_best_s, net_anchor_best_s += count * r.anchor_best_s;
    net_work += count * r.work;
  }
};

Table make_table() {
  return Table({{"layer", 14, true},
                {"shape", 40, true},
                {"thr", 3},
                {"algo", 13, true},
                {"tessera ms", 10},
                {"oneDNN ms", 9},
                {"ratio", 5},
                {"tessera", 7},
                {"oneDNN", 7},
                {"unit", 6, true},
                {"oneDNN impl", 22, true},
                {"replay", 1, true}});
}

void print_totals(const Table& table, const Total& t, int threads, json& totals, bool json_out) {
  auto rate = [](double work, double s) { return s > 0 ? work / s * 1e-9 : 0.0; };
  const bool complete = t.compared == t.rows;
  json tj = {{"group", t.group},       {"threads", threads}, {"rows", t.rows},
             {"compared", t.compared}, {"layers", t.layers}, {"tessera_ms", t.all_tessera_s * 1e3}};
  if (t.compared > 0) {
    tj["distinct"] = {{"tessera_ms", t.tessera_s * 1e3},
                      {"onednn_ms", t.anchor_s * 1e3},
                      {"ratio", t.tessera_s / t.anchor_s},
                      {"tessera_best_ms", t.tessera_best_s * 1e3},
                      {"onednn_best_ms", t.anchor_best_s * 1e3},
                      {"ratio_best", t.tessera_best_s / t.anchor_best_s},
                      {"tessera_rate", rate(t.work, t.tessera_s)},
                      {"onednn_rate", rate(t.work, t.anchor_s)}};
    tj["network"] = {{"tessera_ms", t.net_tessera_s * 1e3},
                     {"onednn_ms", t.net_anchor_s * 1e3},
                     {"ratio", t.net_tessera_s / t.net_anchor_s},
                     {"tessera_best_ms", t.net_tessera_best_s * 1e3},
                     {"onednn_best_ms", t.net_anchor_best_s * 1e3},
                     {"ratio_best", t.net_tessera_best_s / t.net_anchor_best_s},
                     {"tessera_rate", rate(t.net_work, t.net_tessera_s)},
                     {"onednn_rate", rate(t.net_work, t.net_anchor_s)}};
  }
  totals.push_back(tj);
  if (json_out) return;
  const std::string scope = complete ? "" : " (" + std::to_string(t.compared) + " compared)";
  if (t.compared == 0) {
    table.print_row({"total", t.group + ", " + std::to_string(t.rows) + " distinct",
                     std::to_string(threads), "", ms(t.all_tessera_s), "n/a", "-"});
    return;
  }
  table.print_row({"total", t.group + ", " + std::to_string(t.rows) + " distinct" + scope,
                   std::to_string(threads), "", ms(t.tessera_s), ms(t.anchor_s),
                   format_ratio(t.tessera_s / t.anchor_s), format_rate(rate(t.work, t.tessera_s)),
                   format_rate(rate(t.work, t.anchor_s)), t.unit});
  table.print_row({"network", t.group + ", " + std::to_string(t.layers) + " layers" + scope,
                   std::to_string(threads), "", ms(t.net_tessera_s), ms(t.net_anchor_s),
                   format_ratio(t.net_tessera_s / t.net_anchor_s),
                   format_rate(rate(t.net_work, t.net_tessera_s)),
                   format_rate(rate(t.net_work, t.net_anchor_s)), t.unit});
  // The same from each layer's best sample: on a shared machine whose speed moves in phases
  // the medians spread with whichever library the slow phases hit harder.
  table.print_row({"network best", t.group + ", " + std::to_string(t.layers) + " layers" + scope,
                   std::to_string(threads), "", ms(t.net_tessera_best_s), ms(t.net_anchor_best_s),
                   format_ratio(t.net_tessera_best_s / t.net_anchor_best_s),
                   format_rate(rate(t.net_work, t.net_tessera_best_s)),
                   format_rate(rate(t.net_work, t.net_anchor_best_s)), t.unit});
}

// OpenMP's wait policy decides how oneDNN's threads wait between parallel regions: spinning
// (the default) is fastest on an idle machine and very slow on a shared, loaded one.
std::string omp_wait_policy() {
  const char* v = std::getenv("OMP_WAIT_POLICY");
  return v != nullptr && *v != '\0' ? v : "unset";
}

void print_header(const Anchor& anchor) {
  const CpuInfo& cpu = cpu_info();
  std::string isa(isa_name(cpu.isa()));
  if (const char* cap = std::getenv("TESSERA_MAX_ISA"))
    isa += " (TESSERA_MAX_ISA=" + std::string(cap) + ")";
  std::printf("tessera bench dnn on %s: tessera uses %s\n", cpu.model.c_str(), isa.c_str());
  if (anchor.use)
    std::printf("anchor onednn %s (%s), OMP_WAIT_POLICY=%s\n", anchor.info->version.c_str(),
                anchor.info->path.c_str(), omp_wait_policy().c_str());
  else
    std::printf("anchor: none (%s)\n", anchor.why.c_str());
  std::printf(
      "times are medians; ratio = tessera time / oneDNN time (below 1: tessera is faster)\n\n");
}

}  // namespace

void add_dnn_bench_options(CLI::App* cmd, BenchOptions& o) {
  // Replay lines carry --threads; given again, the last one counts (so do the others).
  cmd->add_option("--threads", o.threads,
                  "Threads for tessera and oneDNN; a list such as 1,2 runs each (default: the "
                  "CPUs in the affinity mask)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--repeat", o.repeat, "At least this many timed samples (default 3)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--min-time", o.min_time,
                  "At least this many seconds of timed samples per library (default 0.2)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--vs", o.vs, "onednn (it must be installed) or none (default: oneDNN if found)");
  cmd->add_flag("--json", o.json, "Print one JSON object instead of a table");
}

void run_cases(const std::vector<Case>& cases, const BenchOptions& o, bool suite) {
  check_bench_options(o);
  const std::vector<int> threads = thread_counts(o);
  const Anchor anchor = open_anchor(o.vs);
  const Table table = make_table();
  json results = json::array(), totals = json::array();
  bool header_printed = false;
  int failed = 0;
  for (int t : threads) {
    Total total;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      Outcome r = run_case(c, t, o, anchor);
      if (!r.error.empty() && !suite) throw CommandError{r.error, 1};
      if (!o.json && !header_printed) {
        print_header(anchor);
        table.print_header();
        header_printed = true;
      }
      for (const std::string& w : r.warnings)
        std::fprintf(stderr, "tessera: warning: %s\n", w.c_str());
      if (!r.error.empty()) {
        ++failed;
        std::fprintf(stderr, "tessera: error: %s; replay: %s\n", r.error.c_str(),
                     r.j["command"].get<std::string>().c_str());
      }
      if (!o.json) table.print_row(r.cells);
      if (suite && r.error.empty()) {
        total.group = c.group;
        total.add(r, c.count);
      }
      results.push_back(std::move(r.j));
      const bool last_of_group = i + 1 == cases.size() || cases[i + 1].group != c.group;
      if (suite && last_of_group) {
        if (total.rows > 0) print_totals(table, total, t, totals, o.json);
        total = Total{};
      }
    }
  }
  if (o.json) {
    const CpuInfo& cpu = cpu_info();
    json top = {{"cpu", cpu.model},
                {"isa", isa_name(cpu.isa())},
                {"threads", threads},
                {"anchor", anchor.use ? json{{"name", "onednn"},
                                             {"version", anchor.info->version},
                                             {"path", anchor.info->path},
                                             {"omp_wait_policy", omp_wait_policy()}}
                                      : json(nullptr)},
                {"suite", suite},
                {"results", results}};
    if (!anchor.use) top["anchor_reason"] = anchor.why;
    if (suite) top["totals"] = totals;
    std::cout << top.dump(2) << "\n";
  }
  if (failed > 0)
    throw CommandError{
        std::to_string(failed) + " of " + std::to_string(results.size()) + " cases failed", 1};
}

}  // namespace dnn_bench

void add_bench_dnn_command(CLI::App& bench) {
  CLI::App* dnn = bench.add_subcommand(
      "dnn", "tessera DNN primitives against oneDNN: times, time ratio, GFLOPS or GB/s");
  dnn_bench::add_conv_command(*dnn);
  dnn_bench::add_ops_commands(*dnn);
  dnn_bench::add_tensor_commands(*dnn);
  dnn_bench::add_rnn_command(*dnn);
}

}  // namespace tessera::cli
