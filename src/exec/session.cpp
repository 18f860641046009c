// Sessions: a model checked once (verify, type inference, a kernel for every node, constants
// as tensors), then run node by node; each intermediate tensor is dropped after its last use.
#include <algorithm>
#include <chrono>
#include <climits>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>

#include "kernels.hpp"
#include "memory_plan.hpp"
#include "program.hpp"
#include "tessera/session.hpp"

namespace tessera::exec {

using Dims = std::vector<std::int64_t>;

namespace {

// The memory plan in use: the input signature it was learned from, and a tensor over each
// planned value's slot (its own Buffer object, so that a kernel's output can be told apart by
// the Buffer it points into).
struct Arena {
  std::vector<std::pair<Dims, DType>> signature;  // per graph input
  std::vector<detail::ValueUse> use;              // per value, as recorded
  detail::MemoryPlan plan;
  std::vector<Tensor> slot;                        // per value (undefined where none)
  std::map<const Buffer*, graph::ValueId> owner;   // slot Buffer -> its value
  bool made = false;
};

}  // namespace

struct Session::State {
  graph::Model model;
  dnn::Handle h;
  std::unique_ptr<detail::Program> program;  // the model's graph
  std::vector<IoInfo> inputs, outputs;
  std::vector<graph::PassReport> reports;
  bool plan_memory = true;
  Arena arena;
  bool profile = false;
  bool parallel_branches = false;
  std::vector<std::unique_ptr<dnn::Handle>> lanes;  // parallel branches: a handle per node of a wave
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();  // profiles count from here
  std::vector<RunProfile> profiles;
};

namespace {

// What the recording run saw of output k: its bytes, whether it is a view of an input, whether
// it is the tensor output() gave the kernel (packed, from its start).
void note_use(const detail::KernelCall& call, std::size_t k, detail::ValueUse& u) {
  const Tensor& t = call.out[k];
  u.bytes = t.nbytes();
  for (std::size_t j = 0; j < call.in.size() && u.view_of == graph::kNoValue; ++j)
    if (call.in[j] && call.in[j]->buffer() == t.buffer()) u.view_of = call.node.inputs[j];
  u.plannable = u.view_of == graph::kNoValue && k < call.given.size() && call.given[k].defined() &&
                call.given[k].buffer() == t.buffer() && t.offset_bytes() == 0 && t.is_contiguous();
}

// A kernel's output in the arena must lie in its own slot or, for a view the plan knows of,
// in its root's; any other (a view the recording run did not see) is copied out, since that
// slot may be reused while the view is still read.
Status keep_out_of_reused_slots(const Arena& a, graph::ValueId v, Tensor& t) {
  const auto it = a.owner.find(t.buffer().get());
  if (it == a.owner.end()) return Status::ok();
  graph::ValueId r = v;
  for (std::size_t hops = 0; a.use[static_cast<std::size_t>(r)].view_of != graph::kNoValue && hops < a.use.size(); ++hops)
    r = a.use[static_cast<std::size_t>(r)].view_of;
  if (it->second == v || it->second == r) return Status::ok();
  TESSERA_ASSIGN_OR_RETURN(t, t.clone());
  return Status::ok();
}

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// The session's part in running each node: the memory plan's slots for its outputs (planned
// runs) or what its outputs show (recording runs), and its profile.
struct RunHooks final : detail::NodeHooks {
  RunHooks(const Arena& a, std::size_t nodes, std::size_t values, bool planned_run, bool record_run, bool profile_run, Clock::time_point start)
      : arena(a), planned(planned_run), record(record_run), profile(profile_run), t0(start), node_start(nodes, 0.0) {
    prof.planned = planned;
    if (record) {
      use.resize(values);
      layout.resize(values);
    }
  }

  void before(std::size_t i, detail::KernelCall& call) override {
    const graph::Node& n = call.node;
    call.record = record;
    call.profiled = profile;
    if (planned) {
      call.given.resize(n.outputs.size());
      for (std::size_t k = 0; k < n.outputs.size(); ++k)
        if (n.outputs[k] != graph::kNoValue) call.given[k] = arena.slot[static_cast<std::size_t>(n.outputs[k])];
    }
    if (profile) node_start[i] = us_since(t0);
  }

