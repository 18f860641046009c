// Programs (program.hpp): compiling a graph for the executor and running its nodes.
#include "program.hpp"

#include <algorithm>
#include <chrono>
#include <climits>

#include "tessera/core/thread_pool.hpp"
#include "tessera/graph/passes.hpp"

namespace tessera::exec::detail {

std::string node_name(const graph::Node& n, std::size_t i) {
  return "node " + std::to_string(i) + (n.name.empty() ? "" : " '" + n.name + "'") + " (" + n.op_type + ")";
}

Result<std::unique_ptr<Program>> compile(const graph::Graph& g, std::int64_t opset, const std::string& what) {
  auto p = std::make_unique<Program>();
  p->graph = &g;
  p->opset = opset;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    if (!n.domain.empty() && n.domain != graph::kTesseraDomain)
      return unsupported(what + ": " + node_name(n, i) + ": the domain '" + n.domain + "' is not supported");
    const Kernel k = find_kernel(n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type);
    if (!k) return unsupported(what + ": " + node_name(n, i) + ": the op " + n.op_type + " is not supported yet");
    p->kernels.push_back(k);
    p->outer.push_back(graph::subgraph_reads(g, n));
  }
  p->constants.resize(g.values.size());
  p->is_constant.assign(g.values.size(), 0);
  for (graph::ValueId v : g.initializers) {
    const graph::Value& val = g.values[static_cast<std::size_t>(v)];
    Tensor& t = p->constants[static_cast<std::size_t>(v)];
    TESSERA_ASSIGN_OR_RETURN(t, constant_tensor(*val.constant, what + ": constant '" + val.name + "'"));
    p->constant_buffers.insert(t.buffer().get());
    p->is_constant[static_cast<std::size_t>(v)] = 1;
  }
  for (graph::ValueId v : g.inputs) p->is_constant[static_cast<std::size_t>(v)] = 0;  // a default an input may replace
  p->caches.resize(g.nodes.size());
  p->last_use.assign(g.values.size(), -1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    for (graph::ValueId v : g.nodes[i].inputs)
      if (v != graph::kNoValue) p->last_use[static_cast<std::size_t>(v)] = static_cast<int>(i);
    for (graph::ValueId v : p->outer[i]) p->last_use[static_cast<std::size_t>(v)] = static_cast<int>(i);
  }
  for (graph::ValueId v : g.outputs) p->last_use[static_cast<std::size_t>(v)] = INT_MAX;
  std::vector<int> made_in(g.values.size(), -1);  // per value: the wave of its producer
  p->last_wave.assign(g.values.size(), -1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    int w = 0;
    const auto after = [&](graph::ValueId v) {
      if (v != graph::kNoValue) w = std::max(w, made_in[static_cast<std::size_t>(v)] + 1);
    };
    std::for_each(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end(), after);
    std::for_each(p->outer[i].begin(), p->outer[i].end(), after);
    for (graph::ValueId v : g.nodes[i].outputs)
      if (v != graph::kNoValue) made_in[static_cast<std::size_t>(v)] = w;
    if (p->waves.size() <= static_cast<std::size_t>(w)) p->waves.resize(static_cast<std::size_t>(w) + 1);
    p->waves[static_cast<std::size_t>(w)].push_back(static_cast<int>(i));
    p->wave_of.push_back(w);
    const auto read = [&](graph::ValueId v) {
      if (v != graph::kNoValue) p->last_wave[static_cast<std::size_t>(v)] = std::max(p->last_wave[static_cast<std::size_t>(v)], w);
    };
    std::for_each(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end(), read);
    std::for_each(p->outer[i].begin(), p->outer[i].end(), read);
  }
  for (graph::ValueId v : g.outputs) p->last_wave[static_cast<std::size_t>(v)] = INT_MAX;
  return p;
}

namespace {

std::size_t at(graph::ValueId v) { return static_cast<std::size_t>(v); }

// Node i of p over vals: its kernel called with its inputs and captures; its outputs stored.
Status run_node(Program& p, std::size_t i, dnn::Handle& h, std::vector<Tensor>& vals, NodeHooks* hooks) {
  const graph::Graph& g = *p.graph;
  const graph::Node& n = g.nodes[i];
  const auto value = [&](graph::ValueId v) -> Result<const Tensor*> {
    if (!vals[at(v)].defined()) return internal_error(node_name(n, i) + ": input '" + g.values[at(v)].name + "' has no value");
    return &vals[at(v)];
  };
  std::vector<const Tensor*> in;
  std::vector<char> constant;
  for (graph::ValueId v : n.inputs) {
    constant.push_back(v != graph::kNoValue && p.is_constant[at(v)]);
    if (v == graph::kNoValue) {
      in.push_back(nullptr);
      continue;
    }
    TESSERA_ASSIGN_OR_RETURN(const Tensor* t, value(v));
    in.push_back(t);
  }
  std::vector<Tensor> out(n.outputs.size());
  KernelCall call{n, p.opset, std::move(in), out, h, std::move(constant), p.caches[i]};
  for (graph::ValueId v : p.outer[i]) {
    TESSERA_ASSIGN_OR_RETURN(const Tensor* t, value(v));
    call.captured.emplace_back(g.values[at(v)].name, t);
  }
  if (hooks) hooks->before(i, call);
  if (const Status st = p.kernels[i](call); !st.is_ok()) return Status(st.code(), node_name(n, i) + ": " + st.message());
  for (std::size_t k = 0; k < n.outputs.size(); ++k)
    if (n.outputs[k] != graph::kNoValue && !out[k].defined())
      return internal_error(node_name(n, i) + " left output " + std::to_string(k) + " empty");
  if (hooks) TESSERA_RETURN_IF_ERROR(hooks->after(i, call));
  for (std::size_t k = 0; k < n.outputs.size(); ++k)
    if (n.outputs[k] != graph::kNoValue) vals[at(n.outputs[k])] = std::move(out[k]);
  return Status::ok();
}

// Drops the values node i reads whose last reader (by `last`: node index or wave) is `when`.
// Dropping a value frees a tensor of its own; a slot's memory stays with the arena.
void drop_dead(const Program& p, std::size_t i, const std::vector<int>& last, int when, std::vector<Tensor>& vals) {
  const auto drop = [&](graph::ValueId v) {
    if (v != graph::kNoValue && last[at(v)] == when) vals[at(v)] = Tensor();
  };
  const graph::Node& n = p.graph->nodes[i];
  std::for_each(n.inputs.begin(), n.inputs.end(), drop);
  std::for_each(p.outer[i].begin(), p.outer[i].end(), drop);
}

}  // namespace

