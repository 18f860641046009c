// `tessera bench fft`: a tessera FFT plan against FFTW (opened at run time, planned with
// FFTW_MEASURE at the same thread count) on the same input. Plans are made untimed; only
// execution is timed, the two libraries in alternating turns. Each row gives both times, the
// ratio, "5 N log2 N" GFLOPS (half of that for real transforms, FFTW's convention), the
// relative difference of the two outputs (beyond the tolerance the command fails) and the
// line that replays it. `--suite` runs the sizes of issue 6's targets.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include <tessera/core/cpu.hpp>
#include <tessera/fft.hpp>

#include "anchor_fftw.hpp"
#include "bench_common.hpp"
#include "commands.hpp"

namespace tessera::cli {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
constexpr fftw::Rigor kFftwRigor = fftw::Rigor::kMeasure;

[[noreturn]] void bad(const std::string& message) {
  throw CommandError{message, 2};
}

std::string join_dims(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::int64_t e : v) {
    if (!s.empty()) s += 'x';
    s += std::to_string(e);
  }
  return s;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// ---- Problems ----------------------------------------------------------------------------

struct Problem {
  fft::Kind kind = fft::Kind::kC2C;
  fft::Direction direction = fft::Direction::kForward;
  fft::Precision precision = fft::Precision::kSingle;
  fft::Planning planning = fft::Planning::kEstimate;
  std::vector<std::int64_t> lengths;
  std::int64_t batch = 1;
  bool in_place = false;
  std::string group;  // the suite's group; "" outside a suite

  bool real() const { return kind != fft::Kind::kC2C; }
  const char* dir() const { return direction == fft::Direction::kForward ? "fwd" : "inv"; }
  std::string transform() const { return std::string(fft::kind_name(kind)) + " " + dir(); }
  std::string shape() const { return join_dims(lengths) + (in_place ? " in-place" : ""); }
  std::int64_t n() const {
    std::int64_t p = 1;
    for (std::int64_t l : lengths) p *= l;
    return p;
  }
  // "5 N log2 N" per transform, half of it for real ones, times the batch.
  double flops() const {
    const auto nn = static_cast<double>(n());
    return (real() ? 2.5 : 5.0) * nn * std::log2(nn) * static_cast<double>(batch);
  }
  double tolerance() const { return precision == fft::Precision::kSingle ? 1e-3 : 1e-10; }
  fft::PlanDesc desc() const {
    fft::PlanDesc d;
    d.kind = kind;
    d.precision = precision;
    d.direction = direction;
    d.lengths = lengths;
    d.batch = batch;
    d.in_place = in_place;
    d.planning = planning;
    return d;
  }
  // The line that replays the row (without --threads).
  std::string command() const {
    return "tessera bench fft --lengths " + join_dims(lengths) + (real() ? " --real" : "") +
           " --dir " + dir() + " --batch " + std::to_string(batch) + " --precision " +
           std::string(fft::precision_name(precision)) + (in_place ? " --in-place" : "") +
           " --planning " + (planning == fft::Planning::kMeasure ? "measure" : "estimate");
  }
  json args() const {
    return {{"kind", fft::kind_name(kind)},
            {"dir", dir()},
            {"lengths", lengths},
            {"batch", batch},
            {"precision", fft::precision_name(precision)},
            {"in_place", in_place},
            {"planning", planning == fft::Planning::kMeasure ? "measure" : "estimate"}};
  }
};

// The options as given on the command line.
struct FftArgs {
  std::int64_t length = 0, batch = 1;
  int rank = 0;
  std::string lengths, dir = "fwd", precision = "single", planning = "estimate";
  bool real = false, in_place = false, suite = false, list = false;
  std::map<std::string, CLI::Option*> options;
  bool given(const std::string& flag) const { return options.at(flag)->count() > 0; }
};

std::vector<std::int64_t> parse_lengths(const std::string& text) {
  std::vector<std::int64_t> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, 'x');) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || v < 1 || v > kMaxElements)
      bad("--lengths " + text + ": '" + item +
          "' is not a length >= 1 (lengths are joined by 'x', e.g. 512x512)");
    out.push_back(v);
  }
  if (out.empty() || text.back() == 'x')
    bad("--lengths: '" + text + "' is not a list of lengths joined by 'x', e.g. 512x512");
  if (out.size() > 3)
    bad("--lengths " + text + " has " + std::to_string(out.size()) + " dimensions; 1 to 3 allowed");
  return out;
}