  Status after(std::size_t i, detail::KernelCall& call) override {
    const graph::Node& n = call.node;
    if (profile) {
      NodeProfile np{i, n.name, n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type, call.chosen, {}, {}, node_start[i], us_since(t0) - node_start[i]};
      for (const Tensor* t : call.in) np.inputs.push_back(t ? t->shape().dims() : Dims{});
      for (const Tensor& t : call.out) np.outputs.push_back(t.defined() ? t.shape().dims() : Dims{});
      const std::lock_guard<std::mutex> lock(prof_mutex);
      prof.nodes.push_back(std::move(np));
    }
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      const graph::ValueId v = n.outputs[k];
      if (v == graph::kNoValue) continue;
      if (record) {
        note_use(call, k, use[static_cast<std::size_t>(v)]);
        layout[static_cast<std::size_t>(v)] = {call.out[k].shape().dims(), call.out[k].dtype()};
      }
      if (planned) TESSERA_RETURN_IF_ERROR(keep_out_of_reused_slots(arena, v, call.out[k]));
    }
    if (on_output)
      for (std::size_t k = 0; k < n.outputs.size(); ++k)
        if (n.outputs[k] != graph::kNoValue) report(n.outputs[k], call.out[k]);
    return Status::ok();
  }

  // on_output for each model output that is value v (each value has one producer: no races).
  void report(graph::ValueId v, const Tensor& t) {
    for (std::size_t o = 0; o < outputs->size(); ++o)
      if ((*outputs)[o] == v && !reported[o]) {
        reported[o] = 1;
        on_output(o, t);
      }
  }

