// A model's training form (forms.hpp), and the helpers that make an ONNX classifier trainable
// (with_classifier_loss, trainable_parameters: train.hpp).
#include "forms.hpp"

#include <algorithm>
#include <set>

#include "tessera/graph/passes.hpp"

namespace tessera::train::detail {

Result<TrainingForm> training_form(const graph::Model& m) {
  TrainingForm f;
  f.model = m;
  f.inference = m;
  graph::Graph& g = f.model.graph;
  const std::int64_t opset = m.opsets.count("") ? m.opsets.at("") : graph::kMaxOpset;
  const auto make_input = [](graph::Graph& gr, graph::ValueId v) {
    if (std::find(gr.inputs.begin(), gr.inputs.end(), v) == gr.inputs.end()) gr.inputs.push_back(v);
  };
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op_type != "BatchNormalization" || !g.nodes[i].domain.empty()) continue;
    const std::string what = "fit: node " + std::to_string(i) + " '" + g.nodes[i].name + "' (BatchNormalization)";
    if (opset < 14) return unsupported(what + ": training mode needs opset 14 or newer (the model's is " + std::to_string(opset) + ")");
    if (g.nodes[i].inputs.size() < 5) return invalid_argument(what + ": it has no running statistics");
    for (std::size_t k = 3; k < 5; ++k) {
      const graph::ValueId v = g.nodes[i].inputs[k];
      if (v == graph::kNoValue || !g.values[static_cast<std::size_t>(v)].constant)
        return unsupported(what + ": its running statistics are not initializers");
      const std::string name = g.values[static_cast<std::size_t>(v)].name;  // a copy: add_value grows the list
      if (std::find(f.state.begin(), f.state.end(), name) != f.state.end()) return unsupported(what + ": running statistics shared with another node");
      const graph::ValueId next = graph::passes::add_value(g, name + ".next", g.values[static_cast<std::size_t>(v)].type);
      g.values[static_cast<std::size_t>(next)].producer = static_cast<int>(i);
      graph::Node& n = g.nodes[i];
      if (n.outputs.size() < 3) n.outputs.resize(3, graph::kNoValue);
      if (n.outputs[k - 2] != graph::kNoValue) return unsupported(what + ": it already gives its running statistics");
      n.outputs[k - 2] = next;
      f.state.push_back(name);
      f.updates.push_back(g.values[static_cast<std::size_t>(next)].name);
      make_input(g, v);
      make_input(f.inference.graph, f.inference.graph.find(name));
    }
    g.nodes[i].attrs["training_mode"] = graph::int_attribute(1);
  }
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op_type != "Dropout" || !g.nodes[i].domain.empty()) continue;
    const std::string what = "fit: node " + std::to_string(i) + " '" + g.nodes[i].name + "' (Dropout)";
    graph::ValueId ratio = opset >= 12 && g.nodes[i].inputs.size() > 1 ? g.nodes[i].inputs[1] : graph::kNoValue;
    if (ratio != graph::kNoValue && !g.values[static_cast<std::size_t>(ratio)].constant) return unsupported(what + ": a ratio that is not an initializer");
    if (ratio == graph::kNoValue) {
      const auto it = g.nodes[i].attrs.find("ratio");  // before opset 12; else the default
      const float r = opset < 12 && it != g.nodes[i].attrs.end() ? it->second.f : 0.5f;
      ratio = graph::passes::add_constant(g, g.nodes[i].name + ".ratio", graph::ElemType::kF32, {}, &r, sizeof r);
    }
    if (f.step_input.empty()) {
      f.step_input = "tessera.step";
      const graph::ValueId step = graph::passes::add_value(g, f.step_input, graph::ValueType{graph::ElemType::kI64, std::vector<graph::Dim>{}});
      f.step_input = g.values[static_cast<std::size_t>(step)].name;
      g.inputs.push_back(step);
    }
    graph::Node& n = g.nodes[i];
    n.domain = graph::kTesseraDomain;
    n.inputs = {n.inputs[0], ratio, g.find(f.step_input)};
    n.attrs.erase("ratio");
  }
  if (!f.step_input.empty() && !f.model.opsets.count(graph::kTesseraDomain)) f.model.opsets[graph::kTesseraDomain] = 1;
  return f;
}

}  // namespace tessera::train::detail

