// The passes' shared helpers (src/graph/passes/): the pass entry points optimize() calls and
// the edits they make to a graph (use counts, replacing a value's uses, dropping dead nodes).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/graph/passes.hpp"

namespace tessera::graph::passes {

using PassFn = Status (*)(Model& m, const OptimizeOptions& options, PassReport& report);

Status dead_code(Model& m, const OptimizeOptions& options, PassReport& report);
Status identity(Model& m, const OptimizeOptions& options, PassReport& report);
Status constant_folding(Model& m, const OptimizeOptions& options, PassReport& report);
Status simplify(Model& m, const OptimizeOptions& options, PassReport& report);
Status cse(Model& m, const OptimizeOptions& options, PassReport& report);
Status conv_fusion(Model& m, const OptimizeOptions& options, PassReport& report);
Status eltwise_fusion(Model& m, const OptimizeOptions& options, PassReport& report);
Status layernorm_fusion(Model& m, const OptimizeOptions& options, PassReport& report);
Status layout(Model& m, const OptimizeOptions& options, PassReport& report);

// Per value: how many node inputs read it, plus one for each graph output it is.
std::vector<int> use_counts(const Graph& g);
// Per value: the one node reading it (by index), or -1 when it has no reader or several, is a
// graph output or is read by a subgraph (the fusions' test for an intermediate they may absorb).
std::vector<int> sole_readers(const Graph& g);
// The names subgraphs read from this graph (captures, recursively): values a pass must keep.
std::set<std::string> captured_names(const Graph& g);
// Every node input reading `from` reads `to` instead (graph outputs are left alone).
void replace_uses(Graph& g, ValueId from, ValueId to);
// Drops the nodes whose `keep` entry is 0 and every value no longer defined, read or named
// by the graph's inputs, outputs or subgraphs; renumbers what is left.
void compact(Graph& g, const std::vector<char>& keep);
// The one element of a constant of one element (f32, f64, i32 or i64), or nullopt.
std::optional<double> scalar_constant(const Graph& g, ValueId v);
// A float attribute of n, or dflt.
float float_attr(const Node& n, const char* name, float dflt);
// add_value and add_constant: tessera/graph/passes.hpp (autodiff builds graphs with them too).
// Clip's bounds from its attributes (before opset 11) or constant inputs, or a reason why not.
std::optional<std::string> clip_bounds(const Graph& g, const Node& n, std::int64_t opset, float& lo, float& hi);

}  // namespace tessera::graph::passes
