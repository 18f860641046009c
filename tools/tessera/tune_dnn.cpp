// `tessera tune dnn --suite resnet50 ...`: Find mode (dnn::find_convolution) over every
// distinct convolution of a suite, so immediate mode runs the measured winners afterwards;
// and the replay line `tessera tune explain` prints for a convolution entry.
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include <tessera/core/thread_pool.hpp>
#include <tessera/dnn.hpp>

#include "bench_dnn.hpp"
#include "commands.hpp"

namespace tessera::cli {
namespace {

using dnn_bench::ConvProblem;
using nlohmann::json;

struct TuneDnnArgs {
  std::string suite, layers, mb = "1,8", dirs = "fwd", dtype = "f32", layout = "nhwc";
  double min_time = 0.05;
  int threads = 0;
  bool dry_run = false, json = false;
};

std::vector<dnn::ConvDir> parse_dirs(const std::string& text) {
  std::vector<dnn::ConvDir> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    bool found = false;
    for (dnn::ConvDir d :
         {dnn::ConvDir::kForward, dnn::ConvDir::kBackwardData, dnn::ConvDir::kBackwardWeights})
      if (item == dnn::dir_name(d)) out.push_back(d), found = true;
    if (!found) dnn_bench::bad("--dir: '" + item + "' is not fwd, bwd-data or bwd-weights");
  }
  if (out.empty()) dnn_bench::bad("--dir needs a direction");
  return out;
}

std::string us(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

void run_tune_dnn(const TuneDnnArgs& a, const std::string& db) {
  if (a.suite.empty()) dnn_bench::bad("tune dnn needs --suite (" + dnn_bench::suite_names() + ")");
  const auto* all = dnn_bench::suite_shapes(a.suite);
  if (all == nullptr)
    dnn_bench::bad("--suite: unknown suite '" + a.suite + "' (" + dnn_bench::suite_names() + ")");
  const std::vector<dnn_bench::ConvShape> selected =
      dnn_bench::select_layers(*all, a.suite, a.layers);
  const auto* shapes = &selected;
  const std::vector<std::int64_t> batches = dnn_bench::parse_batches(a.mb);
  const std::vector<dnn::ConvDir> dirs = parse_dirs(a.dirs);
  const DType dtype = dnn_bench::parse_dnn_dtype(a.dtype);
  const dnn::Layout layout = dnn_bench::parse_layout(a.layout);
  if (!(a.min_time >= 0) || a.min_time > 60)
    dnn_bench::bad("--min-time must be between 0 and 60 seconds");
  if (a.threads < 0 || a.threads > 1024) dnn_bench::bad("--threads must be between 1 and 1024");
  const int threads = a.threads > 0 ? a.threads : default_num_threads();
  if (thread_pool().num_threads() != threads) set_num_threads(threads);
  dnn::Handle h;
  if (Status s = h.set_num_threads(threads); !s.is_ok()) throw CommandError{s.message(), 1};
  h.set_tune_db(db);
  dnn::FindOptions fo;
  fo.min_seconds_per_algo = a.min_time;
  fo.record = !a.dry_run;

  json rows = json::array();
  const Table table({{"layer", 14, true},
                     {"problem", 44, true},
                     {"heuristic", 13, true},
                     {"us", 9},
                     {"winner", 13, true},
                     {"us", 9},
                     {"speedup", 7},
                     {"timed", 5}});
  if (!a.json) {
    std::printf("tessera tune dnn: %s, %d threads, %s\n", a.suite.c_str(), threads,
                a.dry_run ? "dry run (nothing stored)" : ("storing in " + db).c_str());
    table.print_header();
  }
  int stored = 0;
  for (dnn::ConvDir dir : dirs) {
    for (std::int64_t mb : batches) {
      for (const dnn_bench::ConvShape& s : *shapes) {
        const ConvProblem p =
            dnn_bench::suite_problem(s, mb, dir, dtype, layout, dnn::ConvAlgo::kAuto);
        const dnn::ConvDesc desc = p.desc();
        const dnn::TensorDesc xd = p.x_desc(), wd = p.w_desc(), yd = p.y_desc();
        // What immediate mode would have run without this database entry.
        h.set_use_tune_db(false);
        auto before = dnn::choose_convolution(h, dir, desc, xd, wd, yd);
        h.set_use_tune_db(true);
        if (!before.is_ok()) throw CommandError{before.status().message(), 1};
        auto found = dnn::find_convolution(h, dir, desc, xd, wd, yd, fo);
        if (!found.is_ok()) throw CommandError{found.status().message(), 1};
        const dnn::ConvCandidate& win = found->front();
        double heuristic_us = 0;
        int timed = 0;
        json cands = json::array();
        for (const dnn::ConvCandidate& c : *found) {
          if (c.accepted) ++timed;
          if (c.accepted && c.algo == before->algo) heuristic_us = c.median_us;
          json cj = {{"algo", dnn::algo_name(c.algo)}, {"impl", c.impl}, {"accepted", c.accepted}};
          if (c.accepted)
            cj["median_us"] = c.median_us, cj["spread_us"] = c.spread_us, cj["samples"] = c.samples;
          else
            cj["reason"] = c.reason;
          cands.push_back(cj);
        }
        if (!a.dry_run) ++stored;
        const std::string signature = dnn::conv_signature(dir, desc, xd, wd, yd);
        rows.push_back({{"layer", s.layer},
                        {"signature", signature},
                        {"command", p.command()},
                        {"heuristic", dnn::algo_name(before->algo)},
                        {"heuristic_us", heuristic_us > 0 ? json(heuristic_us) : json(nullptr)},
                        {"winner", dnn::algo_name(win.algo)},
                        {"winner_impl", win.impl},
                        {"winner_us", win.median_us},
                        {"candidates", cands}});
        if (a.json) continue;
        table.print_row({s.layer, std::string(dnn::dir_name(dir)) + " " + p.shape(),
                         std::string(dnn::algo_name(before->algo)),
                         heuristic_us > 0 ? us(heuristic_us) : "-",
                         std::string(dnn::algo_name(win.algo)), us(win.median_us),
                         heuristic_us > 0 ? format_ratio(heuristic_us / win.median_us) : "-",
                         std::to_string(timed)});
      }
    }
  }
  if (a.json) {
    std::cout << json{{"suite", a.suite},
                      {"threads", threads},
                      {"db", db},
                      {"stored", stored},
                      {"results", rows}}
                     .dump(2)
              << "\n";
    return;
  }
  if (!a.dry_run)
    std::printf("stored %d entries in %s; `tessera tune explain --library dnn` lists them\n",
                stored, db.c_str());
}

// "1,64,56,56" -> dims; false when it is not such a list.
bool parse_list(const std::string& text, char sep, std::vector<std::int64_t>& out) {
  out.clear();
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, sep);) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0') return false;
    out.push_back(v);
  }
  return !out.empty();
}

}  // namespace