// Everything but the sizes, shared by single cases and the suite.
Problem base_problem(const FftArgs& a) {
  Problem p;
  if (a.dir != "fwd" && a.dir != "inv") bad("--dir: '" + a.dir + "' is not fwd or inv");
  const bool inverse = a.dir == "inv";
  p.kind = !a.real ? fft::Kind::kC2C : inverse ? fft::Kind::kC2R : fft::Kind::kR2C;
  p.direction = inverse ? fft::Direction::kInverse : fft::Direction::kForward;
  if (a.precision == "single")
    p.precision = fft::Precision::kSingle;
  else if (a.precision == "double")
    p.precision = fft::Precision::kDouble;
  else
    bad("--precision: '" + a.precision + "' is not single or double");
  if (a.planning == "estimate")
    p.planning = fft::Planning::kEstimate;
  else if (a.planning == "measure")
    p.planning = fft::Planning::kMeasure;
  else
    bad("--planning: '" + a.planning + "' is not estimate or measure");
  p.in_place = a.in_place;
  return p;
}

Problem single_problem(const FftArgs& a) {
  if (a.given("--length") && a.given("--lengths")) bad("give --length or --lengths, not both");
  if (!a.given("--length") && !a.given("--lengths"))
    bad("bench fft: give --length N, --lengths AxB (1 to 3 dimensions) or --suite");
  Problem p = base_problem(a);
  if (a.given("--length")) {
    if (a.length < 1 || a.length > kMaxElements)
      bad("--length " + std::to_string(a.length) + " must be >= 1");
    p.lengths = {a.length};
  } else {
    p.lengths = parse_lengths(a.lengths);
  }
  if (a.given("--rank") && a.rank != static_cast<int>(p.lengths.size()))
    bad("--rank " + std::to_string(a.rank) + " but --lengths " + join_dims(p.lengths) + " has " +
        std::to_string(p.lengths.size()) + " dimension" + (p.lengths.size() > 1 ? "s" : ""));
  if (a.batch < 1) bad("--batch " + std::to_string(a.batch) + " must be >= 1");
  p.batch = a.batch;
  std::int64_t total = p.batch;
  for (std::int64_t l : p.lengths)
    if (__builtin_mul_overflow(total, l, &total) || total > kMaxElements)
      bad("--lengths " + join_dims(p.lengths) + " with --batch " + std::to_string(p.batch) +
          ": too many elements");
  return p;
}

// Issue 6's sizes: powers of two, mixed radices, primes, 2-D, 3-D and a batch of 1-D.
std::vector<Problem> suite_problems(const FftArgs& a) {
  for (const char* flag : {"--length", "--lengths", "--rank", "--batch"})
    if (a.given(flag)) bad(std::string("--suite runs its own sizes: it takes no ") + flag);
  const Problem base = base_problem(a);
  std::vector<Problem> out;
  auto add = [&](const char* group, std::vector<std::int64_t> lengths, std::int64_t batch) {
    Problem p = base;
    p.group = group;
    p.lengths = std::move(lengths);
    p.batch = batch;
    out.push_back(std::move(p));
  };
  for (int e = 4; e <= 20; ++e) add("pow2", {std::int64_t{1} << e}, 1);
  for (std::int64_t n : {60, 1000, 4095, 1155, 15015}) add("mixed", {n}, 1);
  for (std::int64_t n : {127, 1009, 65537}) add("prime", {n}, 1);
  for (std::int64_t n = 64; n <= 2048; n *= 2) add("2d", {n, n}, 1);
  add("3d", {64, 64, 64}, 1);
  add("batched", {1024}, 1000);
  return out;
}

// ---- Data --------------------------------------------------------------------------------