Status run_nodes(Program& p, dnn::Handle& h, std::vector<Tensor>& vals, NodeHooks* hooks) {
  for (std::size_t i = 0; i < p.graph->nodes.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(run_node(p, i, h, vals, hooks));
    drop_dead(p, i, p.last_use, static_cast<int>(i), vals);
  }
  return Status::ok();
}

Status run_waves(Program& p, dnn::Handle& h, std::vector<std::unique_ptr<dnn::Handle>>& lanes, std::vector<Tensor>& vals,
                 NodeHooks* hooks) {
  p.wave_times.resize(p.waves.size());
  for (std::size_t w = 0; w < p.waves.size(); ++w) {
    const std::vector<int>& wave = p.waves[w];
    Program::WaveTimes& times = p.wave_times[w];
    // The first run (allocations, the memory plan's recording) is not timed; the next
    // Program::kWaveTries alternate; then at once only where it measured clearly faster.
    const bool at_once = wave.size() > 1 && times.tries > 0 &&
                         (times.tries <= Program::kWaveTries ? times.tries % 2 == 0 : times.at_once_us < 0.9 * times.one_by_one_us);
    const auto t0 = std::chrono::steady_clock::now();
    if (!at_once) {
      for (int i : wave) TESSERA_RETURN_IF_ERROR(run_node(p, static_cast<std::size_t>(i), h, vals, hooks));
    } else {
      while (lanes.size() < wave.size()) {
        lanes.push_back(std::make_unique<dnn::Handle>());
        TESSERA_RETURN_IF_ERROR(lanes.back()->set_num_threads(1));  // a node per thread
      }
      std::vector<Status> status(wave.size());
      thread_pool().parallel_for(0, static_cast<std::int64_t>(wave.size()), 1, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t k = b; k < e; ++k) {
          const auto ki = static_cast<std::size_t>(k);
          try {
            status[ki] = run_node(p, static_cast<std::size_t>(wave[ki]), *lanes[ki], vals, hooks);
          } catch (const std::bad_alloc&) {
            status[ki] = out_of_memory("out of memory");
          }
        }
      });
      for (const Status& s : status) TESSERA_RETURN_IF_ERROR(s);
    }
    if (wave.size() > 1) {
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (times.tries > 0) {
        double& best = at_once ? times.at_once_us : times.one_by_one_us;
        best = std::min(best, us);
      }
      ++times.tries;
    }
    for (int i : wave) drop_dead(p, static_cast<std::size_t>(i), p.last_wave, static_cast<int>(w), vals);
  }
  return Status::ok();
}

Result<std::vector<Tensor>> run_subgraph(Program& p, dnn::Handle& h, std::vector<Tensor> inputs, const Captured& captured) {
  const graph::Graph& g = *p.graph;
  if (inputs.size() != g.inputs.size())
    return invalid_argument("subgraph '" + g.name + "' takes " + std::to_string(g.inputs.size()) + " inputs, given " + std::to_string(inputs.size()));
  std::vector<Tensor> vals = p.constants;
  for (std::size_t k = 0; k < inputs.size(); ++k) vals[static_cast<std::size_t>(g.inputs[k])] = std::move(inputs[k]);
  for (graph::ValueId c : g.captures) {
    const std::string& name = g.values[static_cast<std::size_t>(c)].name;
    const auto it = std::find_if(captured.begin(), captured.end(), [&](const auto& e) { return e.first == name; });
    if (it == captured.end() || !it->second) return internal_error("subgraph '" + g.name + "': the captured value '" + name + "' is not given");
    vals[static_cast<std::size_t>(c)] = *it->second;
  }
  TESSERA_RETURN_IF_ERROR(run_nodes(p, h, vals).with_context("subgraph '" + g.name + "'"));
  std::vector<Tensor> out;
  for (graph::ValueId v : g.outputs) {
    Tensor t = vals[static_cast<std::size_t>(v)];
    if (!t.defined()) return internal_error("subgraph '" + g.name + "': output '" + g.values[static_cast<std::size_t>(v)].name + "' has no value");
    if (p.constant_buffers.count(t.buffer().get())) {
      TESSERA_ASSIGN_OR_RETURN(t, t.clone());
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace tessera::exec::detail
