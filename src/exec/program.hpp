// A graph ready to run: a kernel for every node, its constants as tensors, the node after
// which each value is no longer read. Sessions run their model's graph as one; the kernels of
// If, Loop and Scan compile their subgraphs into others and run them with run_subgraph.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace tessera::exec::detail {

struct Program {
  const graph::Graph* graph = nullptr;  // not owned
  std::int64_t opset = 0;
  std::vector<Kernel> kernels;                    // per node
  std::vector<std::vector<graph::ValueId>> outer;  // per node: what its subgraphs read (subgraph_reads)
  std::vector<Tensor> constants;                  // per value: initializers (undefined elsewhere)
  std::vector<char> is_constant;                  // per value: an initializer no input replaces
  std::set<const Buffer*> constant_buffers;       // the memory of every constant
  std::vector<int> last_use;                      // per value: the last node reading it (INT_MAX: an output)
  std::vector<std::unique_ptr<NodeCache>> caches;  // per node
  // For running independent nodes at once: the nodes in waves (a node's wave is one past the
  // latest wave that makes one of its inputs or captures), per node its wave, per value the last
  // wave reading it (INT_MAX: an output).
  std::vector<std::vector<int>> waves;
  std::vector<int> wave_of;
  std::vector<int> last_wave;
  // Per wave of several nodes, the best times of running it one node after another and at
  // once: run_waves tries each kWaveTries / 2 times, then runs it at once only where that
  // measured at least 10% faster.
  static constexpr int kWaveTries = 8;
  struct WaveTimes {
    double one_by_one_us = 1e300, at_once_us = 1e300;
    int tries = 0;
  };
  std::vector<WaveTimes> wave_times;
};

// g's program (g must outlive it); `what` begins every error ("session", "If 'x' then_branch").
Result<std::unique_ptr<Program>> compile(const graph::Graph& g, std::int64_t opset, const std::string& what);

// What the session adds around each node's kernel: memory-plan slots and records, profiles.
struct NodeHooks {
  virtual ~NodeHooks() = default;
  virtual void before(std::size_t node, KernelCall& call) = 0;
  // After the kernel succeeded, before its outputs become values.
  virtual Status after(std::size_t node, KernelCall& call) = 0;
  // Under run_waves, before() and after() of different nodes run on several threads at once.
};

// "node 3 'conv1' (Conv)": how errors name a node.
std::string node_name(const graph::Node& n, std::size_t i);

// Runs p's nodes in order over `vals` (per value of p's graph: its inputs, captures and
// constants already there), each kernel reading the values its subgraphs capture by name;
// a value is dropped after its last use. Errors name the node.
Status run_nodes(Program& p, dnn::Handle& h, std::vector<Tensor>& vals, NodeHooks* hooks = nullptr);

// The same, wave by wave. A wave of one node runs it on the caller with h's threads; a wave of
// several runs its nodes either one after another the same way, or at once on the thread pool
// (each node on one thread, with its own handle from `lanes`, grown to the widest wave),
// whichever measured faster (p.wave_times: after the first run, runs alternate). A value is dropped
// after its last wave. The hooks may be called from several threads at once. An error is the
// first failing node's of its wave (in wave order).
Status run_waves(Program& p, dnn::Handle& h, std::vector<std::unique_ptr<dnn::Handle>>& lanes, std::vector<Tensor>& vals,
                 NodeHooks* hooks);

// Runs a subgraph's program: `inputs` for its inputs in order, its captures from `captured`
// (the enclosing node's KernelCall::captured). Its outputs, copied where they would share
// memory with the subgraph's constants.
Result<std::vector<Tensor>> run_subgraph(Program& p, dnn::Handle& h, std::vector<Tensor> inputs, const Captured& captured);

}  // namespace tessera::exec::detail