// Calls fn(logical, offset) for each element of `batch` transforms on side s: `logical`
// counts them in row-major order, `offset` is the element's position in the array.
template <typename Fn>
void for_each_element(const fftw::Side& s, std::int64_t batch, Fn&& fn) {
  std::int64_t len[3] = {1, 1, 1}, str[3] = {0, 0, 0};
  const std::size_t rank = s.lengths.size();
  for (std::size_t i = 0; i < rank; ++i) {
    len[3 - rank + i] = s.lengths[i];
    str[3 - rank + i] = s.strides[i];
  }
  std::int64_t logical = 0;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < len[0]; ++i)
      for (std::int64_t j = 0; j < len[1]; ++j)
        for (std::int64_t k = 0; k < len[2]; ++k)
          fn(logical++, b * s.distance + i * str[0] + j * str[1] + k * str[2]);
}

// Uniform random values in [-1, 1] for every logical input element (re, im for complex),
// fixed seed. The half spectrum of a c2r input is made Hermitian (X[-k] = conj X[k] on the
// planes where the last index is its own mirror), so that every correct c2r gives the same
// output and tessera and FFTW can be compared.
std::vector<double> input_values(const Problem& p, const fftw::Side& in) {
  const int per = in.complex ? 2 : 1;
  std::vector<double> v(static_cast<std::size_t>(in.count() * p.batch * per));
  std::mt19937_64 gen(1);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (double& e : v) e = dist(gen);
  if (p.kind != fft::Kind::kC2R) return v;
  const std::size_t rank = in.lengths.size();
  std::int64_t len[3] = {1, 1, 1};
  for (std::size_t i = 0; i < rank; ++i) len[3 - rank + i] = in.lengths[i];
  const std::int64_t n = p.lengths.back();
  std::vector<std::int64_t> planes = {0};
  if (n % 2 == 0) planes.push_back(n / 2);
  for (std::int64_t b = 0; b < p.batch; ++b) {
    double* x = v.data() + 2 * b * in.count();
    for (std::int64_t k : planes) {
      for (std::int64_t i = 0; i < len[0]; ++i)
        for (std::int64_t j = 0; j < len[1]; ++j) {
          const std::int64_t at = (i * len[1] + j) * len[2] + k;
          const std::int64_t mirror =
              (((len[0] - i) % len[0]) * len[1] + (len[1] - j) % len[1]) * len[2] + k;
          if (mirror == at) {
            x[2 * at + 1] = 0;
          } else if (mirror > at) {
            x[2 * mirror] = x[2 * at];
            x[2 * mirror + 1] = -x[2 * at + 1];
          }
        }
    }
  }
  return v;
}

template <typename T>
void scatter(const std::vector<double>& v, const fftw::Side& s, std::int64_t batch, void* buf) {
  T* x = static_cast<T*>(buf);
  const int per = s.complex ? 2 : 1;
  for_each_element(s, batch, [&](std::int64_t logical, std::int64_t offset) {
    for (int c = 0; c < per; ++c)
      x[per * offset + c] = static_cast<T>(v[static_cast<std::size_t>(per * logical + c)]);
  });
}

// Largest |a - b| over the largest |b| on the logical output elements; +inf on a NaN.
template <typename T>
double relative_error(const fftw::Side& s, std::int64_t batch, const void* a, const void* b) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  const int per = s.complex ? 2 : 1;
  double diff = 0, scale = 0;
  bool nan = false;
  for_each_element(s, batch, [&](std::int64_t, std::int64_t offset) {
    for (int c = 0; c < per; ++c) {
      const double u = x[per * offset + c], w = y[per * offset + c];
      nan = nan || std::isnan(u) || std::isnan(w);
      diff = std::max(diff, std::abs(u - w));
      scale = std::max(scale, std::abs(w));
    }
  });
  return nan ? INFINITY : diff / std::max(scale, 1e-300);
}

