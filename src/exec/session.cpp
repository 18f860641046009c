// Sessions: a model checked once (verify, type inference, a kernel for every node, constants
// as tensors), then run node by node; each intermediate tensor is dropped after its last use.
#include <algorithm>
#include <climits>
#include <set>
#include <string>

#include "kernels.hpp"
#include "tessera/session.hpp"

namespace tessera::exec {

struct Session::State {
  graph::Model model;
  dnn::Handle h;
  std::int64_t opset = 0;
  std::vector<IoInfo> inputs, outputs;
  std::vector<detail::Kernel> kernels;  // per node
  std::vector<Tensor> constants;        // per value (initializers; undefined elsewhere)
  std::vector<int> last_use;            // per value: the last node reading it (INT_MAX: an output)
  std::vector<char> is_constant;        // per value: an initializer run() cannot replace
  std::set<const Buffer*> constant_buffers;  // the memory of every constant
  std::vector<std::unique_ptr<detail::NodeCache>> caches;  // per node
  std::vector<graph::PassReport> reports;
};

namespace {

std::string node_name(const graph::Node& n, std::size_t i) {
  return "node " + std::to_string(i) + (n.name.empty() ? "" : " '" + n.name + "'") + " (" + n.op_type + ")";
}

}  // namespace

Session::Session(std::unique_ptr<State> s) : s_(std::move(s)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

const std::vector<IoInfo>& Session::inputs() const { return s_->inputs; }
const std::vector<IoInfo>& Session::outputs() const { return s_->outputs; }
const graph::Model& Session::model() const { return s_->model; }
const std::vector<graph::PassReport>& Session::pass_reports() const { return s_->reports; }

std::vector<std::string> supported_ops() { return detail::kernel_names(); }

Result<Tensor> tensor_from_constant(const graph::Constant& c, const std::string& what) {
  return detail::constant_tensor(c, what);
}

Result<std::vector<graph::Constant>> evaluate_node(const graph::Node& n, std::int64_t opset, const std::vector<const graph::Constant*>& inputs) {
  const detail::Kernel k = n.domain.empty() ? detail::find_kernel(n.op_type) : nullptr;
  if (!k) return unsupported("evaluate: no kernel for " + n.op_type);
  std::vector<Tensor> held(inputs.size());
  std::vector<const Tensor*> in;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      in.push_back(nullptr);
      continue;
    }
    TESSERA_ASSIGN_OR_RETURN(held[i], detail::constant_tensor(*inputs[i], "evaluate: input " + std::to_string(i)));
    in.push_back(&held[i]);
  }
  dnn::Handle h;
  std::vector<Tensor> out(n.outputs.size());
  std::unique_ptr<detail::NodeCache> cache;
  detail::KernelCall call{n, opset, std::move(in), out, h, std::vector<char>(inputs.size(), 1), cache};
  TESSERA_RETURN_IF_ERROR(k(call));
  std::vector<graph::Constant> r;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (n.outputs[i] == graph::kNoValue) {
      r.emplace_back();
      continue;
    }
    if (!out[i].defined()) return internal_error("evaluate: output " + std::to_string(i) + " is empty");
    TESSERA_ASSIGN_OR_RETURN(graph::Constant c, detail::tensor_constant(h, out[i]));
    r.push_back(std::move(c));
  }
  return r;
}

Result<Session> Session::open(const std::filesystem::path& model, const SessionOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(graph::Model m, graph::import_onnx(model));
  return create(std::move(m), options);
}

Result<Session> Session::create(graph::Model model, const SessionOptions& options) {
  TESSERA_RETURN_IF_ERROR(graph::verify(model).with_context("session"));
  TESSERA_RETURN_IF_ERROR(graph::infer_types(model).with_context("session"));
  auto s = std::make_unique<State>();
  graph::OptimizeOptions oo;
  oo.level = options.opt_level;
  oo.disabled = options.disabled_passes;
  oo.dump_dir = options.dump_dir;
  oo.evaluate = &evaluate_node;
  Result<std::vector<graph::PassReport>> reports = graph::optimize(model, oo);
  if (!reports.is_ok()) return reports.status().with_context("session");
  s->reports = std::move(reports).value();
  if (options.threads < 0) return invalid_argument("session: threads " + std::to_string(options.threads) + " (0 for the thread pool)");
  if (options.threads > 0) TESSERA_RETURN_IF_ERROR(s->h.set_num_threads(options.threads));
  s->model = std::move(model);
  s->opset = s->model.opsets.at("");
  const graph::Graph& g = s->model.graph;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    if (!n.domain.empty() && n.domain != graph::kTesseraDomain)
      return unsupported("session: " + node_name(n, i) + ": the domain '" + n.domain + "' is not supported");
    const detail::Kernel k = detail::find_kernel(n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type);
    if (!k) return unsupported("session: " + node_name(n, i) + ": the op " + n.op_type + " is not supported yet");
    s->kernels.push_back(k);
  }
  s->constants.resize(g.values.size());
  for (graph::ValueId v : g.initializers) {
    const graph::Value& val = g.values[static_cast<std::size_t>(v)];
    TESSERA_ASSIGN_OR_RETURN(s->constants[static_cast<std::size_t>(v)], detail::constant_tensor(*val.constant, "session: constant '" + val.name + "'"));
    s->constant_buffers.insert(s->constants[static_cast<std::size_t>(v)].buffer().get());
  }
  s->is_constant.assign(g.values.size(), 0);
  for (graph::ValueId v : g.initializers) s->is_constant[static_cast<std::size_t>(v)] = 1;
  for (graph::ValueId v : g.inputs) {
    const graph::Value& val = g.values[static_cast<std::size_t>(v)];
    s->inputs.push_back(IoInfo{val.name, val.type, val.constant != nullptr});
    s->is_constant[static_cast<std::size_t>(v)] = 0;  // a default the caller may replace
  }
  s->caches.resize(g.nodes.size());
  for (graph::ValueId v : g.outputs) {
    const graph::Value& val = g.values[static_cast<std::size_t>(v)];
    s->outputs.push_back(IoInfo{val.name, val.type, false});
  }
  s->last_use.assign(g.values.size(), -1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    for (graph::ValueId v : g.nodes[i].inputs)
      if (v != graph::kNoValue) s->last_use[static_cast<std::size_t>(v)] = static_cast<int>(i);
  for (graph::ValueId v : g.outputs) s->last_use[static_cast<std::size_t>(v)] = INT_MAX;
  return Session(std::move(s));
}

