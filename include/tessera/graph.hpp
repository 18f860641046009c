// tessera graph: the IR of a model (ARCHITECTURE.md, "Graph and execution pipeline") and its
// ONNX import, verifier and text printer.
//
// Conventions
// - A Graph owns its Values (typed edges: element type and a shape whose dims may be sizes,
//   symbols or unknown) and its Nodes (op type, domain, attributes), the nodes in a
//   topological order. Values are named by index (ValueId); kNoValue marks an omitted
//   optional input. Every value has at most one producer: a node, or none (graph inputs,
//   initializers, captures).
// - Subgraphs (the bodies of If, Loop, Scan) are attributes of their node. A name a subgraph
//   reads from an enclosing graph becomes a *capture*: a value of the subgraph with no
//   producer, listed in Graph::captures, resolved by name in the enclosing scopes.
// - Constant data (initializers, tensor attributes) is kept as ONNX stores it, little-endian
//   elements in `bytes` (strings in `strings`).
// - import_onnx reads a ModelProto with protobuf (Debian's ONNX schema), checks it and
//   returns the IR; every error names the node, value or initializer at fault. verify()
//   checks the invariants above and is run after import and after every pass in tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/core/status.hpp"

namespace tessera::graph {

// The ONNX element types (TensorProto.DataType numbers).
enum class ElemType : int {
  kUndefined = 0,
  kF32 = 1,
  kU8 = 2,
  kI8 = 3,
  kU16 = 4,
  kI16 = 5,
  kI32 = 6,
  kI64 = 7,
  kString = 8,
  kBool = 9,
  kF16 = 10,
  kF64 = 11,
  kU32 = 12,
  kU64 = 13,
  kC64 = 14,
  kC128 = 15,
  kBF16 = 16,
  kF8E4M3FN = 17,
  kF8E4M3FNUZ = 18,
  kF8E5M2 = 19,
  kF8E5M2FNUZ = 20,
  kU4 = 21,
  kI4 = 22,
  kF4E2M1 = 23,
  kF8E8M0 = 24,
  kU2 = 25,
  kI2 = 26,
  kF6E2M3 = 27,
  kF6E3M2 = 28,
};
inline constexpr int kMaxElemType = 28;
// "f32", "i64", "string", "f8e4m3fn", ...; "?" outside the enum.
std::string_view elem_type_name(ElemType t);
// Bits per element (4 for i4, 0 for strings and undefined).
int elem_bits(ElemType t);
// The core dtype of t, where tessera computes on it.
std::optional<DType> to_dtype(ElemType t);

// A dimension: a size >= 0, or a symbol (ONNX dim_param), or unknown (neither).
struct Dim {
  std::int64_t size = -1;
  std::string symbol;
  bool has_size() const { return size >= 0; }
  friend bool operator==(const Dim&, const Dim&) = default;
};
// A value's type: the element type (kUndefined when unknown) and the shape (nullopt when
// even the rank is unknown).
struct ValueType {
  ElemType elem = ElemType::kUndefined;
  std::optional<std::vector<Dim>> shape;
};

// Constant data: dims, element type, and the elements (little-endian, sub-byte types packed
// two or four to a byte as ONNX stores them; strings in `strings`).
struct Constant {
  ElemType elem = ElemType::kUndefined;
  std::vector<std::int64_t> dims;
  std::vector<std::byte> bytes;
  std::vector<std::string> strings;
  std::int64_t numel() const;
};

using ValueId = std::int32_t;
inline constexpr ValueId kNoValue = -1;

struct Value {
  std::string name;
  ValueType type;
  int producer = -1;                         // the node's index, or -1
  std::shared_ptr<const Constant> constant;  // initializers (an input's default when also an input)
};

struct Graph;
struct Attribute {
  enum class Kind : int { kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings, kTensors, kGraphs, kType };
  Kind kind = Kind::kInt;
  float f = 0;
  std::int64_t i = 0;
  std::string s;
  std::shared_ptr<const Constant> t;
  std::shared_ptr<const Graph> g;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;
  std::vector<std::string> strings;
  std::vector<std::shared_ptr<const Constant>> tensors;
  std::vector<std::shared_ptr<const Graph>> graphs;
  ValueType type;  // kType (TYPE_PROTO)
};
std::string_view attribute_kind_name(Attribute::Kind k);
// Attributes of one kind, as passes write them.
Attribute int_attribute(std::int64_t v);
Attribute ints_attribute(std::vector<std::int64_t> v);
Attribute float_attribute(float v);
Attribute string_attribute(std::string v);

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" is ai.onnx
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::map<std::string, Attribute> attrs;
};

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order
  std::vector<ValueId> inputs;        // in the model's order (some may have a constant default)
  std::vector<ValueId> outputs;
  std::vector<ValueId> initializers;  // constants that are not inputs, and defaults of inputs
  std::vector<ValueId> captures;      // subgraphs: values of enclosing graphs read here
  // The value of that name, or kNoValue.
  ValueId find(std::string_view name) const;
};