// The input and output arrays of one library (one array in place), zeroed.
struct Arrays {
  AlignedBuffer in_buf, out_buf;
  void* in = nullptr;
  void* out = nullptr;
  Arrays(const Problem& p, std::int64_t in_elems, std::int64_t out_elems, const char* who) {
    const std::size_t real_bytes = p.precision == fft::Precision::kSingle ? 4 : 8;
    const std::size_t ib = static_cast<std::size_t>(in_elems) * real_bytes;
    const std::size_t ob = static_cast<std::size_t>(out_elems) * real_bytes;
    if (p.in_place) {
      in_buf = AlignedBuffer(std::max(ib, ob), std::string(who) + " data");
      in = out = in_buf.data();
      std::memset(in, 0, in_buf.bytes());
      return;
    }
    in_buf = AlignedBuffer(ib, std::string(who) + " input");
    out_buf = AlignedBuffer(ob, std::string(who) + " output");
    in = in_buf.data();
    out = out_buf.data();
    std::memset(in, 0, ib);
    std::memset(out, 0, ob);
  }
};

// ---- Running -----------------------------------------------------------------------------

struct Anchor {
  bool use = false;
  const fftw::Info* info = nullptr;
  std::string why;  // when not used
};

Anchor open_anchor(const std::string& vs, fft::Precision precision) {
  Anchor a;
  if (vs == "none") {
    a.why = "--vs none";
    return a;
  }
  if (!vs.empty() && vs != "fftw")
    bad("--vs: unknown anchor '" + vs + "' (bench fft knows fftw, or none)");
  a.info = fftw::open(precision, &a.why);
  if (a.info == nullptr && vs == "fftw") throw CommandError{"--vs fftw: " + a.why, 1};
  a.use = a.info != nullptr;
  return a;
}

struct Outcome {
  json j;
  std::vector<std::string> cells;
  std::string error;  // the row failed: tessera refused, or differs from FFTW
  bool ran = false;   // tessera's plan ran (else error says why not)
  double ratio = 0;   // tessera / FFTW median; 0 without FFTW
};

std::string us(double seconds) {
  return format_rate(seconds * 1e6);
}