  const Arena& arena;
  bool planned, record, profile;
  std::function<void(std::size_t, const Tensor&)> on_output;
  const std::vector<graph::ValueId>* outputs = nullptr;
  std::vector<char> reported;  // per model output
  Clock::time_point t0;
  std::vector<double> node_start;                    // per node (profiles)
  std::mutex prof_mutex;                             // nodes of a wave finish on several threads
  std::vector<detail::ValueUse> use;                 // recording: per value
  std::vector<std::pair<Dims, DType>> layout;        // recording: per value
  RunProfile prof;
};

// The plan of what a run recorded, with its arena allocated and a tensor over each slot. When
// the arena cannot be allocated the session goes on without a plan.
void make_arena(const graph::Graph& g, std::span<const int> wave_of, std::vector<std::pair<Dims, DType>> signature,
                std::vector<detail::ValueUse> use, const std::vector<std::pair<Dims, DType>>& layout, Arena& a, bool& plan_memory) {
  a = Arena{};
  a.signature = std::move(signature);
  a.use = std::move(use);
  a.plan = detail::plan_memory(g, a.use, wave_of);
  Result<std::shared_ptr<Buffer>> memory = host_allocator().allocate(a.plan.arena_bytes);
  if (!memory.is_ok()) {
    a = Arena{};
    plan_memory = false;
    return;
  }
  const std::shared_ptr<Buffer> buf = std::move(memory).value();
  a.slot.resize(g.values.size());
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    if (a.plan.offset[v] == detail::MemoryPlan::kNone) continue;
    const std::size_t bytes = a.plan.slot_bytes[static_cast<std::size_t>(a.plan.slot[v])];
    // Each slot its own Buffer over the arena's memory, keeping the arena alive.
    auto b = std::make_shared<Buffer>(static_cast<char*>(buf->data()) + a.plan.offset[v], bytes, buf->device(),
                                      [buf](void*, std::size_t) {});
    const Shape shape(layout[v].first);
    Result<Tensor> t = Tensor::view_of(b, 0, layout[v].second, shape, contiguous_strides(shape));
    if (!t.is_ok()) continue;
    a.owner[b.get()] = static_cast<graph::ValueId>(v);
    a.slot[v] = std::move(t).value();
  }
  a.made = true;
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

const std::vector<RunProfile>& Session::profiles() const { return s_->profiles; }
void Session::clear_profiles() { s_->profiles.clear(); }

MemoryPlanReport Session::memory_plan() const {
  const Arena& a = s_->arena;
  if (!a.made) return {};
  const detail::MemoryPlan& p = a.plan;
  return {true, p.arena_bytes, p.naive_bytes, p.unplanned_bytes, p.planned, p.in_place, p.views};
}

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

graph::LayoutAdvice advise_conv_layout(const graph::Graph& g, const graph::Node& n) {
  const auto type = [&](std::size_t k) -> const graph::ValueType& { return g.values[static_cast<std::size_t>(n.inputs[k])].type; };
  if (n.inputs.size() < 2 || n.inputs[1] == graph::kNoValue || !type(0).shape || !type(1).shape) return {false, "the input or weight dims are unknown"};
  Dims x, w;
  for (const graph::Dim& d : *type(0).shape) x.push_back(d.has_size() ? d.size : x.empty() ? 1 : -1);  // a symbolic batch as 1
  for (const graph::Dim& d : *type(1).shape) w.push_back(d.size);
  if (x.size() != 4 || w.size() != 4 || std::count(x.begin(), x.end(), -1) || std::count(w.begin(), w.end(), -1)) return {false, "the dims are not all known"};
  dnn::Handle h;
  std::vector<Tensor> out;
  std::unique_ptr<detail::NodeCache> cache;
  const detail::KernelCall call{n, 0, {}, out, h, {}, cache};  // for the attributes, as the kernel reads them
  const Result<dnn::ConvDesc> d = detail::conv_desc(call, x, w);
  if (!d.is_ok()) return {false, d.status().message()};
  const Result<dnn::LayoutChoice> c = dnn::preferred_conv_layout(h, d.value(), DType::kF32, x, w);
  if (!c.is_ok()) return {false, c.status().message()};
  return {c->layout == dnn::Layout::kNHWC, c->reason};
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
  oo.conv_layout = &advise_conv_layout;
  Result<std::vector<graph::PassReport>> reports = graph::optimize(model, oo);
  if (!reports.is_ok()) return reports.status().with_context("session");
  s->reports = std::move(reports).value();
  if (options.threads < 0) return invalid_argument("session: threads " + std::to_string(options.threads) + " (0 for the thread pool)");
  if (options.threads > 0) TESSERA_RETURN_IF_ERROR(s->h.set_num_threads(options.threads));
  s->plan_memory = options.plan_memory;
  s->profile = options.profile;
  s->parallel_branches = options.parallel_branches;
  s->model = std::move(model);
  const graph::Graph& g = s->model.graph;
  TESSERA_ASSIGN_OR_RETURN(s->program, detail::compile(g, s->model.opsets.at(""), "session"));
  for (graph::ValueId v : g.inputs) {
    const graph::Value& val = g.values[static_cast<std::size_t>(v)];
    s->inputs.push_back(IoInfo{val.name, val.type, val.constant != nullptr});
  }
  for (graph::ValueId v : g.outputs) {
    const graph::Value& val = g.values[static_cast<std::size_t>(v)];
    s->outputs.push_back(IoInfo{val.name, val.type, false});
  }
  return Session(std::move(s));
}

Result<std::vector<NamedTensor>> Session::run(const std::vector<NamedTensor>& inputs) { return run(inputs, RunOptions{}); }

Result<std::vector<NamedTensor>> Session::run(const std::vector<NamedTensor>& inputs, const RunOptions& options) {
  const graph::Graph& g = s_->model.graph;
  std::vector<Tensor> vals = s_->program->constants;
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

  // The memory plan: learned from this run when the input dims are new, used when they match.
  std::vector<std::pair<Dims, DType>> signature;
  for (graph::ValueId v : g.inputs) {
    const Tensor& t = vals[static_cast<std::size_t>(v)];
    signature.emplace_back(t.shape().dims(), t.dtype());
  }
  Arena& arena = s_->arena;
  const bool planned = s_->plan_memory && arena.made && arena.signature == signature;
  const bool record = s_->plan_memory && !planned;
  const bool profile = s_->profile || options.profile;
  RunHooks hooks(arena, g.nodes.size(), g.values.size(), planned, record, profile, s_->t0);
  hooks.on_output = options.on_output;
  hooks.outputs = &g.outputs;
  hooks.reported.assign(g.outputs.size(), 0);
  hooks.prof.start_us = profile ? us_since(s_->t0) : 0;
  detail::Program& program = *s_->program;
  try {
    const Status st = s_->parallel_branches ? detail::run_waves(program, s_->h, s_->lanes, vals, &hooks)
                                            : detail::run_nodes(program, s_->h, vals, &hooks);
    if (!st.is_ok()) return Status(st.code(), "run: " + st.message());
  } catch (const std::bad_alloc&) {
    return out_of_memory("run: out of memory");
  }
  if (record) {
    make_arena(g, s_->parallel_branches ? std::span<const int>(program.wave_of) : std::span<const int>(), signature, std::move(hooks.use),
               hooks.layout, arena, s_->plan_memory);
  }
  // Outputs that share memory with the model's constants (an initializer, or a view of one)
  // or lie in the arena are copied: writing into them must not change the next run, nor the
  // next run them.
  std::vector<NamedTensor> result;
  for (graph::ValueId v : g.outputs) {
    Tensor t = vals[static_cast<std::size_t>(v)];
    if (s_->program->constant_buffers.count(t.buffer().get()) || arena.owner.count(t.buffer().get())) {
      TESSERA_ASSIGN_OR_RETURN(t, t.clone());
    }
    result.push_back({g.values[static_cast<std::size_t>(v)].name, std::move(t)});
  }
  if (options.on_output)  // the outputs no node made (inputs, constants)
    for (std::size_t o = 0; o < result.size(); ++o)
      if (!hooks.reported[o]) options.on_output(o, result[o].tensor);
  if (profile) {
    hooks.prof.duration_us = us_since(s_->t0) - hooks.prof.start_us;
    std::sort(hooks.prof.nodes.begin(), hooks.prof.nodes.end(), [](const NodeProfile& a, const NodeProfile& b) { return a.node < b.node; });
    s_->profiles.push_back(std::move(hooks.prof));
  }
  return result;
}

}  // namespace tessera::exec
