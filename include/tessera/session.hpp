// tessera sessions: an ONNX model loaded once and run many times on the CPU.
//
//   auto session = tessera::exec::Session::open("model.onnx").value_or_throw();
//   auto outputs = session.run({{"input", tensor}}).value_or_throw();
//
// open() imports the model, verifies it, infers its types, runs the graph passes of
// options.opt_level (constant folding evaluates nodes with the executor's kernels) and checks
// that every node's op is one the executor runs, so a model that cannot run fails here, naming
// the node, not halfway through run(). run() checks the inputs against the model's declared types (names, dtypes,
// ranks, fixed dims; symbolic dims take any size), runs the nodes in order with the dnn and
// blas primitives and returns the graph outputs in the model's order.
//
// Memory: the first run() with given input dims allocates each intermediate tensor on its own
// and records what it learns (sizes, which outputs are views, which kernels write into the
// output they are given); from it the session plans one arena (src/exec/memory_plan.hpp:
// lifetimes, in-place reuse, greedy placement) that later runs with the same input dims reuse.
// Graph outputs are never in the arena. With plan_memory off, or on other dims until they are
// recorded, intermediate tensors are released after their last use.
//
// A Session is not thread-safe; run it from one thread at a time (the primitives use the
// thread pool inside; with parallel_branches, independent nodes share it).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tessera/core/status.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/graph.hpp"
#include "tessera/graph/passes.hpp"

namespace tessera::exec {

struct SessionOptions {
  int threads = 0;    // threads a primitive may use; 0: the process thread pool
  int opt_level = 2;  // graph passes (tessera/graph/passes.hpp): 0 none, 1 clean-up and folding, 2-3 fusions too
  std::set<std::string> disabled_passes;  // pass names
  std::filesystem::path dump_dir;         // when set, the model before and after each pass that changed it
  bool plan_memory = true;  // intermediate tensors in one planned arena (see run())
  bool profile = false;     // time every node of every run (profiles())
  // Run independent nodes at once: the graph in waves of nodes whose inputs earlier waves made;
  // a wave of several runs them on the thread pool, one thread per node (a wave of one gets
  // every thread). The results are the same bits either way (each kernel's are for any thread
  // count); the memory plan keeps a wave's tensors apart.
  bool parallel_branches = false;
};

// One node of a profiled run: what ran, on what, and when (microseconds since the session was
// made, steady clock).
struct NodeProfile {
  std::size_t node = 0;  // its index in model().graph.nodes
  std::string name, op;  // the node's name and op ("domain:op" outside ai.onnx)
  std::string kernel;    // the implementation chosen, where the kernel names one (else empty)
  std::vector<std::vector<std::int64_t>> inputs, outputs;  // dims ({} for an omitted input)
  double start_us = 0, duration_us = 0;
};
struct RunProfile {
  double start_us = 0, duration_us = 0;
  bool planned = false;  // ran in the memory plan's arena
  std::vector<NodeProfile> nodes;
};

// The memory plan of a session (run()): what the arena holds and what it saves.
struct MemoryPlanReport {
  bool made = false;                // false until a run() has shown the tensors' sizes
  std::size_t arena_bytes = 0;      // one arena for every planned tensor
  std::size_t naive_bytes = 0;      // the sum of every intermediate tensor the nodes write
  std::size_t unplanned_bytes = 0;  // ... of those, allocated by their kernels outside the arena
  int planned = 0;                  // tensors with a place in the arena
  int in_place = 0;                 // ... written over an input that dies there
  int views = 0;                    // outputs that are views of an input (no memory of their own)
};

struct RunOptions {
  // Called once per output of the model as soon as its value is final: when the node that makes
  // it finishes (or, for an output no node makes, at the end of the run), with its index in
  // outputs() and its tensor, while the rest of the graph still runs (a training step starts
  // reducing a gradient across processes while the backward pass goes on). The tensor may lie
  // in the session's arena: copy what you keep before returning. Under parallel_branches it may
  // be called from several threads at once.
  std::function<void(std::size_t, const Tensor&)> on_output;
  // Profile this run (added to profiles()) even when the session was not opened with
  // SessionOptions::profile.
  bool profile = false;
};

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// A graph input or output: its name and declared (or inferred) type.
struct IoInfo {
  std::string name;
  graph::ValueType type;
  bool has_default = false;  // an input with an initializer: may be left out of run()
};

class Session {
 public:
  static Result<Session> open(const std::filesystem::path& model, const SessionOptions& options = {});
  static Result<Session> create(graph::Model model, const SessionOptions& options = {});
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  const std::vector<IoInfo>& inputs() const;
  const std::vector<IoInfo>& outputs() const;
  // The model as it runs: after the graph passes.
  const graph::Model& model() const;
  // What each pass did when the session was made.
  const std::vector<graph::PassReport>& pass_reports() const;

  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs);
  // The same, telling `options.on_output` about each output as soon as it is final.
  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs, const RunOptions& options);
  // The plan the runs use now (made by the first run() with the current input dims).
  MemoryPlanReport memory_plan() const;
  // With options.profile: every run() so far, in order (clear_profiles() forgets them).
  const std::vector<RunProfile>& profiles() const;
  void clear_profiles();

  struct State;

 private:
  explicit Session(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// The ai.onnx op types the executor runs.
std::vector<std::string> supported_ops();

// A node's outputs computed by the executor's kernels from constant inputs (null for an omitted
// optional input): the evaluator of the constant-folding pass.
Result<std::vector<graph::Constant>> evaluate_node(const graph::Node& n, std::int64_t opset,
                                                   const std::vector<const graph::Constant*>& inputs);

// Whether the convolution node n of g (Conv or FusedConv, 2-D, its input and weight dims known;
// a symbolic batch counts as 1) runs faster here with channels-last activations, and why
// (dnn::preferred_conv_layout): the layout pass's advisor.
graph::LayoutAdvice advise_conv_layout(const graph::Graph& g, const graph::Node& n);

// A new host tensor holding a constant's data (element types with a core dtype; an error
// names `what` and the type otherwise).
Result<Tensor> tensor_from_constant(const graph::Constant& c, const std::string& what);

}  // namespace tessera::exec
