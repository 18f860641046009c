// One ONNX node run through a session, for the executor's op tests: its inputs declared with
// the given tensors' dims and element types (an empty name leaves an optional input out), its
// outputs named as given ("y" by default).
#pragma once

#include <string>
#include <vector>

#include <tessera/session.hpp>

#include "onnx_builder.hpp"

namespace tessera::exec::testing_util {

inline int elem_of(DType t) {
  switch (t) {
    case DType::kU8: return onnx::TensorProto::UINT8;
    case DType::kI8: return onnx::TensorProto::INT8;
    case DType::kI32: return onnx::TensorProto::INT32;
    case DType::kI64: return onnx::TensorProto::INT64;
    case DType::kF64: return onnx::TensorProto::DOUBLE;
    case DType::kF16: return onnx::TensorProto::FLOAT16;
    case DType::kBool: return onnx::TensorProto::BOOL;
    default: return onnx::TensorProto::FLOAT;
  }
}

template <typename T>
Tensor make(const std::vector<std::int64_t>& dims, const std::vector<T>& v) {
  return Tensor::from_vector<T>(Shape(dims), v).value_or_throw();
}

struct OneOp {
  testing::OnnxBuilder m;
  onnx::NodeProto* node;
  std::vector<NamedTensor> feeds;

  OneOp(std::int64_t opset, const std::string& op, const std::vector<NamedTensor>& inputs,
        const std::vector<std::string>& outputs = {"y"})
      : m(opset) {
    std::vector<std::string> names;
    for (const NamedTensor& in : inputs) {
      names.push_back(in.name);
      if (in.name.empty()) continue;
      std::vector<std::string> dims;
      for (std::int64_t d : in.tensor.shape().dims()) dims.push_back(std::to_string(d));
      m.input(in.name, dims, elem_of(in.tensor.dtype()));
      feeds.push_back(in);
    }
    node = m.node(op, names, outputs);
    for (const std::string& o : outputs) m.output(o);
  }
  void ints(const std::string& name, const std::vector<std::int64_t>& v) const { testing::OnnxBuilder::attr(node, name, v); }
  void attr(const std::string& name, std::int64_t v) const { testing::OnnxBuilder::attr(node, name, v); }
  void str(const std::string& name, const std::string& v) const { testing::OnnxBuilder::attr_string(node, name, v); }
  void real(const std::string& name, float v) const { testing::OnnxBuilder::attr_float(node, name, v); }
  Result<std::vector<NamedTensor>> run_all() const {
    TESSERA_ASSIGN_OR_RETURN(graph::Model model, m.import());
    TESSERA_ASSIGN_OR_RETURN(Session s, Session::create(std::move(model)));
    return s.run(feeds);
  }
  Result<Tensor> run() const {
    TESSERA_ASSIGN_OR_RETURN(std::vector<NamedTensor> out, run_all());
    return out.at(0).tensor;
  }
};

}  // namespace tessera::exec::testing_util