namespace tessera::train {

Result<graph::Model> with_classifier_loss(const graph::Model& model) {
  graph::Model m = model;
  graph::Graph& g = m.graph;
  const auto name_of = [&](graph::ValueId v) { return g.values[static_cast<std::size_t>(v)].name; };
  std::vector<graph::ValueId> data;  // inputs that are not initializers
  for (graph::ValueId v : g.inputs)
    if (!g.values[static_cast<std::size_t>(v)].constant) data.push_back(v);
  if (g.outputs.size() >= 2 && name_of(g.outputs[0]) == "loss" && name_of(g.outputs[1]) == "scores" && g.find("images") != graph::kNoValue &&
      g.find("labels") != graph::kNoValue)
    return m;  // already trainable
  if (m.opsets.count("") && m.opsets.at("") < 13)
    return unsupported("with_classifier_loss: SoftmaxCrossEntropyLoss needs opset 13 or newer (the model's is " + std::to_string(m.opsets.at("")) + ")");
  const std::string want = "a classifier with one f32 input [N, ...] and its scores [N, classes] as the first output";
  if (data.size() != 1 || g.outputs.empty()) return invalid_argument("with_classifier_loss: the model is not " + want);
  const graph::ValueId x = data[0];
  graph::ValueId scores = g.outputs[0];
  // A final Softmax turns scores into probabilities: the loss takes its input (and the
  // trained model gives the scores).
  if (const int p = g.values[static_cast<std::size_t>(scores)].producer; p >= 0) {
    const graph::Node& last = g.nodes[static_cast<std::size_t>(p)];
    if (last.domain.empty() && last.op_type == "Softmax" && !last.inputs.empty() && last.inputs[0] != graph::kNoValue) scores = last.inputs[0];
  }
  const graph::ValueType& xt = g.values[static_cast<std::size_t>(x)].type;
  const graph::ValueType& st = g.values[static_cast<std::size_t>(scores)].type;
  if (xt.elem != graph::ElemType::kF32 || !xt.shape || xt.shape->size() < 2 || st.elem != graph::ElemType::kF32 || (st.shape && st.shape->size() != 2))
    return invalid_argument("with_classifier_loss: the model is not " + want + " (input " + graph::to_text(xt) + ", output " + graph::to_text(st) + ")");
  for (const char* taken : {"images", "scores", "labels", "loss"}) {
    const graph::ValueId v = g.find(taken);
    if (v != graph::kNoValue && v != x && v != scores)
      return invalid_argument(std::string("with_classifier_loss: the model already has a value named '") + taken + "'");
  }
  g.values[static_cast<std::size_t>(x)].name = "images";
  g.values[static_cast<std::size_t>(scores)].name = "scores";
  const graph::ValueId labels = graph::passes::add_value(g, "labels", graph::ValueType{graph::ElemType::kI64, std::vector<graph::Dim>{(*xt.shape)[0]}});
  g.inputs.push_back(labels);
  const graph::ValueId loss = graph::passes::add_value(g, "loss", graph::ValueType{graph::ElemType::kF32, std::vector<graph::Dim>{}});
  graph::Node n;
  n.name = "loss";
  n.op_type = "SoftmaxCrossEntropyLoss";
  n.inputs = {scores, labels};
  n.outputs = {loss};
  g.values[static_cast<std::size_t>(loss)].producer = static_cast<int>(g.nodes.size());
  g.nodes.push_back(std::move(n));
  g.outputs = {loss, scores};
  TESSERA_RETURN_IF_ERROR(graph::verify(m).with_context("with_classifier_loss"));
  TESSERA_RETURN_IF_ERROR(graph::infer_types(m).with_context("with_classifier_loss"));
  return m;
}

std::vector<std::string> trainable_parameters(graph::Model& m) {
  graph::Graph& g = m.graph;
  std::set<graph::ValueId> state;  // batch norm's running statistics, dropout's ratio
  for (const graph::Node& n : g.nodes) {
    if (n.op_type == "BatchNormalization" && n.domain.empty())
      for (std::size_t k = 3; k < n.inputs.size() && k < 5; ++k) state.insert(n.inputs[k]);
    if (n.op_type == "Dropout" && n.inputs.size() > 1) state.insert(n.inputs[1]);
  }
  std::vector<std::string> params;
  for (graph::ValueId v : g.initializers) {
    const graph::Value& val = g.values[static_cast<std::size_t>(v)];
    if (val.constant->elem != graph::ElemType::kF32 || state.count(v) || val.name.rfind("tessera.checkpoint.", 0) == 0) continue;
    params.push_back(val.name);
    if (std::find(g.inputs.begin(), g.inputs.end(), v) == g.inputs.end()) g.inputs.push_back(v);
  }
  return params;
}

}  // namespace tessera::train
