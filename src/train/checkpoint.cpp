// Checkpoints (train.hpp): the model with its trained parameters, the optimiser's state and the
// epochs done, in one ONNX file written beside the old one and renamed over it.
#include <cstring>

#include "tessera/train.hpp"

namespace tessera::train {
namespace {

constexpr const char* kPrefix = "tessera.checkpoint.";

std::shared_ptr<graph::Constant> f32_constant(const std::vector<float>& v) {
  auto c = std::make_shared<graph::Constant>();
  c->elem = graph::ElemType::kF32;
  c->dims = {static_cast<std::int64_t>(v.size())};
  c->bytes.resize(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(c->bytes.data(), v.data(), c->bytes.size());
  return c;
}

void add_initializer(graph::Graph& g, const std::string& name, std::shared_ptr<graph::Constant> c) {
  std::vector<graph::Dim> shape;
  for (std::int64_t d : c->dims) shape.push_back(graph::Dim{d, {}});
  g.values.push_back(graph::Value{name, {c->elem, shape}, -1, std::move(c)});
  g.initializers.push_back(static_cast<graph::ValueId>(g.values.size() - 1));
}

std::string ops_of(const graph::Graph& g) {
  std::string s;
  for (const graph::Node& n : g.nodes) s += n.op_type + " ";
  return s;
}

}  // namespace

Status save_checkpoint(const std::filesystem::path& path, const graph::Model& model, const std::vector<std::string>& parameters,
                       const std::vector<Tensor>& values, const Optimizer::State& state, std::int64_t epochs_done) {
  if (values.size() != parameters.size()) return invalid_argument("save_checkpoint: " + std::to_string(parameters.size()) + " parameters, " + std::to_string(values.size()) + " values");
  graph::Model m = model;
  graph::Graph& g = m.graph;
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    const graph::ValueId v = g.find(parameters[k]);
    if (v == graph::kNoValue || !g.values[static_cast<std::size_t>(v)].constant) return invalid_argument("save_checkpoint: '" + parameters[k] + "' is not an initializer");
    auto c = std::make_shared<graph::Constant>(*g.values[static_cast<std::size_t>(v)].constant);
    if (values[k].dtype() != DType::kF32 || values[k].nbytes() != c->bytes.size() || !values[k].is_contiguous())
      return invalid_argument("save_checkpoint: the value of '" + parameters[k] + "' does not fit the parameter");
    std::memcpy(c->bytes.data(), values[k].data(), c->bytes.size());
    g.values[static_cast<std::size_t>(v)].constant = std::move(c);
    if (k < state.m.size()) add_initializer(g, kPrefix + std::string("m.") + parameters[k], f32_constant(state.m[k]));
    if (k < state.v.size()) add_initializer(g, kPrefix + std::string("v.") + parameters[k], f32_constant(state.v[k]));
  }
  auto meta = std::make_shared<graph::Constant>();
  meta->elem = graph::ElemType::kI64;
  meta->dims = {2};
  const std::int64_t counts[2] = {epochs_done, state.steps};
  meta->bytes.resize(sizeof counts);
  std::memcpy(meta->bytes.data(), counts, sizeof counts);
  add_initializer(g, kPrefix + std::string("counts"), std::move(meta));
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return io_error("save_checkpoint: cannot make '" + path.parent_path().string() + "': " + ec.message());
  return graph::save_onnx(m, path).with_context("save_checkpoint");
}

Result<Checkpoint> load_checkpoint(const std::filesystem::path& path, const graph::Model& model, const std::vector<std::string>& parameters) {
  const std::string what = "load_checkpoint: '" + path.string() + "'";
  TESSERA_ASSIGN_OR_RETURN(const graph::Model m, graph::import_onnx(path));
  const graph::Graph& g = m.graph;
  const auto constant = [&](const std::string& name) -> const graph::Constant* {
    const graph::ValueId v = g.find(name);
    return v == graph::kNoValue ? nullptr : g.values[static_cast<std::size_t>(v)].constant.get();
  };
  const graph::Constant* counts = constant(kPrefix + std::string("counts"));
  if (!counts || counts->elem != graph::ElemType::kI64 || counts->numel() != 2) return invalid_argument(what + " is not a tessera checkpoint");
  if (ops_of(g) != ops_of(model.graph)) return invalid_argument(what + " is a checkpoint of another model (its ops differ)");
  Checkpoint c;
  std::int64_t n[2];
  std::memcpy(n, counts->bytes.data(), sizeof n);
  c.epochs_done = n[0];
  c.state.steps = n[1];
  for (const std::string& p : parameters) {
    const graph::Constant* saved = constant(p);
    const graph::ValueId mine = model.graph.find(p);
    if (!saved) return invalid_argument(what + " is a checkpoint of another model: it has no parameter '" + p + "'");
    if (mine == graph::kNoValue || !model.graph.values[static_cast<std::size_t>(mine)].constant) return invalid_argument("load_checkpoint: the model has no parameter '" + p + "'");
    if (saved->dims != model.graph.values[static_cast<std::size_t>(mine)].constant->dims || saved->elem != graph::ElemType::kF32)
      return invalid_argument(what + " is a checkpoint of another model: '" + p + "' has other dims");
    TESSERA_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(Shape(saved->dims), DType::kF32));
    std::memcpy(t.data(), saved->bytes.data(), saved->bytes.size());
    c.values.push_back(std::move(t));
    for (const char* kind : {"m.", "v."}) {
      std::vector<float> buf;
      if (const graph::Constant* s = constant(kPrefix + std::string(kind) + p)) {
        if (s->elem != graph::ElemType::kF32) return invalid_argument(what + ": the optimiser state of '" + p + "' is not f32");
        buf.resize(s->bytes.size() / sizeof(float));
        if (!buf.empty()) std::memcpy(buf.data(), s->bytes.data(), buf.size() * sizeof(float));
      }
      (kind[0] == 'm' ? c.state.m : c.state.v).push_back(std::move(buf));
    }
  }
  return c;
}

}  // namespace tessera::train
