// `tessera bench blas <op> [options]` and `tessera bench blas --suite`: GFLOPS (GB/s for
// levels 1 and 2) of tessera and of each anchor on the same inputs, the ratio, a cross-check
// of the results, and the fraction of this machine's peak. The options accept the lines the
// library prints with TESSERA_LOG=bench, and every result carries such a line to replay it.
#include "bench_blas.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include <tessera/core/cpu.hpp>

#include "commands.hpp"
#include "peak.hpp"

namespace tessera::cli {
namespace {

using namespace blas_bench;
using nlohmann::json;

constexpr std::int64_t kDefaultVectorLength = std::int64_t{1} << 20;
constexpr std::int64_t kDefaultMatrixSize = 1024;

// The per-case options as given on the command line.
struct CaseArgs {
  std::string op, dtype = "f32", trans, uplo, side, diag, alpha, beta;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, incx = 1, incy = 1, batch = 0;
  bool suite = false;
  std::map<std::string, CLI::Option*> options;  // by flag, to tell which were given
  bool given(const std::string& flag) const { return options.at(flag)->count() > 0; }
};

struct CaseOption {
  const char* flag;
  unsigned use;
};
constexpr CaseOption kCaseOptions[] = {
    {"--m", kUseM},         {"--n", kUseN},
    {"--k", kUseK},         {"--trans", kUseTrans1 | kUseTrans2},
    {"--side", kUseSide},   {"--uplo", kUseUplo},
    {"--diag", kUseDiag},   {"--lda", kUseLda},
    {"--ldb", kUseLdb},     {"--ldc", kUseLdc},
    {"--incx", kUseIncx},   {"--incy", kUseIncy},
    {"--alpha", kUseAlpha}, {"--beta", kUseBeta},
    {"--batch", kUseBatch},
};

[[noreturn]] void bad(const std::string& message) {
  throw CommandError{message, 2};
}

std::string list_ops() {
  std::string s;
  for (const OpInfo& o : blas_ops()) s += (s.empty() ? "" : ", ") + std::string(o.name);
  return s;
}

std::string list_dtypes(unsigned mask) {
  std::string s;
  for (DType d : kAllDTypes)
    if (mask & bit(d)) s += (s.empty() ? "" : ", ") + std::string(dtype_name(d));
  return s;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

blas::Op parse_op_letter(char ch, const std::string& flag_value) {
  switch (ch) {
    case 'n':
      return blas::Op::kNoTrans;
    case 't':
      return blas::Op::kTrans;
    case 'c':
      return blas::Op::kConjTrans;
  }
  bad("--trans " + flag_value + ": each letter must be n, t or c");
}

// A real number, or a complex one as "re,im" (also "(re,im)", as C++ streams print it).
std::complex<double> parse_scalar(const std::string& flag, std::string s) {
  const std::string given = s;
  if (s.size() >= 2 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
  auto number = [&](const std::string& part) {
    char* end = nullptr;
    const double v = std::strtod(part.c_str(), &end);
    if (part.empty() || *end != '\0' || !std::isfinite(v))
      bad(flag + ": '" + given + "' is not a number or a complex number re,im");
    return v;
  };
  const std::size_t comma = s.find(',');
  if (comma == std::string::npos) return number(s);
  return {number(s.substr(0, comma)), number(s.substr(comma + 1))};
}

// The shortest text that reads back as exactly v.
std::string format_number(double v) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

bool is_complex(DType d) {
  return (bit(d) & kComplexTypes) != 0;
}

std::string format_scalar(std::complex<double> v, DType d) {
  if (!is_complex(d)) return format_number(v.real());
  return format_number(v.real()) + "," + format_number(v.imag());
}

char uplo_letter(blas::Uplo u) {
  return u == blas::Uplo::kUpper ? 'u' : 'l';
}
char side_letter(blas::Side s) {
  return s == blas::Side::kLeft ? 'l' : 'r';
}
char diag_letter(blas::Diag d) {
  return d == blas::Diag::kUnit ? 'u' : 'n';
}

// Tight leading dimensions for those the case has not set (0).
void default_leading_dimensions(const OpInfo& op, BlasCase& c) {
  auto tight = [](std::int64_t rows) { return std::max<std::int64_t>(1, rows); };
  const bool na = c.transa == blas::Op::kNoTrans, nb = c.transb == blas::Op::kNoTrans;
  std::int64_t lda = 1, ldb = 1, ldc = 1;
  const std::string name = op.name;
  if (name == "gemm") {
    lda = tight(na ? c.m : c.k), ldb = tight(nb ? c.k : c.n), ldc = tight(c.m);
  } else if (name == "trsm" || name == "trmm") {
    lda = tight(c.side == blas::Side::kLeft ? c.m : c.n), ldb = tight(c.m);
  } else if (name == "syrk") {
    lda = tight(na ? c.n : c.k), ldc = tight(c.n);
  } else if (name == "gemv" || name == "ger" || name == "geru" || name == "gerc") {
    lda = tight(c.m);
  } else {
    lda = tight(c.n);
  }
  if (c.lda == 0) c.lda = lda;
  if (c.ldb == 0) c.ldb = ldb;
  if (c.ldc == 0) c.ldc = ldc;
}

// Checks the options against the op and turns them into a case; throws CommandError.
BlasCase resolve(const CaseArgs& a) {
  const OpInfo* op = find_op(a.op);
  if (op == nullptr) bad("unknown blas op '" + a.op + "' (ops: " + list_ops() + ")");
  const std::optional<DType> dtype = parse_dtype(a.dtype);
  if (!dtype) bad("--dtype: unknown dtype '" + a.dtype + "' (dtypes: " + list_dtypes(~0u) + ")");
  if ((op->dtypes & bit(*dtype)) == 0)
    bad(std::string(op->name) + " has no dtype " + a.dtype + " (it has " + list_dtypes(op->dtypes) +
        ")");
  for (const CaseOption& o : kCaseOptions) {
    const bool square_m = std::string(o.flag) == "--m" && (op->uses & kSquare);
    if (a.given(o.flag) && (op->uses & o.use) == 0 && !square_m) {
      std::string takes = "--dtype";
      for (const CaseOption& t : kCaseOptions)
        if (op->uses & t.use) takes += std::string(" ") + t.flag;
      bad(std::string(op->name) + " takes no " + o.flag + " (it takes " + takes + ")");
    }
  }
  auto size = [&](const char* flag, std::int64_t v) {
    if (v < 0) bad(std::string(flag) + " = " + std::to_string(v) + " must be >= 0");
    return v;
  };
  const std::map<std::string, std::int64_t> sizes = {
      {"--m", a.m}, {"--n", a.n}, {"--k", a.k}, {"--batch", a.batch}};
  for (const auto& [flag, v] : sizes)
    if (a.given(flag)) size(flag.c_str(), v);

  BlasCase c;
  c.op = op->name;
  c.dtype = *dtype;
  if (op->level == 1) {
    c.n = a.given("--n") ? a.n : kDefaultVectorLength;
  } else if (op->uses & kSquare) {
    if (a.given("--m") && a.given("--n") && a.m != a.n)
      bad(std::string(op->name) + ": --m = " + std::to_string(a.m) +
          " and --n = " + std::to_string(a.n) + " differ, but the matrix is n x n");
    c.n = a.given("--n") ? a.n : a.given("--m") ? a.m : kDefaultMatrixSize;
    c.m = c.n;
    c.k = a.given("--k") ? a.k : c.n;
  } else {
    // A dimension not given takes the value of --n, else --m, else --k, else the default.
    std::int64_t fallback = kDefaultMatrixSize;
    for (const auto& [flag, use] : {std::pair{"--k", kUseK}, {"--m", kUseM}, {"--n", kUseN}})
      if ((op->uses & use) && a.given(flag)) fallback = sizes.at(flag);
    c.m = a.given("--m") ? a.m : fallback;
    c.n = a.given("--n") ? a.n : fallback;
    c.k = a.given("--k") ? a.k : fallback;
  }
  if (a.given("--batch")) {
    if ((bit(c.dtype) & kStandardTypes) == 0)
      bad(c.op + " --batch runs the strided-batched call, which has dtypes " +
          list_dtypes(kStandardTypes));
    c.batch = a.batch;
  } else if (c.op.ends_with("_batched")) {
    c.batch = 1;
  }
  if (a.given("--trans")) {
    const std::string t = lower(a.trans);
    const std::size_t letters = (op->uses & kUseTrans2) ? 2 : 1;
    if (t.size() != letters)
      bad(c.op + " --trans takes " +
          (letters == 2 ? "two letters (transa, transb), e.g. nt" : "one letter: n, t or c"));
    c.transa = parse_op_letter(t[0], a.trans);
    if (letters == 2) c.transb = parse_op_letter(t[1], a.trans);
  }
  auto letter = [&](const char* flag, const std::string& value, const char* allowed) {
    const std::string v = lower(value);
    if (v.size() != 1 || std::string(allowed).find(v[0]) == std::string::npos)
      bad(std::string(flag) + " " + value + ": must be one of the letters " + allowed);
    return v[0];
  };
  if (a.given("--uplo"))
    c.uplo = letter("--uplo", a.uplo, "ul") == 'u' ? blas::Uplo::kUpper : blas::Uplo::kLower;
  if (a.given("--side"))
    c.side = letter("--side", a.side, "lr") == 'l' ? blas::Side::kLeft : blas::Side::kRight;
  if (a.given("--diag"))
    c.diag = letter("--diag", a.diag, "nu") == 'u' ? blas::Diag::kUnit : blas::Diag::kNonUnit;
  // scal's default is not 1: some libraries return at once when alpha is 1.
  if (c.op == "scal" || c.op == "scal_real") c.alpha = 0.5;
  if (a.given("--alpha")) c.alpha = parse_scalar("--alpha", a.alpha);
  if (a.given("--beta")) c.beta = parse_scalar("--beta", a.beta);
  for (const auto& [flag, v] : {std::pair{"--alpha", c.alpha}, {"--beta", c.beta}}) {
    if (!is_complex(c.dtype) && v.imag() != 0)
      bad(std::string(flag) + " has an imaginary part but dtype " + a.dtype + " is real");
    if (c.dtype == DType::kInt8 && (v.real() != std::trunc(v.real()) || std::abs(v.real()) > 2e9))
      bad(std::string(flag) + ": int8 gemm takes a 32-bit integer");
  }
  if (a.given("--incx")) c.incx = a.incx;
  if (a.given("--incy")) c.incy = a.incy;
  default_leading_dimensions(*op, c);
  // After the defaults: an explicit 0 is passed on (and refused by the library).
  if (a.given("--lda")) c.lda = a.lda;
  if (a.given("--ldb")) c.ldb = a.ldb;
  if (a.given("--ldc")) c.ldc = a.ldc;
  return c;
}

// The command line that runs this case again (the format TESSERA_LOG=bench prints).
std::string replay_command(const BlasCase& c, const OpInfo& op, int threads) {
  const unsigned u = op.uses;
  std::string s = "tessera bench blas " + c.op + " --dtype " + std::string(dtype_name(c.dtype));
  auto add = [&](const char* flag, const std::string& v) {
    s += std::string(" ") + flag + " " + v;
  };
  if (u & kUseTrans2)
    add("--trans", std::string(blas::op_name(c.transa)) + std::string(blas::op_name(c.transb)));
  if (u & kUseM) add("--m", std::to_string(c.m));
  if (u & kUseN) add("--n", std::to_string(c.n));
  if (u & kUseK) add("--k", std::to_string(c.k));
  if (u & kUseSide) add("--side", std::string(1, side_letter(c.side)));
  if (u & kUseUplo) add("--uplo", std::string(1, uplo_letter(c.uplo)));
  if (u & kUseTrans1) add("--trans", std::string(blas::op_name(c.transa)));
  if (u & kUseDiag) add("--diag", std::string(1, diag_letter(c.diag)));
  if (u & kUseLda) add("--lda", std::to_string(c.lda));
  if (u & kUseLdb) add("--ldb", std::to_string(c.ldb));
  if (u & kUseLdc) add("--ldc", std::to_string(c.ldc));
  if (u & kUseIncx) add("--incx", std::to_string(c.incx));
  if (u & kUseIncy) add("--incy", std::to_string(c.incy));
  if (u & kUseAlpha) add("--alpha", format_scalar(c.alpha, c.dtype));
  if (u & kUseBeta) add("--beta", format_scalar(c.beta, c.dtype));
  if ((u & kUseBatch) && c.batch >= 0) add("--batch", std::to_string(c.batch));
  add("--threads", std::to_string(threads));
  return s;
}

// "128x768x768 nn", "n=1048576", "1024x512 LUNN": the table's shape column.
std::string shape(const BlasCase& c, const OpInfo& op) {
  const unsigned u = op.uses;
  auto up = [](char ch) { return static_cast<char>(std::toupper(static_cast<unsigned char>(ch))); };
  std::string s;
  if (op.level == 1) {
    s = "n=" + std::to_string(c.n);
    if (c.incx != 1 || ((u & kUseIncy) && c.incy != 1))
      s += " inc=" + std::to_string(c.incx) + ((u & kUseIncy) ? "," + std::to_string(c.incy) : "");
    return s;
  }
  if (u & kSquare)
    s = std::to_string(c.n) + ((u & kUseK) ? "x" + std::to_string(c.k) : "");
  else
    s = std::to_string(c.m) + "x" + std::to_string(c.n) +
        ((u & kUseK) ? "x" + std::to_string(c.k) : "");
  std::string mode;
  if (u & kUseTrans2)
    mode = std::string(blas::op_name(c.transa)) + std::string(blas::op_name(c.transb));
  if (u & kUseSide) mode += up(side_letter(c.side));
  if (u & kUseUplo) mode += up(uplo_letter(c.uplo));
  if (u & kUseTrans1) mode += up(blas::op_name(c.transa)[0]);
  if (u & kUseDiag) mode += up(diag_letter(c.diag));
  if (!mode.empty()) s += " " + mode;
  if (c.batch >= 0) s += " b" + std::to_string(c.batch);
  return s;
}

json args_json(const BlasCase& c, const OpInfo& op) {
  const unsigned u = op.uses;
  json j = json::object();
  if (u & kUseM) j["m"] = c.m;
  if (u & kUseN) j["n"] = c.n;
  if (u & kUseK) j["k"] = c.k;
  if (u & kUseTrans2) j["transb"] = blas::op_name(c.transb);
  if (u & (kUseTrans1 | kUseTrans2)) j["transa"] = blas::op_name(c.transa);
  if (u & kUseSide) j["side"] = std::string(1, side_letter(c.side));
  if (u & kUseUplo) j["uplo"] = std::string(1, uplo_letter(c.uplo));
  if (u & kUseDiag) j["diag"] = std::string(1, diag_letter(c.diag));
  if (u & kUseLda) j["lda"] = c.lda;
  if (u & kUseLdb) j["ldb"] = c.ldb;
  if (u & kUseLdc) j["ldc"] = c.ldc;
  if (u & kUseIncx) j["incx"] = c.incx;
  if (u & kUseIncy) j["incy"] = c.incy;
  if (u & kUseAlpha) j["alpha"] = format_scalar(c.alpha, c.dtype);
  if (u & kUseBeta) j["beta"] = format_scalar(c.beta, c.dtype);
  if (u & kUseBatch) j["batch"] = c.batch >= 0 ? json(c.batch) : json(nullptr);
  return j;
}

// ---- Running -----------------------------------------------------------------------------

struct Job {
  BlasCase c;
  const OpInfo* op;
};

struct Layout {
  std::vector<std::string> anchors;  // anchor columns, in order
  bool vs_sgemm = false;             // some case is a low-precision gemm
};

double peak_per_core(const Peak& peak, const std::string& kind) {
  if (kind == "f32") return peak.f32;
  if (kind == "f64") return peak.f64;
  if (kind == "bf16") return peak.bf16;
  if (kind == "int8") return peak.int8;
  return 0;
}

struct Outcome {
  json j;
  std::vector<std::string> cells;
  std::vector<std::string> warnings;
  std::string error;  // tessera refused the case
};

Outcome run_job(const Job& job, int threads, const BenchOptions& o, const Layout& layout) {
  const BlasCase& c = job.c;
  Outcome out;
  use_threads(threads);
  blas::Handle h;
  if (Status s = h.set_num_threads(threads); !s.is_ok()) throw CommandError{s.message(), 1};
  Plan p;
  job.op->make(c, h, opened_anchors(), p);
  const std::string command = replay_command(c, *job.op, threads);
  const std::string what = c.op + " " + std::string(dtype_name(c.dtype)) + " " + shape(c, *job.op) +
                           " (" + std::to_string(threads) + " threads)";
  auto rate = [&](double seconds) { return seconds > 0 ? p.work / seconds * 1e-9 : 0.0; };
  auto timing_json = [&](const Timing& t) {
    return json{{"median_ms", t.median_s * 1e3}, {"best_ms", t.best_s * 1e3},
                {"samples", t.samples},          {"calls", t.calls},
                {"rate", rate(t.median_s)},      {"rate_best", rate(t.best_s)}};
  };
  auto check = [&](json& j, const std::string& other, double err) {
    j["max_rel_error"] = std::isfinite(err) ? json(err) : json("inf");
    j["tolerance"] = p.tolerance;
    j["matches"] = err <= p.tolerance;
    if (!(err <= p.tolerance)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3g > %.3g", err, p.tolerance);
      out.warnings.push_back(what + ": tessera and " + other + " differ: max relative error " +
                             buf + "; replay: " + command);
    }
  };

  json& j = out.j;
  j = {{"op", c.op},
       {"dtype", dtype_name(c.dtype)},
       {"shape", shape(c, *job.op)},
       {"threads", threads},
       {"command", command},
       {"args", args_json(c, *job.op)},
       {"unit", p.bandwidth ? "GB/s" : "GFLOPS"},
       {"work_per_call", p.work}};
  out.cells = {c.op, std::string(dtype_name(c.dtype)), shape(c, *job.op), std::to_string(threads)};

  // tessera first: its result is the reference of the cross-check.
  settle_threads(threads);
  p.outputs.restore();
  if (Status s = p.tessera(); !s.is_ok()) {
    out.error = s.message();
    j["error"] = out.error;
    out.cells.push_back("error");
    return out;
  }
  p.outputs.save_reference();
  std::function<void()> restore;
  if (p.restore_each_call) restore = [&p] { p.outputs.restore(); };
  const Timing tt = measure(
      [&p] {
        if (!p.tessera().is_ok()) throw CommandError{"a repeated tessera call failed", 1};
      },
      restore, o);
  const double tessera_rate = rate(tt.median_s);
  j["tessera"] = timing_json(tt);
  out.cells.push_back(format_rate(tessera_rate));
  out.cells.push_back(p.bandwidth ? "GB/s" : "GFLOPS");

  json anchors = json::object();
  for (const AnchorRun& r : p.anchors) {
    if (!r.call) {
      anchors[r.name] = {{"available", false}, {"reason", r.missing}};
      out.cells.push_back("n/a");
      out.cells.push_back("-");
      continue;
    }
    settle_threads(threads);
    p.outputs.restore();
    r.call();
    const double err = p.outputs.error_vs_reference();
    const Timing at = measure(r.call, restore, o);
    const double anchor_rate = rate(at.median_s);
    json aj = timing_json(at);
    aj["available"] = true;
    aj["ratio"] = anchor_rate > 0 ? json(tessera_rate / anchor_rate) : json(nullptr);
    check(aj, r.name, err);
    anchors[r.name] = aj;
    out.cells.push_back(format_rate(anchor_rate));
    out.cells.push_back(format_ratio(anchor_rate > 0 ? tessera_rate / anchor_rate : 0));
  }
  j["anchors"] = anchors;

  if (p.baseline) {
    settle_threads(threads);
    p.baseline_outputs.restore();
    if (Status s = p.baseline(); !s.is_ok()) {
      out.warnings.push_back(what + ": the f32 baseline failed: " + s.message());
      out.cells.push_back("-");
    } else {
      const double err = p.baseline_error();
      std::function<void()> baseline_restore;
      if (p.restore_each_call) baseline_restore = [&p] { p.baseline_outputs.restore(); };
      const Timing bt = measure([&p] { (void)p.baseline().is_ok(); }, baseline_restore, o);
      const double sgemm_rate = rate(bt.median_s);
      json bj = timing_json(bt);
      bj["ratio"] = sgemm_rate > 0 ? json(tessera_rate / sgemm_rate) : json(nullptr);
      check(bj, "tessera's sgemm", err);
      j["vs_sgemm"] = bj;
      out.cells.push_back(format_ratio(sgemm_rate > 0 ? tessera_rate / sgemm_rate : 0));
    }
  } else if (layout.vs_sgemm) {
    out.cells.push_back("-");
  }

  const double per_core = p.bandwidth ? 0 : peak_per_core(machine_peak(), p.peak_kind);
  if (per_core > 0) {
    const double peak = per_core * threads;
    j["peak_gflops"] = peak;
    j["percent_peak"] = 100 * tessera_rate / peak;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", 100 * tessera_rate / peak);
    out.cells.push_back(buf);
  } else {
    j["peak_gflops"] = nullptr;
    j["percent_peak"] = nullptr;
    out.cells.push_back("-");
  }
  j["warnings"] = out.warnings;
  return out;
}

// ---- The suite ---------------------------------------------------------------------------

Job make_job(const char* op_name, DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
             blas::Op trans = blas::Op::kNoTrans) {
  const OpInfo* op = find_op(op_name);
  BlasCase c;
  c.op = op_name;
  c.dtype = dtype;
  c.m = m, c.n = n, c.k = k;
  c.transa = trans;
  default_leading_dimensions(*op, c);
  return {c, op};
}

// The fixed list of issue 3: square sgemm, deep-learning shapes, dgemm, bf16 and int8 gemm
// against sgemm, and level 1/2 on data larger than the L2 cache.
std::vector<Job> suite_jobs() {
  std::vector<Job> jobs;
  for (std::int64_t s : {32, 64, 128, 256, 512, 1024, 2048, 4096})
    jobs.push_back(make_job("gemm", DType::kF32, s, s, s));
  const std::int64_t shapes[][3] = {{1, 1000, 2048},  {128, 768, 768}, {128, 3072, 768},
                                    {128, 768, 3072}, {3136, 64, 576}, {784, 128, 1152},
                                    {196, 256, 2304}, {49, 512, 4608}};
  for (const auto& s : shapes) jobs.push_back(make_job("gemm", DType::kF32, s[0], s[1], s[2]));
  for (std::int64_t s : {256, 512, 1024, 2048})
    jobs.push_back(make_job("gemm", DType::kF64, s, s, s));
  jobs.push_back(make_job("gemm", DType::kBf16, 2048, 2048, 2048));
  jobs.push_back(make_job("gemm", DType::kInt8, 2048, 2048, 2048));
  std::int64_t l2 = cpu_info().cache_bytes(2);
  if (l2 <= 0) l2 = std::int64_t{1} << 20;
  for (DType d : {DType::kF32, DType::kF64}) {
    const std::int64_t elem = d == DType::kF32 ? 4 : 8;
    // Each vector, and the matrix, four times the L2 cache.
    const std::int64_t n = 4 * l2 / elem;
    const auto side = static_cast<std::int64_t>(std::sqrt(static_cast<double>(n)) / 64) * 64;
    for (const char* op : {"axpy", "dot"}) jobs.push_back(make_job(op, d, 0, n, 0));
    jobs.push_back(make_job("gemv", d, side, side, 0, blas::Op::kNoTrans));
    jobs.push_back(make_job("gemv", d, side, side, 0, blas::Op::kTrans));
  }
  return jobs;
}

// ---- Output ------------------------------------------------------------------------------

json peak_json(const Peak& p, int threads) {
  auto value = [&](double v) { return v > 0 ? json(v * threads) : json(nullptr); };
  return {{"f32", value(p.f32)},
          {"f64", value(p.f64)},
          {"bf16", value(p.bf16)},
          {"int8", value(p.int8)}};
}

void print_header(const Peak& peak, const std::vector<int>& threads) {
  const CpuInfo& cpu = cpu_info();
  std::string isa(isa_name(cpu.isa()));
  if (std::getenv("TESSERA_MAX_ISA") != nullptr)
    isa += " (TESSERA_MAX_ISA=" + std::string(std::getenv("TESSERA_MAX_ISA")) + ")";
  std::printf("tessera bench blas on %s: tessera uses %s\n", cpu.model.c_str(), isa.c_str());
  std::string p = "f32 " + format_rate(peak.f32) + ", f64 " + format_rate(peak.f64);
  if (peak.bf16 > 0) p += ", bf16 " + format_rate(peak.bf16);
  if (peak.int8 > 0) p += ", int8 " + format_rate(peak.int8);
  std::printf("peak per core (%s loops, measured): %s GFLOPS; %%peak = rate / (that x %s)\n",
              peak.isa.c_str(), p.c_str(), threads.size() == 1 ? "threads" : "thr");
  const auto& anchors = opened_anchors();
  if (anchors.empty()) std::printf("anchors: none\n");
  for (const Anchor& a : anchors)
    std::printf("anchor %-8s %s (%s)\n", a.name.c_str(), a.version.c_str(), a.path.c_str());
  std::printf("ratio = tessera / anchor; GB/s for levels 1 and 2\n\n");
}

Table make_table(const Layout& layout) {
  std::vector<Table::Column> cols = {{"op", 5, true}, {"dtype", 5, true}, {"shape", 22, true},
                                     {"thr", 3},      {"tessera", 8},     {"unit", 6, true}};
  for (const std::string& a : layout.anchors) {
    cols.push_back({a, std::max<int>(8, static_cast<int>(a.size()))});
    cols.push_back({"ratio", 5});
  }
  if (layout.vs_sgemm) cols.push_back({"vs sgemm", 8});
  cols.push_back({"%peak", 5});
  return Table(std::move(cols));
}

bool is_mixed_gemm(const BlasCase& c) {
  return c.op == "gemm" && (bit(c.dtype) & kStandardTypes) == 0;
}

void run(const CaseArgs& args, const BenchOptions& o) {
  check_bench_options(o);
  const std::vector<int> threads = thread_counts(o);
  std::vector<Job> jobs;
  if (args.suite) {
    if (!args.op.empty()) bad("--suite runs a fixed list of cases: give no op");
    for (const CaseOption& opt : kCaseOptions)
      if (args.given(opt.flag)) bad(std::string("--suite takes no ") + opt.flag);
    if (args.given("--dtype")) bad("--suite takes no --dtype");
    jobs = suite_jobs();
  } else {
    if (args.op.empty()) bad("name an op (" + list_ops() + ") or give --suite");
    BlasCase c = resolve(args);
    jobs.push_back({c, find_op(c.op)});
  }
  const std::vector<Anchor>& anchors = open_anchors(o.vs);
  Layout layout;
  for (const Anchor& a : anchors) layout.anchors.push_back(a.name);
  for (const Job& j : jobs) layout.vs_sgemm = layout.vs_sgemm || is_mixed_gemm(j.c);
  const Peak& peak = machine_peak();  // before any library has started its threads
  const Table table = make_table(layout);
  json results = json::array();
  bool header_printed = false;
  int failed = 0;
  for (const Job& job : jobs) {
    for (int t : threads) {
      Outcome r = run_job(job, t, o, layout);
      if (!r.error.empty() && !args.suite) throw CommandError{r.error, 1};
      if (!o.json && !header_printed) {
        print_header(peak, threads);
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
      results.push_back(std::move(r.j));
    }
  }
  if (o.json) {
    json anchor_list = json::array();
    for (const Anchor& a : anchors)
      anchor_list.push_back({{"name", a.name}, {"version", a.version}, {"path", a.path}});
    const CpuInfo& cpu = cpu_info();
    json top = {
        {"cpu", cpu.model},
        {"isa", isa_name(cpu.isa())},
        {"threads", threads},
        {"peak", {{"isa", peak.isa}, {"per_core_gflops", peak_json(peak, 1)}}},
        {"peak_gflops", peak_json(peak, threads.front())},
        {"anchors", anchor_list},
        {"suite", args.suite},
        {"results", results},
    };
    std::cout << top.dump(2) << "\n";
  }
  if (failed > 0)
    throw CommandError{
        std::to_string(failed) + " of " + std::to_string(results.size()) + " cases failed", 1};
}

std::string ops_footer() {
  std::string s = "Ops (level, dtypes, what):\n";
  for (const OpInfo& op : blas_ops()) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-21s L%d  %-36s %s\n", op.name, op.level,
                  list_dtypes(op.dtypes).c_str(), op.summary);
    s += line;
  }
  return s +
         "Sizes not given take the value of --n, else --m, else --k, else 1024 (level 1: n = "
         "1048576; n x n matrices also accept --m).\nLeading dimensions default to tight.\n";
}

}  // namespace

void add_bench_blas_command(CLI::App& bench) {
  auto args = std::make_shared<CaseArgs>();
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "blas", "tessera BLAS against OpenBLAS and BLIS: GFLOPS (GB/s), ratios, % of peak");
  cmd->add_option("op", args->op, "The routine: gemm, trsm, gemv, axpy, ... (see below)");
  cmd->add_flag("--suite", args->suite, "Run the fixed list of issue 3 instead of one case");
  auto& o = args->options;
  o["--dtype"] = cmd->add_option("--dtype", args->dtype,
                                 "f32 (default), f64, c64, c128; gemm also bf16, f16, int8");
  o["--m"] = cmd->add_option("--m", args->m, "Rows of the result (or of A)");
  o["--n"] = cmd->add_option("--n", args->n, "Columns of the result; the vector length");
  o["--k"] = cmd->add_option("--k", args->k, "The inner dimension");
  o["--trans"] = cmd->add_option("--trans", args->trans,
                                 "n, t or c: two letters for gemm (transa transb), else one");
  o["--side"] = cmd->add_option("--side", args->side, "l or r (trsm, trmm)");
  o["--uplo"] = cmd->add_option("--uplo", args->uplo, "u or l");
  o["--diag"] = cmd->add_option("--diag", args->diag, "n (non-unit) or u (unit)");
  o["--lda"] = cmd->add_option("--lda", args->lda, "Leading dimension of A (default: tight)");
  o["--ldb"] = cmd->add_option("--ldb", args->ldb, "Leading dimension of B (default: tight)");
  o["--ldc"] = cmd->add_option("--ldc", args->ldc, "Leading dimension of C (default: tight)");
  o["--incx"] = cmd->add_option("--incx", args->incx, "Increment of x (default 1)");
  o["--incy"] = cmd->add_option("--incy", args->incy, "Increment of y (default 1)");
  o["--alpha"] = cmd->add_option("--alpha", args->alpha,
                                 "alpha: a number, or re,im for complex (default 1; scal 0.5)");
  o["--beta"] = cmd->add_option("--beta", args->beta, "beta (default 0)");
  o["--batch"] = cmd->add_option("--batch", args->batch,
                                 "Run the strided-batched call over this many matrices");
  add_bench_options(cmd, *opts);
  cmd->footer(ops_footer());
  cmd->callback([args, opts] { run(*args, *opts); });
}

}  // namespace tessera::cli