std::string sci(double v) {
  if (!std::isfinite(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

Outcome run_problem(const Problem& p, int threads, const BenchOptions& o, const Anchor& anchor) {
  Outcome out;
  use_threads(threads);
  const std::string command = p.command() + " --threads " + std::to_string(threads);
  const std::string what = p.transform() + " " + p.shape() + " batch " + std::to_string(p.batch) +
                           " " + std::string(fft::precision_name(p.precision)) + " (" +
                           std::to_string(threads) + " thread" + (threads > 1 ? "s)" : ")");
  const double flops = p.flops();
  auto rate = [flops](double s) { return s > 0 ? flops / s * 1e-9 : 0.0; };
  auto timing_json = [&](const Timing& t) {
    return json{{"median_ms", t.median_s * 1e3}, {"best_ms", t.best_s * 1e3},
                {"samples", t.samples},          {"calls", t.calls},
                {"rate", rate(t.median_s)},      {"rate_best", rate(t.best_s)}};
  };
  json& j = out.j;
  j = {{"transform", p.transform()}, {"shape", p.shape()},    {"threads", threads},
       {"command", command},         {"args", p.args()},      {"n", p.n()},
       {"unit", "GFLOPS"},           {"work_per_call", flops}};
  if (!p.group.empty()) j["group"] = p.group;
  out.cells = {p.transform(), p.shape(), std::to_string(p.batch),
               std::string(fft::precision_name(p.precision)), std::to_string(threads)};
  auto fail = [&](const std::string& message) {
    out.error = message;
    j["error"] = message;
    out.cells.push_back("error: " + message);
    return out;
  };

  const fft::PlanDesc desc = p.desc();
  Result<fftw::Layouts> resolved = fftw::layouts(desc);
  if (!resolved) return fail(resolved.status().message());
  const fftw::Layouts& l = *resolved;
  fft::PlanOptions options;
  options.threads = threads;
  auto t0 = Clock::now();
  Result<fft::Plan> made = fft::Plan::create(desc, options);
  const double plan_ms = ms_since(t0);
  if (!made) return fail("tessera: " + made.status().message());
  const fft::Plan& plan = *made;
  // Sized for both the layouts resolved here and tessera's own view of them.
  const int in_per = l.in.complex ? 2 : 1, out_per = l.out.complex ? 2 : 1;
  const std::int64_t in_elems = in_per * std::max(l.in.span(p.batch), plan.input_span());
  const std::int64_t out_elems = out_per * std::max(l.out.span(p.batch), plan.output_span());
  Arrays ta(p, in_elems, out_elems, "tessera's");

  // FFTW plans with FFTW_MEASURE, which runs transforms on its arrays: they are filled after.
  std::unique_ptr<fftw::Plan> fplan;
  std::unique_ptr<Arrays> fa;
  std::string fftw_missing = anchor.why;
  double fftw_plan_ms = 0;
  if (anchor.use) {
    fa = std::make_unique<Arrays>(p, in_elems, out_elems, "FFTW's");
    t0 = Clock::now();
    Result<std::unique_ptr<fftw::Plan>> fp =
        fftw::make_plan(desc, fa->in, fa->out, threads, kFftwRigor);
    fftw_plan_ms = ms_since(t0);
    if (fp) {
      fplan = std::move(*fp);
    } else {
      fftw_missing = fp.status().message();
    }
  }
  const std::vector<double> values = input_values(p, l.in);
  const bool single = p.precision == fft::Precision::kSingle;
  (single ? scatter<float> : scatter<double>)(values, l.in, p.batch, ta.in);
  if (fplan) {
    std::memset(fa->in, 0, fa->in_buf.bytes());
    (single ? scatter<float> : scatter<double>)(values, l.in, p.batch, fa->in);
  }

  settle_threads(threads);
  if (Status s = plan.execute(ta.in, ta.out); !s.is_ok())
    return fail("tessera: execute: " + s.message());
  double err = 0;
  if (fplan) {
    settle_threads(threads);
    fplan->execute();
    err =
        (single ? relative_error<float> : relative_error<double>)(l.out, p.batch, ta.out, fa->out);
  }
  out.ran = true;
  const std::function<void()> tessera_call = [&plan, &ta] {
    if (!plan.execute(ta.in, ta.out).is_ok())
      throw CommandError{"a repeated tessera execute failed", 1};
  };
  Timing tt, ft;
  if (fplan) {
    std::tie(tt, ft) = measure_alternating(
        tessera_call, [&fplan] { fplan->execute(); }, o,
        [threads] {  // the other library's idle threads go to sleep
          if (threads > 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        });
  } else {
    tt = measure(tessera_call, {}, o);
  }
  j["tessera"] = timing_json(tt);
  j["tessera"]["plan"] = plan.describe();
  j["tessera"]["plan_ms"] = plan_ms;
  json fj;
  if (fplan) {
    out.ratio = tt.median_s / ft.median_s;
    fj = timing_json(ft);
    fj["available"] = true;
    fj["plan_ms"] = fftw_plan_ms;
    fj["planning"] = fftw::rigor_name(kFftwRigor);
    fj["ratio"] = out.ratio;
    fj["max_rel_error"] = std::isfinite(err) ? json(err) : json("inf");
    fj["tolerance"] = p.tolerance();
    fj["matches"] = err <= p.tolerance();
  } else {
    fj = {{"available", false}, {"reason", fftw_missing}};
  }
  j["fftw"] = fj;
  const bool have = fplan != nullptr;
  out.cells.push_back(us(tt.median_s));
  out.cells.push_back(have ? us(ft.median_s) : "n/a");
  out.cells.push_back(have ? format_ratio(out.ratio) : "-");
  out.cells.push_back(format_rate(rate(tt.median_s)));
  out.cells.push_back(have ? format_rate(rate(ft.median_s)) : "-");
  out.cells.push_back(have ? sci(err) : "-");
  out.cells.push_back(command);
  if (have && !(err <= p.tolerance())) {
    out.error = what + ": tessera and FFTW differ: max relative error " + sci(err) + " > " +
                sci(p.tolerance());
    j["error"] = out.error;
  }
  return out;
}

Table make_table() {
  return Table({{"transform", 9, true},
                {"lengths", 16, true},
                {"batch", 5},
                {"prec", 6, true},
                {"thr", 3},
                {"tessera us", 10},
                {"FFTW us", 9},
                {"ratio", 5},
                {"tessera", 7},
                {"FFTW", 7},
                {"rel err", 7},
                {"replay", 1, true}});
}

void print_header(const Anchor& anchor) {
  const CpuInfo& cpu = cpu_info();
  std::string isa(isa_name(cpu.isa()));
  if (const char* cap = std::getenv("TESSERA_MAX_ISA"))
    isa += " (TESSERA_MAX_ISA=" + std::string(cap) + ")";
  std::printf("tessera bench fft on %s: tessera uses %s\n", cpu.model.c_str(), isa.c_str());
  if (anchor.use)
    std::printf("anchor fftw %s (%s; threads: %s), plans %s\n", anchor.info->version.c_str(),
                anchor.info->path.c_str(),
                anchor.info->threads_path.empty() ? "none" : anchor.info->threads_path.c_str(),
                std::string(fftw::rigor_name(kFftwRigor)).c_str());
  else
    std::printf("anchor: none (%s)\n", anchor.why.c_str());
  std::printf(
      "times are medians; ratio = tessera time / FFTW time (below 1: tessera is faster); "
      "GFLOPS = 5 N log2(N) x batch / time, half for real transforms\n\n");
}

// Geometric mean and worst of one group's ratios (rows with both times).
struct GroupRatios {
  std::string group;
  int rows = 0, compared = 0;
  double log_sum = 0, worst = 0;
};

void print_group(const Table& table, const GroupRatios& g, int threads, json& groups,
                 bool json_out) {
  const double geomean = g.compared > 0 ? std::exp(g.log_sum / g.compared) : 0;
  json gj = {{"group", g.group}, {"threads", threads}, {"rows", g.rows}, {"compared", g.compared}};
  if (g.compared > 0) {
    gj["geomean_ratio"] = geomean;
    gj["worst_ratio"] = g.worst;
  }
  groups.push_back(gj);
  if (json_out) return;
  table.print_row(
      {"geomean",
       g.group + " (" + std::to_string(g.compared) + (g.compared == 1 ? " row)" : " rows)"), "", "",
       std::to_string(threads), "", "", g.compared > 0 ? format_ratio(geomean) : "-"});
}

void list_problems(const std::vector<Problem>& problems, bool json_out) {
  json cases = json::array();
  for (const Problem& p : problems) {
    cases.push_back({{"group", p.group},
                     {"transform", p.transform()},
                     {"shape", p.shape()},
                     {"command", p.command()},
                     {"args", p.args()}});
    if (!json_out)
      std::printf("%-8s %-8s %-16s %s\n", p.group.c_str(), p.transform().c_str(),
                  (p.shape() + (p.batch > 1 ? " x" + std::to_string(p.batch) : "")).c_str(),
                  p.command().c_str());
  }
  if (json_out) std::cout << json{{"cases", cases}}.dump(2) << "\n";
}

void run_bench(const FftArgs& a, const BenchOptions& o) {
  if (a.list && !a.suite) bad("--list needs --suite");
  const std::vector<Problem> problems =
      a.suite ? suite_problems(a) : std::vector<Problem>{single_problem(a)};
  check_bench_options(o);
  const std::vector<int> threads = thread_counts(o);
  if (a.list) return list_problems(problems, o.json);
  const Anchor anchor = open_anchor(o.vs, problems.front().precision);
  const Table table = make_table();
  json results = json::array(), groups = json::array();
  bool header_printed = false;
  int failed = 0;
  for (int t : threads) {
    GroupRatios g;
    for (std::size_t i = 0; i < problems.size(); ++i) {
      const Problem& p = problems[i];
      Outcome r = run_problem(p, t, o, anchor);
      if (!a.suite && !r.ran) throw CommandError{r.error, 1};
      if (!o.json && !header_printed) {
        print_header(anchor);
        table.print_header();
        header_printed = true;
      }
      if (!o.json) table.print_row(r.cells);
      if (!r.error.empty()) {
        ++failed;
        std::fprintf(stderr, "tessera: error: %s; replay: %s\n", r.error.c_str(),
                     r.j["command"].get<std::string>().c_str());
      }
      g.group = p.group;
      ++g.rows;
      if (r.ratio > 0) {
        ++g.compared;
        g.log_sum += std::log(r.ratio);
        g.worst = std::max(g.worst, r.ratio);
      }
      results.push_back(std::move(r.j));
      if (a.suite && (i + 1 == problems.size() || problems[i + 1].group != p.group)) {
        print_group(table, g, t, groups, o.json);
        g = GroupRatios{};
      }
    }
  }
  if (o.json) {
    const CpuInfo& cpu = cpu_info();
    json top = {{"cpu", cpu.model},
                {"isa", isa_name(cpu.isa())},
                {"threads", threads},
                {"precision", fft::precision_name(problems.front().precision)},
                {"anchor", anchor.use ? json{{"name", "fftw"},
                                             {"version", anchor.info->version},
                                             {"path", anchor.info->path},
                                             {"threads_path", anchor.info->threads_path},
                                             {"planning", fftw::rigor_name(kFftwRigor)}}
                                      : json(nullptr)},
                {"suite", a.suite},
                {"results", results}};
    if (!anchor.use) top["anchor_reason"] = anchor.why;
    if (a.suite) top["groups"] = groups;
    std::cout << top.dump(2) << "\n";
  }
  if (failed > 0)
    throw CommandError{
        std::to_string(failed) + " of " + std::to_string(results.size()) + " cases failed", 1};
}

}  // namespace

void add_bench_fft_command(CLI::App& bench) {
  auto a = std::make_shared<FftArgs>();
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "fft", "tessera FFT plans against FFTW: times, time ratio, 5 N log2 N GFLOPS, accuracy");
  auto& m = a->options;
  m["--length"] = cmd->add_option("--length", a->length, "Length of a 1-D transform");
  m["--lengths"] = cmd->add_option(
      "--lengths", a->lengths, "Lengths of a 1-D to 3-D transform, fastest-varying last: 512x512");
  m["--rank"] = cmd->add_option("--rank", a->rank, "Rank 1 to 3 (checked against --lengths)");
  m["--real"] = cmd->add_flag("--real", a->real, "Real transform: r2c forward, c2r inverse");
  m["--dir"] = cmd->add_option("--dir", a->dir, "fwd (default) or inv (c2c inverse, or c2r)");
  m["--batch"] = cmd->add_option("--batch", a->batch, "Transforms per call (default 1)");
  m["--precision"] = cmd->add_option("--precision", a->precision, "single (default) or double");
  m["--in-place"] = cmd->add_flag("--in-place", a->in_place, "Output overwrites the input");
  m["--planning"] = cmd->add_option("--planning", a->planning,
                                    "tessera's planning: estimate (default) or measure");
  m["--suite"] = cmd->add_flag("--suite", a->suite,
                               "Powers of two 16..2^20, mixed sizes, primes, 2-D 64^2..2048^2, "
                               "3-D 64^3, 1-D 1024 x 1000 (with --real, --dir, --precision, ...)");
  m["--list"] = cmd->add_flag("--list", a->list, "With --suite: print the cases, run nothing");
  // Replay lines carry --threads; given again, the last one counts (so do these).
  cmd->add_option("--threads", o->threads,
                  "Threads for tessera and FFTW; a list such as 1,2 runs each (default: the "
                  "CPUs in the affinity mask)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--repeat", o->repeat, "At least this many timed samples (default 3)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--min-time", o->min_time,
                  "At least this many seconds of timed samples per library (default 0.2)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--vs", o->vs, "fftw (it must be installed) or none (default: FFTW if found)");
  cmd->add_flag("--json", o->json, "Print one JSON object instead of a table");
  cmd->callback([a, o] { run_bench(*a, *o); });
}

}  // namespace tessera::cli
