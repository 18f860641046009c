// `tessera run [MODEL.onnx] [--input name=file.npy ...] [--output-dir DIR] [--iterations N]
// [--warmup N] [--threads N] [--batch N] [--opt-level L] [--disable-pass P] [--no-memory-plan]
// [--parallel-branches] [--json]`: opens a
// session (graph passes of the level), fills the inputs not given from files with seeded random values, runs the warm-up and the timed iterations and
// prints the latency (min / median / p90) and throughput; outputs go to DIR as .npy. With no
// model it runs the one shipped in examples/models/.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <tessera/core/npy.hpp>
#include <tessera/dnn.hpp>
#include <tessera/dnn/data_movement.hpp>
#include <tessera/session.hpp>

#include "commands.hpp"

namespace tessera::cli {
namespace {

using nlohmann::json;

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  int iterations = 10;
  int warmup = 2;
  int threads = 0;
  std::int64_t batch = 1;
  bool json_out = false;
  int opt_level = 2;
  std::vector<std::string> disabled;
  bool no_memory_plan = false;
  bool parallel_branches = false;
  std::string profile;
};

template <typename T>
T or_throw(Result<T> r) {
  if (!r.is_ok()) throw CommandError{r.status().message()};
  return std::move(r).value();
}

std::string file_name(const std::string& value) {
  std::string s = value;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') ch = '_';
  return s + ".npy";
}

void run_model(const RunArgs& a) {
  if (a.iterations < 1 || a.warmup < 0) throw CommandError{"--iterations must be >= 1 and --warmup >= 0"};
  const std::string path = a.model.empty() ? TESSERA_DEFAULT_MODEL : a.model;
  exec::SessionOptions options;
  options.threads = a.threads;
  options.opt_level = a.opt_level;
  options.disabled_passes.insert(a.disabled.begin(), a.disabled.end());
  options.plan_memory = !a.no_memory_plan;
  options.parallel_branches = a.parallel_branches;
  options.profile = !a.profile.empty();
  exec::Session session = or_throw(exec::Session::open(path, options));

  std::map<std::string, std::string> files;
  for (const std::string& spec : a.inputs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) throw CommandError{"--input '" + spec + "': expected NAME=FILE.npy"};
    files[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::mt19937 rng(1234);
  std::vector<exec::NamedTensor> inputs;
  json jin = json::array();
  for (const exec::IoInfo& io : session.inputs()) {
    const auto it = files.find(io.name);
    if (it == files.end() && io.has_default) continue;
    Tensor t = it != files.end() ? or_throw(read_npy(it->second)) : random_input(io, a.batch, rng);
    jin.push_back({{"name", io.name}, {"dims", t.shape().dims()}, {"dtype", dtype_name(t.dtype())}, {"source", it != files.end() ? it->second : "random"}});
    inputs.push_back({io.name, std::move(t)});
    if (it != files.end()) files.erase(it);
  }
  if (!files.empty()) throw CommandError{"--input '" + files.begin()->first + "': the model has no such input"};

  std::vector<exec::NamedTensor> outputs;
  for (int i = 0; i < a.warmup; ++i) outputs = or_throw(session.run(inputs));
  session.clear_profiles();  // the timed runs only
  std::vector<double> ms;
  for (int i = 0; i < a.iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    outputs = or_throw(session.run(inputs));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!a.profile.empty()) write_trace(a.profile, session.profiles());
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2], p90 = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
  const std::int64_t batch = inputs.empty() || inputs[0].tensor.rank() == 0 ? 1 : inputs[0].tensor.shape()[0];

  json jout = json::array();
  if (!a.output_dir.empty()) std::filesystem::create_directories(a.output_dir);
  for (const exec::NamedTensor& o : outputs) {
    std::string file;
    if (!a.output_dir.empty()) {
      file = (std::filesystem::path(a.output_dir) / file_name(o.name)).string();
      const Status s = write_npy(file, o.tensor);
      if (!s.is_ok()) throw CommandError{s.message()};
    }
    jout.push_back({{"name", o.name}, {"dims", o.tensor.shape().dims()}, {"dtype", dtype_name(o.tensor.dtype())}, {"file", file}});
  }
  const double throughput = median > 0 ? 1000.0 * static_cast<double>(batch) / median : 0;
  const exec::MemoryPlanReport mp = session.memory_plan();
  json jplan = nullptr;
  if (mp.made)
    jplan = {{"arena_bytes", mp.arena_bytes}, {"naive_bytes", mp.naive_bytes}, {"unplanned_bytes", mp.unplanned_bytes},
             {"planned", mp.planned}, {"in_place", mp.in_place}, {"views", mp.views}};
  if (a.json_out) {
    std::cout << json{{"model", path},
                      {"nodes", session.model().graph.nodes.size()},
                      {"inputs", jin},
                      {"outputs", jout},
                      {"iterations", a.iterations},
                      {"warmup", a.warmup},
                      {"threads", a.threads},
                      {"latency_ms", {{"min", ms.front()}, {"median", median}, {"p90", p90}}},
                      {"throughput_per_s", throughput},
                      {"memory_plan", jplan}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "model   " << path << " (" << session.model().graph.nodes.size() << " nodes)\n";
  for (const auto& j : jin)
    std::cout << "input   " << j["name"].get<std::string>() << ": " << j["dtype"].get<std::string>() << " " << json(j["dims"]).dump() << " (" << j["source"].get<std::string>() << ")\n";
  for (const auto& j : jout) {
    std::cout << "output  " << j["name"].get<std::string>() << ": " << j["dtype"].get<std::string>() << " " << json(j["dims"]).dump();
    if (!j["file"].get<std::string>().empty()) std::cout << " -> " << j["file"].get<std::string>();
    std::cout << "\n";
  }
  std::printf("latency %.3f ms min, %.3f ms median, %.3f ms p90 over %d runs (%d warm-up)\n", ms.front(), median, p90, a.iterations, a.warmup);
  std::printf("throughput %.1f inferences/s (batch %lld)\n", throughput, static_cast<long long>(batch));
  if (mp.made) std::cout << "memory  " << memory_plan_line(mp) << "\n";
}

}  // namespace

// The profiled runs as a Chrome trace (chrome://tracing, Perfetto): one slice per run and,
// inside it, one per node with its op, dims and the kernel chosen; times in microseconds.
void write_trace(const std::string& file, const std::vector<exec::RunProfile>& runs) {
  json events = json::array();
  for (std::size_t r = 0; r < runs.size(); ++r) {
    events.push_back({{"name", "run " + std::to_string(r)}, {"cat", "run"}, {"ph", "X"}, {"pid", 1}, {"tid", 1},
                      {"ts", runs[r].start_us}, {"dur", runs[r].duration_us}, {"args", {{"memory_plan", runs[r].planned}}}});
    for (const exec::NodeProfile& n : runs[r].nodes) {
      json args = {{"node", n.name}, {"index", n.node}, {"inputs", n.inputs}, {"outputs", n.outputs}};
      if (!n.kernel.empty()) args["kernel"] = n.kernel;
      events.push_back({{"name", n.op}, {"cat", "node"}, {"ph", "X"}, {"pid", 1}, {"tid", 1},
                        {"ts", n.start_us}, {"dur", n.duration_us}, {"args", args}});
    }
  }
  const std::string tmp = file + ".tmp";
  {
    std::ofstream f(tmp);
    f << json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() << "\n";
    if (!f) throw CommandError{"cannot write the profile '" + file + "'"};
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) throw CommandError{"cannot write the profile '" + file + "': " + ec.message()};
}

Tensor random_input(const exec::IoInfo& io, std::int64_t batch, std::mt19937& rng) {
  std::vector<std::int64_t> dims;
  if (io.type.shape)
    for (std::size_t i = 0; i < io.type.shape->size(); ++i) {
      const graph::Dim& d = (*io.type.shape)[i];
      dims.push_back(d.has_size() ? d.size : i == 0 ? batch : 1);
    }
  const auto dtype = graph::to_dtype(io.type.elem);
  if (!dtype) throw CommandError{"input '" + io.name + "' has type " + graph::to_text(io.type) + ", which needs a file (--input " + io.name + "=FILE.npy)"};
  Tensor t = or_throw(Tensor::empty(Shape(dims), DType::kF64));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> k(0, 9);
  auto* p = t.data<double>();
  for (std::int64_t i = 0; i < t.numel(); ++i)
    p[i] = is_floating(*dtype) ? u(rng) : *dtype == DType::kBool ? static_cast<double>(k(rng) % 2) : static_cast<double>(k(rng));
  Tensor out = or_throw(Tensor::empty(Shape(dims), *dtype));
  dnn::Handle h;
  const Status s = dnn::cast(h, dnn::TensorDesc{t.dtype(), t.shape().dims(), t.strides()}, t.data(),
                             dnn::TensorDesc{out.dtype(), out.shape().dims(), out.strides()}, out.data());
  if (!s.is_ok()) throw CommandError{s.message()};
  return out;
}

std::string memory_plan_line(const exec::MemoryPlanReport& p) {
  if (!p.made) return "no plan";
  const auto mib = [](std::size_t b) { return std::to_string(static_cast<double>(b) / (1 << 20)).substr(0, 6) + " MiB"; };
  std::string s = "arena " + mib(p.arena_bytes) + " for " + mib(p.naive_bytes) + " of intermediate tensors (" +
                  std::to_string(p.naive_bytes ? 100 * p.arena_bytes / p.naive_bytes : 0) + "%); " + std::to_string(p.planned) +
                  " planned, " + std::to_string(p.in_place) + " in place, " + std::to_string(p.views) + " views";
  if (p.unplanned_bytes) s += "; " + mib(p.unplanned_bytes) + " allocated by kernels outside it";
  return s;
}

void add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run an ONNX model and time it (no model: the one in examples/models/)");
  cmd->add_option("model", a->model, "the ONNX model file");
  cmd->add_option("--input", a->inputs, "NAME=FILE.npy for an input (others get seeded random values)");
  cmd->add_option("--output-dir", a->output_dir, "write every output there as NAME.npy");
  cmd->add_option("--iterations", a->iterations, "timed runs (default 10)");
  cmd->add_option("--warmup", a->warmup, "untimed runs first (default 2)");
  cmd->add_option("--threads", a->threads, "threads per primitive (default: the thread pool)");
  cmd->add_option("--batch", a->batch, "the first dim of random inputs where the model leaves it symbolic (default 1)");
  cmd->add_flag("--json", a->json_out, "print the result as JSON");
  cmd->add_option("--opt-level", a->opt_level, "graph passes: 0 none, 1 clean-up and folding, 2-3 fusions too (default 2)")->check(CLI::Range(0, 3));
  cmd->add_option("--disable-pass", a->disabled, "a pass not to run (repeatable; `tessera explain` lists them)");
  cmd->add_option("--profile", a->profile, "write a Chrome trace (Perfetto) of the timed runs: one slice per node");
  cmd->add_flag("--no-memory-plan", a->no_memory_plan, "allocate every intermediate tensor on its own (no arena)");
  cmd->add_flag("--parallel-branches", a->parallel_branches, "run independent nodes at once, a thread each (waves of the graph)");
  cmd->callback([a] { run_model(*a); });
}

}  // namespace tessera::cli
