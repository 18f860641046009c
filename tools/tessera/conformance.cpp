// `tessera conformance DIR [--exclude FILE] [--filter TEXT] [--threads N] [--verbose]
// [--write-exclusions FILE]`: runs ONNX backend node tests (DIR/<test>/model.onnx with
// test_data_set_*/input_<j>.pb and output_<j>.pb, the layout of ONNX's repository and of
// tests/conformance/generate_node_tests.py) through exec::Session and compares the outputs with
// ONNX's tolerance (|got - want| <= 1e-7 + 1e-3 |want|, NaN matching NaN; integers and bools
// exactly; dtype and dims exactly).
//
// Tests named in the exclusion file (one per line: the test's name, or a prefix ending in '*',
// then its reason; '#' starts a comment) are skipped. The run prints one line per failure
// (and per pass with --verbose), then `N passed, N failed, N skipped` and exits non-zero when
// any test ran and failed. --write-exclusions writes an exclusion file of this run's failures
// plus the excluded tests, each with its reason, for review before it replaces the old one.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <tessera/dnn.hpp>
#include <tessera/dnn/data_movement.hpp>
#include <tessera/graph.hpp>
#include <tessera/session.hpp>

#include "commands.hpp"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

struct ConformanceArgs {
  std::string dir;
  std::string exclude;
  std::string filter;
  std::string write_exclusions;
  int threads = 0;
  bool verbose = false;
};

struct Exclusion {
  std::string pattern;  // a name, or a prefix when it ended in '*'
  bool prefix = false;
  std::string reason;
};

std::vector<Exclusion> read_exclusions(const std::string& path) {
  std::vector<Exclusion> ex;
  if (path.empty()) return ex;
  std::ifstream in(path);
  if (!in) throw CommandError{"cannot open the exclusion file '" + path + "'"};
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const auto e = line.find_first_of(" \t", b);
    Exclusion x;
    x.pattern = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (e != std::string::npos) {
      const auto r = line.find_first_not_of(" \t", e);
      if (r != std::string::npos) x.reason = line.substr(r, line.find_last_not_of(" \t\r") + 1 - r);
    }
    if (x.reason.empty()) throw CommandError{path + ":" + std::to_string(no) + ": '" + x.pattern + "' has no reason"};
    if (x.pattern.back() == '*') {
      x.prefix = true;
      x.pattern.pop_back();
    }
    ex.push_back(std::move(x));
  }
  return ex;
}

const Exclusion* excluded(const std::vector<Exclusion>& ex, const std::string& name) {
  for (const Exclusion& x : ex)
    if (x.prefix ? name.starts_with(x.pattern) : name == x.pattern) return &x;
  return nullptr;
}

Result<graph::Constant> read_tensor(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return not_found("cannot open '" + p.string() + "'");
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return graph::import_tensor(std::as_bytes(std::span<const char>(data)), p.filename().string());
}

dnn::TensorDesc desc_of(const Tensor& t) { return dnn::TensorDesc{t.dtype(), t.shape().dims(), t.strides()}; }

// t's elements as T (a packed copy made by cast).
template <typename T>
Result<std::vector<T>> elements(dnn::Handle& h, const Tensor& t, DType as) {
  std::vector<T> v(static_cast<std::size_t>(t.numel()));
  std::vector<std::int64_t> strides(t.shape().dims().size());
  std::int64_t s = 1;
  for (std::size_t i = strides.size(); i-- > 0;) {
    strides[i] = s;
    s *= t.shape().dims()[i];
  }
  if (v.empty()) return v;
  TESSERA_RETURN_IF_ERROR(dnn::cast(h, desc_of(t), t.data(), dnn::TensorDesc{as, t.shape().dims(), strides}, v.data()));
  return v;
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// Whether `got` matches `want_c` (ONNX's backend-test tolerance); the error says where not.
Status compare(dnn::Handle& h, const Tensor& got, const graph::Constant& want_c, const std::string& what) {
  TESSERA_ASSIGN_OR_RETURN(Tensor want, exec::tensor_from_constant(want_c, what + " (expected)"));
  if (got.dtype() != want.dtype())
    return invalid_argument(what + " is " + std::string(dtype_name(got.dtype())) + ", expected " + std::string(dtype_name(want.dtype())));
  if (got.shape().dims() != want.shape().dims())
    return invalid_argument(what + " has dims " + got.shape().to_string() + ", expected " + want.shape().to_string());
  if (is_complex(got.dtype())) return unsupported(what + ": complex outputs are not compared");
  if (!is_floating(got.dtype()) && !is_small_float(got.dtype())) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::int64_t> g, elements<std::int64_t>(h, got, DType::kI64));
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::int64_t> w, elements<std::int64_t>(h, want, DType::kI64));
    for (std::size_t i = 0; i < g.size(); ++i)
      if (g[i] != w[i])
        return invalid_argument(what + "[" + std::to_string(i) + "] is " + std::to_string(g[i]) + ", expected " + std::to_string(w[i]));
    return Status::ok();
  }
  TESSERA_ASSIGN_OR_RETURN(std::vector<double> g, elements<double>(h, got, DType::kF64));
  TESSERA_ASSIGN_OR_RETURN(std::vector<double> w, elements<double>(h, want, DType::kF64));
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool ok = std::isnan(w[i]) ? std::isnan(g[i])
                    : std::isinf(w[i]) ? g[i] == w[i]
                                       : std::abs(g[i] - w[i]) <= 1e-7 + 1e-3 * std::abs(w[i]);
    if (!ok) return invalid_argument(what + "[" + std::to_string(i) + "] is " + fmt(g[i]) + ", expected " + fmt(w[i]));
  }
  return Status::ok();
}

