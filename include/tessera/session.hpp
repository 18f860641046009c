// tessera sessions: an ONNX model loaded once and run many times on the CPU.
//
//   auto session = tessera::exec::Session::open("model.onnx").value_or_throw();
//   auto outputs = session.run({{"input", tensor}}).value_or_throw();
//
// open() imports the model, verifies it, infers its types and checks that every node's op is
// one the executor runs, so a model that cannot run fails here, naming the node, not halfway
// through run(). run() checks the inputs against the model's declared types (names, dtypes,
// ranks, fixed dims; symbolic dims take any size), runs the nodes in order with the dnn and
// blas primitives and returns the graph outputs in the model's order. Intermediate tensors are
// released after their last use. A Session is not thread-safe; run it from one thread at a
// time (the primitives use the thread pool inside).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/status.hpp"
#include "tessera/core/tensor.hpp"
#include "tessera/graph.hpp"

namespace tessera::exec {

struct SessionOptions {
  int threads = 0;  // threads a primitive may use; 0: the process thread pool
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
  const graph::Model& model() const;

  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs);

  struct State;

 private:
  explicit Session(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// The ai.onnx op types the executor runs.
std::vector<std::string> supported_ops();

// A new host tensor holding a constant's data (element types with a core dtype; an error
// names `what` and the type otherwise).
Result<Tensor> tensor_from_constant(const graph::Constant& c, const std::string& what);

}  // namespace tessera::exec