// The values of g that node n's subgraphs read (their captures, which include what subgraphs
// nested in them read from g), each once, in id order; none for a node without subgraphs.
std::vector<ValueId> subgraph_reads(const Graph& g, const Node& n);

struct Model {
  std::int64_t ir_version = 0;
  std::map<std::string, std::int64_t> opsets;  // domain ("" for ai.onnx) -> version
  std::string producer_name;
  std::string producer_version;
  Graph graph;
};

// The ai.onnx opsets import accepts: 7 up to the newest the current ONNX release defines.
inline constexpr std::int64_t kMinOpset = 7;
inline constexpr std::int64_t kMaxOpset = 28;

// Reads an ONNX model file; external data files are found relative to its folder.
Result<Model> import_onnx(const std::filesystem::path& path);
// The same from the bytes of a ModelProto; external data relative to `dir` (none when empty).
Result<Model> import_onnx(std::span<const std::byte> bytes, const std::filesystem::path& dir = {});
// A serialised TensorProto (the .pb files of ONNX's test data) as a constant; `what` starts
// every error. Tensors with external data are refused.
Result<Constant> import_tensor(std::span<const std::byte> bytes, const std::string& what);

// The invariants of the IR: value ids in range, one producer per value, every input defined
// before its node (graph inputs, initializers, captures, earlier outputs), outputs defined,
// distinct non-empty names, constants matching their types, subgraphs recursively (their
// captures found in the enclosing scopes). The Model form checks the opset too and every node's
// signature (check_signatures).
Status verify(const Graph& g);
Status verify(const Model& m);
// Each node of a known op (ai.onnx at the model's opset, from the ONNX schemas; tessera's own
// ops) has as many inputs and outputs as its op takes, and its required ones are not omitted;
// subgraphs too. The passes, type inference and kernels rely on it. import_onnx checks it.
Status check_signatures(const Model& m);

// Fills in the types of node outputs from their inputs' types, attributes and constant inputs
// (shapes of Reshape, axes of Squeeze/Unsqueeze/reductions), per op of the ai.onnx domain;
// symbolic dims pass through where the rules only carry them along. An output's declared type
// is checked against the inferred one (an error names the node and both types) and the two
// merged. Ops it does not know keep their declared types.
Status infer_types(Model& m);

// The model as a serialised ModelProto: constants as raw data, the known types of every value
// (inputs, outputs, value_info), subgraphs recursively; tessera's own ops in their domain.
// verify() runs first. Models over 2 GiB (which would need external data) are refused.
Result<std::string> export_onnx(const Model& m);
// export_onnx into a file, written beside it and renamed over it (a failure leaves the old file).
Status save_onnx(const Model& m, const std::filesystem::path& path);

// A readable listing: opsets, inputs, constants, one line per node
// (`%y: f32[N,64,56,56] = Conv(%x, %w) {strides=[1,1]}`), outputs, subgraphs indented.
std::string to_text(const Model& m);
std::string to_text(const Graph& g);
std::string to_text(const ValueType& t);

}  // namespace tessera::graph