std::vector<fs::path> sorted_entries(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with(prefix)) v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

// Runs one test folder; ok, or the first problem.
Status run_test(const fs::path& dir, const ConformanceArgs& a) {
  exec::SessionOptions options;
  options.threads = a.threads;
  TESSERA_ASSIGN_OR_RETURN(exec::Session session, exec::Session::open(dir / "model.onnx", options));
  dnn::Handle h;
  const std::vector<fs::path> sets = sorted_entries(dir, "test_data_set_");
  if (sets.empty()) return not_found("no test_data_set_* folder");
  for (const fs::path& set : sets) {
    const std::string tag = set.filename().string();
    std::vector<exec::NamedTensor> inputs;
    for (std::size_t j = 0; fs::exists(set / ("input_" + std::to_string(j) + ".pb")); ++j) {
      if (j >= session.inputs().size())
        return invalid_argument(tag + ": more input files than the model's " + std::to_string(session.inputs().size()) + " inputs");
      TESSERA_ASSIGN_OR_RETURN(graph::Constant c, read_tensor(set / ("input_" + std::to_string(j) + ".pb")));
      TESSERA_ASSIGN_OR_RETURN(Tensor t, exec::tensor_from_constant(c, tag + ": input " + std::to_string(j)));
      inputs.push_back({session.inputs()[j].name, std::move(t)});
    }
    // Twice: the first run records the tensors' sizes, the second runs in the memory plan.
    for (const char* run : {"", " (planned run)"}) {
      TESSERA_ASSIGN_OR_RETURN(std::vector<exec::NamedTensor> outputs, session.run(inputs));
      for (std::size_t j = 0; j < outputs.size(); ++j) {
        const fs::path file = set / ("output_" + std::to_string(j) + ".pb");
        if (!fs::exists(file)) return not_found(tag + ": no " + file.filename().string());
        TESSERA_ASSIGN_OR_RETURN(graph::Constant want, read_tensor(file));
        TESSERA_RETURN_IF_ERROR(compare(h, outputs[j].tensor, want, tag + run + ": output '" + outputs[j].name + "'"));
      }
    }
  }
  return Status::ok();
}

// The first line of a message, shortened for one line of a report.
std::string short_reason(const std::string& m) {
  std::string s = m.substr(0, m.find('\n'));
  if (s.size() > 240) s = s.substr(0, 237) + "...";
  return s;
}

void run_conformance(const ConformanceArgs& a) {
  if (!fs::is_directory(a.dir)) throw CommandError{"'" + a.dir + "' is not a folder of ONNX node tests"};
  const std::vector<Exclusion> ex = read_exclusions(a.exclude);
  std::vector<fs::path> tests;
  for (const auto& e : fs::directory_iterator(a.dir))
    if (fs::exists(e.path() / "model.onnx") && e.path().filename().string().find(a.filter) != std::string::npos)
      tests.push_back(e.path());
  std::sort(tests.begin(), tests.end());
  if (tests.empty()) throw CommandError{"no tests (folders with a model.onnx) in '" + a.dir + "'" + (a.filter.empty() ? "" : " matching '" + a.filter + "'")};

  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, std::string> reasons;  // for --write-exclusions: failures and exclusions
  for (const fs::path& t : tests) {
    const std::string name = t.filename().string();
    if (const Exclusion* x = excluded(ex, name)) {
      ++skipped;
      reasons[name] = x->reason;
      if (a.verbose) std::cout << "SKIP " << name << "  " << x->reason << "\n";
      continue;
    }
    Status st = Status::ok();
    try {
      st = run_test(t, a);
    } catch (const std::exception& e) {
      st = internal_error(std::string("exception: ") + e.what());
    }
    if (st.is_ok()) {
      ++passed;
      if (a.verbose) std::cout << "PASS " << name << "\n";
    } else {
      ++failed;
      reasons[name] = short_reason(st.message());
      std::cout << "FAIL " << name << "  " << reasons[name] << "\n";
    }
  }
  if (!a.write_exclusions.empty()) {
    std::ofstream out(a.write_exclusions);
    out << "# ONNX backend node tests tessera does not pass yet, each with its reason (tessera conformance --exclude).\n";
    for (const auto& [name, reason] : reasons) out << name << "  " << reason << "\n";
    if (!out) throw CommandError{"writing '" + a.write_exclusions + "' failed"};
  }
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  if (failed > 0) throw CommandError{std::to_string(failed) + " of " + std::to_string(passed + failed) + " tests failed"};
}

}  // namespace

void add_conformance_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("conformance", "Run ONNX backend node tests (model.onnx + test_data_set_*) and compare the outputs");
  auto a = std::make_shared<ConformanceArgs>();
  cmd->add_option("dir", a->dir, "a folder of node tests, one sub-folder each")->required();
  cmd->add_option("--exclude", a->exclude, "tests to skip: lines of 'NAME[*] REASON'");
  cmd->add_option("--filter", a->filter, "only the tests whose name contains this text");
  cmd->add_option("--threads", a->threads, "threads per primitive (0: the thread pool)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--verbose,-v", a->verbose, "a line per passed and skipped test too");
  cmd->add_option("--write-exclusions", a->write_exclusions, "write this run's failures and exclusions as an exclusion file");
  cmd->callback([a] { run_conformance(*a); });
}

}  // namespace tessera::cli
