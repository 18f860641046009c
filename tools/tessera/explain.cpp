// `tessera explain MODEL.onnx [--opt-level L] [--disable-pass P] [--dump-dir DIR]`: the model
// as tessera runs it: the passes of the level (each with what it changed, the fusions applied
// and those refused with the reason), then the IR after them with the inferred types (opsets,
// inputs, constants, one line per node with its types and attributes, subgraphs), and the
// memory plan of one run on random inputs (`--batch` for a symbolic first dim).
//
// `tessera optimize IN.onnx -o OUT.onnx [--opt-level L] [--disable-pass P]`: the passes' result
// written back as ONNX, tessera's fused ops in the domain "tessera"; OUT is written beside
// itself and renamed over (a failure leaves an old OUT as it was).
#include <iostream>
#include <string>

#include <tessera/graph.hpp>
#include <tessera/graph/passes.hpp>
#include <tessera/session.hpp>

#include "commands.hpp"

namespace tessera::cli {
namespace {

struct PassArgs {
  std::string model;
  int opt_level = 2;
  std::vector<std::string> disabled;
  std::string dump_dir;
  std::string output;
  std::int64_t batch = 1;
  bool portable = false;
};

void add_pass_options(CLI::App* cmd, PassArgs& a) {
  cmd->add_option("model", a.model, "the ONNX model file")->required();
  cmd->add_option("--opt-level", a.opt_level, "graph passes: 0 none, 1 clean-up and folding, 2-3 fusions too (default 2)")->check(CLI::Range(0, 3));
  cmd->add_option("--disable-pass", a.disabled, "a pass not to run (repeatable)");
}

// The model imported, verified, typed and optimised; the pass reports in `reports`.
graph::Model optimised(const PassArgs& a, std::vector<graph::PassReport>& reports) {
  Result<graph::Model> m = graph::import_onnx(a.model);
  if (!m.is_ok()) throw CommandError{m.status().message()};
  for (const Status& s : {graph::verify(m.value()), graph::infer_types(m.value())})
    if (!s.is_ok()) throw CommandError{s.message()};
  graph::OptimizeOptions o;
  o.level = a.opt_level;
  o.disabled.insert(a.disabled.begin(), a.disabled.end());
  o.dump_dir = a.dump_dir;
  o.evaluate = &exec::evaluate_node;
  o.conv_layout = &exec::advise_conv_layout;
  auto r = graph::optimize(m.value(), o);
  if (!r.is_ok()) throw CommandError{r.status().message()};
  reports = std::move(r).value();
  return std::move(m).value();
}

// The memory plan of one run of the optimised model on random inputs (or why there is none).
std::string planned_memory(const graph::Model& m, std::int64_t batch) {
  exec::SessionOptions o;
  o.opt_level = 0;  // the passes have run
  Result<exec::Session> s = exec::Session::create(m, o);
  if (!s.is_ok()) return "none: " + s.status().message();
  std::mt19937 rng(1234);
  std::vector<exec::NamedTensor> inputs;
  try {
    for (const exec::IoInfo& io : s.value().inputs())
      if (!io.has_default) inputs.push_back({io.name, random_input(io, batch, rng)});
  } catch (const CommandError& e) {
    return "none: " + e.message;
  }
  const auto r = s.value().run(inputs);
  if (!r.is_ok()) return "none: " + r.status().message();
  return memory_plan_line(s.value().memory_plan());
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("explain", "Show the graph passes' work on an ONNX model and the IR they leave");
  auto a = std::make_shared<PassArgs>();
  add_pass_options(cmd, *a);
  cmd->add_option("--dump-dir", a->dump_dir, "write the model before and after each pass that changed it");
  cmd->add_option("--batch", a->batch, "the first dim of the inputs for the memory plan where the model leaves it symbolic (default 1)");
  cmd->callback([a] {
    std::vector<graph::PassReport> reports;
    const graph::Model m = optimised(*a, reports);
    std::cout << "passes (level " << a->opt_level << "):\n";
    if (reports.empty()) std::cout << "  none\n";
    for (const graph::PassReport& r : reports) {
      std::cout << "  " << r.pass << ": " << r.changes << (r.changes == 1 ? " change\n" : " changes\n");
      for (const std::string& s : r.applied) std::cout << "    applied: " << s << "\n";
      for (const std::string& s : r.refused) std::cout << "    refused: " << s << "\n";
    }
    std::cout << "memory plan (one run on random inputs, batch " << a->batch << "): " << planned_memory(m, a->batch) << "\n";
    const graph::Graph& g = m.graph;
    std::cout << a->model << ": " << g.nodes.size() << " nodes, " << g.inputs.size() << " inputs, " << g.initializers.size()
              << " constants, " << g.outputs.size() << " outputs\n"
              << graph::to_text(m);
  });
}

void add_optimize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("optimize", "Run the graph passes on an ONNX model and write the result as ONNX");
  auto a = std::make_shared<PassArgs>();
  add_pass_options(cmd, *a);
  cmd->add_option("-o,--output", a->output, "the optimised model's file")->required();
  cmd->add_flag("--portable", a->portable, "expand tessera's fused ops back into ai.onnx nodes (runs on any ONNX runtime)");
  cmd->callback([a] {
    std::vector<graph::PassReport> reports;
    graph::Model m = optimised(*a, reports);
    if (a->portable) {
      if (const Status e = graph::expand_fused_ops(m); !e.is_ok()) throw CommandError{e.message()};
    }
    const Status s = graph::save_onnx(m, a->output);
    if (!s.is_ok()) throw CommandError{s.message()};
    int changes = 0;
    for (const graph::PassReport& r : reports) changes += r.changes;
    std::cout << a->output << ": " << m.graph.nodes.size() << " nodes after " << changes << " changes\n";
  });
}

}  // namespace tessera::cli
