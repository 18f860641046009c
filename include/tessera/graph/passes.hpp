// tessera graph passes: rewrites of a Model that keep what it computes (ARCHITECTURE.md, "Graph
// and execution pipeline"). Each pass is a small file in src/graph/passes/, known by name,
// run in a fixed order by optimize() from an optimisation level up, switchable off by name;
// verify() runs after each. A pass reports what it changed and, for fusions, every candidate
// it refused with the reason.
//
// Passes (level at which they start):
//   dead-code             1  nodes whose outputs nothing reads, unread constants
//   identity              1  Identity, inference Dropout, Cast to the same type: their uses read the input
//   constant-folding      1  nodes whose inputs are all constants, evaluated once (needs an evaluator),
//                            and Shape/Size of inputs whose dims are all known
//   simplify              1  Transpose(Transpose) and Reshape(Reshape) chains merged; identity
//                            Transposes and Reshape/Flatten/Squeeze/Unsqueeze to the same dims dropped;
//                            Pow(x, 2) -> Mul(x, x)
//   cse                   1  equal constants merged; a node with the op, attributes and inputs of an
//                            earlier one dropped (not random ops, subgraph nodes or graph outputs)
//   layernorm-fusion      2  ReduceMean, Sub, Mul (or Pow 2), ReduceMean, Add eps, Sqrt, Div [, Mul scale
//                            [, Add bias]] over trailing axes -> LayerNormalization (ai.onnx's from
//                            opset 17, tessera's below: the same op)
//   conv-fusion           2  Conv [+ Add residual] [+ activation] -> tessera.FusedConv (one pass over
//                            the output: bias, residual and activation applied as it is written)
//   eltwise-fusion        2  two or more elementwise f32 ops in a chain (each output read only by the
//                            next) -> tessera.FusedElementwise, computed block by block in one pass
//   layout                2  layout assignment: 2-D f32 convolutions the executor runs faster
//                            channels-last (OptimizeOptions::conv_layout says which) take [N, H, W, C];
//                            the pools, elementwise ops and Concats they feed follow, and Transposes
//                            sit only where a region meets a channels-first reader or writer
//
// tessera's own ops live in the domain "tessera":
//   FusedConv(X, W, [B], [Residual]) with Conv's attributes plus `activation` (the ONNX op name:
//   Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish; absent for none) and
//   `activation_alpha` / `activation_beta` (LeakyRelu's and HardSigmoid's alpha/beta, Clip's
//   min/max): Y = act(conv(X, W) + B + Residual).
//   LayerNormalization(X, Scale, [B]) with ai.onnx's attributes axis and epsilon: ai.onnx's
//   LayerNormalization for models whose opset predates it.
//   FusedElementwise(X, Operand1, ..., Operand4) with per-step lists `ops` (ONNX op names: the
//   arithmetic binary ops, unary math ops and activations), `operands` (0 for none, k for
//   op(v, input k), -k for op(input k, v)) and `alphas` / `betas` (the activation's
//   parameters; Clip's min/max; Gelu's alpha is 1 for approximate=tanh): v = X, then each step
//   in turn; Y = v, of X's dims (f32).
//   Channels-last ops (the layout pass's, attribute channels_last = 1): FusedConv, and MaxPool
//   (no Indices output), AveragePool, GlobalAveragePool and GlobalMaxPool in the domain
//   "tessera", with ai.onnx's attributes; X, Residual and Y are [N, spatial..., C] (W stays
//   [K, C/group, spatial...]).
#pragma once

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera::graph {

inline constexpr const char* kTesseraDomain = "tessera";

// Computes a node's outputs from constant inputs (null for an omitted optional input), or an
// error when it cannot (the node then stays). Supplied by the executor, which has the kernels.
using NodeEvaluator = std::function<Result<std::vector<Constant>>(const Node& node, std::int64_t opset,
                                                                  const std::vector<const Constant*>& inputs)>;

// Layout assignment's question to the executor, which knows its kernels: should this
// convolution (Conv or FusedConv, f32, 4-D, types known) run channels-last? With the reason.
struct LayoutAdvice {
  bool channels_last = false;
  std::string reason;
};
using ConvLayoutAdvisor = std::function<LayoutAdvice(const Graph& g, const Node& conv)>;

struct PassInfo {
  std::string name;
  int level = 1;  // the lowest optimisation level that runs it
  std::string summary;
};
// Every pass, in the order optimize() runs them.
const std::vector<PassInfo>& pass_list();

struct OptimizeOptions {
  int level = 2;                   // 0: no passes; 1: clean-up and folding; 2 and 3: fusions too
  std::set<std::string> disabled;  // pass names; an unknown name is an error
  NodeEvaluator evaluate;          // constant folding of computed nodes needs it
  std::filesystem::path dump_dir;  // when set: NN-<pass>-before.txt / -after.txt per pass that changed the model
  std::int64_t fold_limit = 1 << 20;  // constant folding leaves results with more elements than this
  ConvLayoutAdvisor conv_layout;   // the layout pass asks it per convolution; unset: layouts stay as they are
};

struct PassReport {
  std::string pass;
  int changes = 0;                    // nodes rewritten, removed or fused
  std::vector<std::string> applied;   // one line per rewrite worth naming (fusions)
  std::vector<std::string> refused;   // fusion candidates left alone, each with its reason
};

// Runs the passes of `options.level` on the model's top-level graph, in order, verify() after
// each; the model is unchanged when one fails.
Result<std::vector<PassReport>> optimize(Model& m, const OptimizeOptions& options = {});

// tessera's fused ops replaced by the ai.onnx nodes they stand for (FusedConv: Conv [+ Add]
// [+ activation]; FusedElementwise: one node per step; LayerNormalization: ReduceMean, Sub,
// Mul, ReduceMean, Add, Sqrt, Div, Mul [, Add]), so the model runs on any ONNX runtime;
// the "tessera" opset import is dropped. The model is unchanged when it fails.
Status expand_fused_ops(Model& m);

// Graph edits the passes and autodiff (tessera/train.hpp) make.
namespace passes {
// A new value of that name (made unique) and type; its id.
ValueId add_value(Graph& g, const std::string& name, ValueType type);
// A new initializer (its name made unique) of that element type and dims holding `bytes` bytes
// of little-endian elements; its id.
ValueId add_constant(Graph& g, const std::string& name, ElemType elem, const std::vector<std::int64_t>& dims, const void* data, std::size_t bytes);
}  // namespace passes

}  // namespace tessera::graph
