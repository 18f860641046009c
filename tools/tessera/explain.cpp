// `tessera explain MODEL.onnx`: the model as tessera sees it. Today: the imported, verified IR
// with its inferred types (opsets, inputs, constants, one line per node with its types and
// attributes, subgraphs);
// the passes, fusions, kernels and memory plan join it as the graph compiler grows.
#include <iostream>
#include <string>

#include <tessera/graph.hpp>

#include "commands.hpp"

namespace tessera::cli {

void add_explain_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("explain", "Import an ONNX model and print it as tessera's IR");
  auto model = std::make_shared<std::string>();
  cmd->add_option("model", *model, "the ONNX model file")->required();
  cmd->callback([model] {
    Result<graph::Model> m = graph::import_onnx(*model);
    if (!m.is_ok()) throw CommandError{m.status().message()};
    const Status v = graph::verify(m.value());
    if (!v.is_ok()) throw CommandError{v.message()};
    const Status t = graph::infer_types(m.value());
    if (!t.is_ok()) throw CommandError{t.message()};
    const graph::Graph& g = m.value().graph;
    std::cout << *model << ": " << g.nodes.size() << " nodes, " << g.inputs.size() << " inputs, "
              << g.initializers.size() << " constants, " << g.outputs.size() << " outputs\n"
              << graph::to_text(m.value());
  });
}

}  // namespace tessera::cli