Result<std::vector<NamedTensor>> Session::run(const std::vector<NamedTensor>& inputs) {
  const graph::Graph& g = s_->model.graph;
  std::vector<Tensor> vals = s_->constants;
  std::set<std::string> given;
  for (const NamedTensor& in : inputs) {
    const graph::ValueId v = g.find(in.name);
    const bool is_input = v != graph::kNoValue && std::find(g.inputs.begin(), g.inputs.end(), v) != g.inputs.end();
    if (!is_input) {
      std::string names;
      for (const IoInfo& io : s_->inputs) names += (names.empty() ? "" : ", ") + io.name;
      return invalid_argument("run: '" + in.name + "' is not an input of the model (its inputs: " + names + ")");
    }
    if (!given.insert(in.name).second) return invalid_argument("run: input '" + in.name + "' is given twice");
    const Tensor& t = in.tensor;
    if (!t.defined()) return invalid_argument("run: input '" + in.name + "' holds no tensor");
    if (t.device().type != DeviceType::kCpu) return invalid_argument("run: input '" + in.name + "' is not in host memory");
    const graph::ValueType& want = g.values[static_cast<std::size_t>(v)].type;
    const auto dtype = graph::to_dtype(want.elem);
    if (dtype && *dtype != t.dtype())
      return invalid_argument("run: input '" + in.name + "' is " + std::string(dtype_name(t.dtype())) + ", the model wants " + graph::to_text(want));
    if (want.shape) {
      bool ok = static_cast<int>(want.shape->size()) == t.rank();
      for (std::size_t i = 0; ok && i < want.shape->size(); ++i)
        ok = !(*want.shape)[i].has_size() || (*want.shape)[i].size == t.shape()[static_cast<int>(i)];
      if (!ok) return invalid_argument("run: input '" + in.name + "' has dims " + t.shape().to_string() + ", the model wants " + graph::to_text(want));
    }
    vals[static_cast<std::size_t>(v)] = t;
  }
  for (const IoInfo& io : s_->inputs)
    if (!io.has_default && !given.count(io.name)) return invalid_argument("run: input '" + io.name + "' is missing");

  try {
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const graph::Node& n = g.nodes[i];
      std::vector<const Tensor*> in;
      std::vector<char> constant;
      for (graph::ValueId v : n.inputs) {
        constant.push_back(v != graph::kNoValue && s_->is_constant[static_cast<std::size_t>(v)]);
        if (v == graph::kNoValue) {
          in.push_back(nullptr);
          continue;
        }
        if (!vals[static_cast<std::size_t>(v)].defined())
          return internal_error("run: " + node_name(n, i) + ": input '" + g.values[static_cast<std::size_t>(v)].name + "' has no value");
        in.push_back(&vals[static_cast<std::size_t>(v)]);
      }
      std::vector<Tensor> out(n.outputs.size());
      detail::KernelCall call{n, s_->opset, std::move(in), out, s_->h, std::move(constant), s_->caches[i]};
      const Status st = s_->kernels[i](call);
      if (!st.is_ok()) return Status(st.code(), "run: " + node_name(n, i) + ": " + st.message());
      for (std::size_t k = 0; k < n.outputs.size(); ++k) {
        const graph::ValueId v = n.outputs[k];
        if (v == graph::kNoValue) continue;
        if (!out[k].defined()) return internal_error("run: " + node_name(n, i) + " left output " + std::to_string(k) + " empty");
        vals[static_cast<std::size_t>(v)] = std::move(out[k]);
      }
      for (graph::ValueId v : n.inputs)
        if (v != graph::kNoValue && s_->last_use[static_cast<std::size_t>(v)] == static_cast<int>(i)) vals[static_cast<std::size_t>(v)] = Tensor();
    }
  } catch (const std::bad_alloc&) {
    return out_of_memory("run: out of memory");
  }
  // Outputs that share memory with the model's constants (an initializer, or a view of one)
  // are copied: writing into them must not change the next run.
  std::vector<NamedTensor> result;
  for (graph::ValueId v : g.outputs) {
    Tensor t = vals[static_cast<std::size_t>(v)];
    if (s_->constant_buffers.count(t.buffer().get())) {
      TESSERA_ASSIGN_OR_RETURN(t, t.clone());
    }
    result.push_back({g.values[static_cast<std::size_t>(v)].name, std::move(t)});
  }
  return result;
}

}  // namespace tessera::exec