std::string conv_replay_line(const std::string& signature) {
  // "fwd f32 x[1,64,56,56]nhwc w[64,64,3,3]ohwi ynhwc s1x1 d1x1 p1x1x1x1 g1"
  std::stringstream ss(signature);
  std::vector<std::string> t;
  for (std::string item; ss >> item;) t.push_back(item);
  if (t.size() != 9) return "";
  ConvProblem p;
  bool dir_ok = false;
  for (dnn::ConvDir d :
       {dnn::ConvDir::kForward, dnn::ConvDir::kBackwardData, dnn::ConvDir::kBackwardWeights})
    if (t[0] == dnn::dir_name(d)) p.dir = d, dir_ok = true;
  const auto dtype = parse_dtype(t[1]);
  if (!dir_ok || !dtype) return "";
  p.dtype = *dtype;
  auto tensor = [](const std::string& s, char name, std::vector<std::int64_t>& dims,
                   std::string& layout) {
    const std::size_t close = s.find(']');
    if (s.size() < 3 || s[0] != name || s[1] != '[' || close == std::string::npos) return false;
    layout = s.substr(close + 1);
    return parse_list(s.substr(2, close - 2), ',', dims);
  };
  std::vector<std::int64_t> x, w, pads;
  std::string xl, wl;
  if (!tensor(t[2], 'x', x, xl) || !tensor(t[3], 'w', w, wl) || x.size() < 3 ||
      w.size() != x.size())
    return "";
  p.layout = xl == "nhwc" ? dnn::Layout::kNHWC : dnn::Layout::kNCHW;
  p.mb = x[0], p.ic = x[1], p.oc = w[0];
  p.in.assign(x.begin() + 2, x.end());
  p.kernel.assign(w.begin() + 2, w.end());
  const std::size_t sp = p.in.size();
  if (t[5][0] != 's' || t[6][0] != 'd' || t[7][0] != 'p' || t[8][0] != 'g') return "";
  if (!parse_list(t[5].substr(1), 'x', p.stride) || !parse_list(t[6].substr(1), 'x', p.dilation) ||
      !parse_list(t[7].substr(1), 'x', pads) || p.stride.size() != sp || p.dilation.size() != sp ||
      pads.size() != 2 * sp)
    return "";
  p.pad_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(sp));
  p.pad_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(sp), pads.end());
  std::vector<std::int64_t> g;
  if (!parse_list(t[8].substr(1), ',', g) || g.size() != 1 || g[0] < 1) return "";
  p.groups = g[0];
  return p.command();
}

void add_tune_dnn_command(CLI::App& tune, std::function<std::string()> db_path) {
  auto a = std::make_shared<TuneDnnArgs>();
  CLI::App* cmd = tune.add_subcommand(
      "dnn", "Find mode over a suite's convolutions: time every algorithm, store the winners");
  cmd->add_option("--suite", a->suite, "Network: " + dnn_bench::suite_names())->required();
  cmd->add_option("--layer", a->layers, "Only these layers (as `bench dnn --suite X --list`)");
  cmd->add_option("--mb", a->mb, "Batch sizes (default 1,8)");
  cmd->add_option("--dir", a->dirs, "Directions: fwd (default), bwd-data, bwd-weights, a list");
  cmd->add_option("--dtype", a->dtype, "f32 (default), bf16, f16");
  cmd->add_option("--layout", a->layout, "nhwc (default) or nchw, as the bench suites");
  cmd->add_option("--min-time", a->min_time, "Seconds of timing per algorithm (default 0.05)");
  cmd->add_option("--threads", a->threads, "Threads (default: the CPUs in the affinity mask)");
  cmd->add_flag("--dry-run", a->dry_run, "Measure and report, store nothing");
  cmd->add_flag("--json", a->json, "Print the results as JSON");
  cmd->callback([a, db_path] { run_tune_dnn(*a, db_path()); });
}

}  // namespace tessera::cli
