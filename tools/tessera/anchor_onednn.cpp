#include "anchor_onednn.hpp"

#include <type_traits>

#include <dlfcn.h>
#include <dnnl.h>

namespace tessera::cli::onednn {
namespace {

// Every oneDNN function the anchor calls, resolved with dlsym: the types come from dnnl.h,
// the code from the library opened at run time.
#define TESSERA_DNNL_FUNCTIONS(X)                        \
  X(dnnl_version)                                        \
  X(dnnl_get_effective_cpu_isa)                          \
  X(dnnl_engine_create)                                  \
  X(dnnl_stream_create)                                  \
  X(dnnl_stream_wait)                                    \
  X(dnnl_memory_desc_init_by_strides)                    \
  X(dnnl_memory_desc_init_by_tag)                        \
  X(dnnl_memory_desc_get_size)                           \
  X(dnnl_memory_create)                                  \
  X(dnnl_memory_destroy)                                 \
  X(dnnl_memory_get_memory_desc)                         \
  X(dnnl_primitive_desc_create)                          \
  X(dnnl_primitive_desc_destroy)                         \
  X(dnnl_primitive_desc_query)                           \
  X(dnnl_primitive_desc_query_md)                        \
  X(dnnl_primitive_create)                               \
  X(dnnl_primitive_destroy)                              \
  X(dnnl_primitive_execute)                              \
  X(dnnl_reorder_primitive_desc_create)                  \
  X(dnnl_dilated_convolution_forward_desc_init)          \
  X(dnnl_dilated_convolution_backward_data_desc_init)    \
  X(dnnl_dilated_convolution_backward_weights_desc_init) \
  X(dnnl_pooling_v2_forward_desc_init)                   \
  X(dnnl_pooling_v2_backward_desc_init)                  \
  X(dnnl_eltwise_forward_desc_init)                      \
  X(dnnl_eltwise_backward_desc_init)                     \
  X(dnnl_softmax_v2_forward_desc_init)                   \
  X(dnnl_softmax_v2_backward_desc_init)                  \
  X(dnnl_batch_normalization_forward_desc_init)          \
  X(dnnl_batch_normalization_backward_desc_init)         \
  X(dnnl_layer_normalization_forward_desc_init)          \
  X(dnnl_layer_normalization_backward_desc_init)         \
  X(dnnl_lrn_forward_desc_init)                          \
  X(dnnl_lrn_backward_desc_init)

struct Api {
#define TESSERA_DNNL_POINTER(name) decltype(&::name) name = nullptr;
  TESSERA_DNNL_FUNCTIONS(TESSERA_DNNL_POINTER)
#undef TESSERA_DNNL_POINTER
  void (*omp_set_num_threads)(int) = nullptr;
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  Info info;
};

constexpr const char* kPaths[] = {"libdnnl.so.2", "/usr/lib/x86_64-linux-gnu/libdnnl.so.2",
                                  "/usr/local/lib/libdnnl.so.2", "/usr/lib64/libdnnl.so.2",
                                  "/opt/intel/oneapi/dnnl/latest/lib/libdnnl.so.2"};

std::string status_name(dnnl_status_t s) {
  switch (s) {
    case dnnl_success:
      return "success";
    case dnnl_out_of_memory:
      return "out of memory";
    case dnnl_invalid_arguments:
      return "invalid arguments";
    case dnnl_unimplemented:
      return "unimplemented";
    case dnnl_iterator_ends:
      return "iterator ends";
    case dnnl_runtime_error:
      return "runtime error";
    case dnnl_not_required:
      return "not required";
    default:
      return "status " + std::to_string(static_cast<int>(s));
  }
}

const char* isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41:
      return "sse41";
    case dnnl_cpu_isa_avx:
      return "avx";
    case dnnl_cpu_isa_avx2:
      return "avx2";
    case dnnl_cpu_isa_avx2_vnni:
      return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core:
      return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "isa ?";
  }
}

struct Opened {
  Api api;
  std::string error;  // empty when opened
};

Opened* load() {
  static Opened* opened = [] {
    auto* o = new Opened;  // lives for the process, like the library handle
    void* handle = nullptr;
    std::string path;
    for (const char* p : kPaths) {
      handle = dlopen(p, RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) {
        path = p;
        break;
      }
    }
    if (handle == nullptr) {
      o->error = "oneDNN is not installed (no libdnnl.so.2 found by the loader)";
      return o;
    }
    Api& a = o->api;
#define TESSERA_DNNL_RESOLVE(name)                                    \
  a.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (a.name == nullptr) {                                            \
    o->error = path + " has no " #name " (oneDNN 2.x is needed)";     \
    return o;                                                         \
  }
    TESSERA_DNNL_FUNCTIONS(TESSERA_DNNL_RESOLVE)
#undef TESSERA_DNNL_RESOLVE
    // Debian's build threads with OpenMP (libgomp, a dependency of the library, so dlsym
    // on its handle finds it); a TBB or sequential build has no such call.
    a.omp_set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(handle, "omp_set_num_threads"));
    if (dnnl_status_t s = a.dnnl_engine_create(&a.engine, dnnl_cpu, 0); s != dnnl_success) {
      o->error = "oneDNN: cannot create a CPU engine: " + status_name(s);
      return o;
    }
    if (dnnl_status_t s = a.dnnl_stream_create(&a.stream, a.engine, dnnl_stream_default_flags);
        s != dnnl_success) {
      o->error = "oneDNN: cannot create a stream: " + status_name(s);
      return o;
    }
    const dnnl_version_t* v = a.dnnl_version();
    const char* runtime = v->cpu_runtime == DNNL_RUNTIME_OMP   ? "OpenMP"
                          : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                          : v->cpu_runtime == DNNL_RUNTIME_SEQ ? "sequential"
                                                               : "threadpool";
    a.info.path = path;
    a.info.version = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                     std::to_string(v->patch) + " (" + runtime + ", " +
                     isa_name(a.dnnl_get_effective_cpu_isa()) + ")";
    return o;
  }();
  return opened;
}

const Api& api() {
  return load()->api;
}

Status fail(const std::string& what, dnnl_status_t s) {
  return unsupported("oneDNN: " + what + ": " + status_name(s));
}

#define TESSERA_DNNL_CHECK(what, call)                                           \
  do {                                                                           \
    if (dnnl_status_t st_ = (call); st_ != dnnl_success) return fail(what, st_); \
  } while (0)

Result<dnnl_data_type_t> data_type(DType d) {
  switch (d) {
    case DType::kF32:
      return dnnl_f32;
    case DType::kBF16:
      return dnnl_bf16;
    case DType::kF16:
      return dnnl_f16;
    default:
      return unsupported("oneDNN anchor: no dtype " + std::string(dtype_name(d)));
  }
}

void copy_dims(dnnl_dims_t out, const std::vector<std::int64_t>& v) {
  for (std::size_t i = 0; i < v.size() && i < DNNL_MAX_NDIMS; ++i) out[i] = v[i];
}

// The caller's layout, exactly (any strides).
Result<dnnl_memory_desc_t> user_md(const Tensor& t) {
  if (t.dims.empty() || t.dims.size() > DNNL_MAX_NDIMS || t.strides.size() != t.dims.size())
    return unsupported("oneDNN anchor: bad tensor rank " + std::to_string(t.dims.size()));
  TESSERA_ASSIGN_OR_RETURN(dnnl_data_type_t dt, data_type(t.dtype));
  dnnl_memory_desc_t md;
  dnnl_dims_t dims{}, strides{};
  copy_dims(dims, t.dims);
  copy_dims(strides, t.strides);
  TESSERA_DNNL_CHECK("memory descriptor",
                     api().dnnl_memory_desc_init_by_strides(&md, static_cast<int>(t.dims.size()),
                                                            dims, dt, strides));
  return md;
}

// Dims only: oneDNN picks the layout.
Result<dnnl_memory_desc_t> any_md(const std::vector<std::int64_t>& dims_v, DType d) {
  TESSERA_ASSIGN_OR_RETURN(dnnl_data_type_t dt, data_type(d));
  dnnl_memory_desc_t md;
  dnnl_dims_t dims{};
  copy_dims(dims, dims_v);
  TESSERA_DNNL_CHECK("memory descriptor",
                     api().dnnl_memory_desc_init_by_tag(&md, static_cast<int>(dims_v.size()), dims,
                                                        dt, dnnl_format_tag_any));
  return md;
}

// Grouped convolution weights as oneDNN wants them: [G, K/G, C/G, spatial...].
Tensor grouped_weights(const Tensor& w, std::int64_t groups) {
  if (groups == 1) return w;
  Tensor g = w;
  g.dims = {groups, w.dims[0] / groups};
  g.strides = {w.strides[0] * (w.dims[0] / groups), w.strides[0]};
  g.dims.insert(g.dims.end(), w.dims.begin() + 1, w.dims.end());
  g.strides.insert(g.strides.end(), w.strides.begin() + 1, w.strides.end());
  return g;
}

Status reorder(dnnl_memory_t from, dnnl_memory_t to) {
  const Api& a = api();
  const dnnl_memory_desc_t *from_md = nullptr, *to_md = nullptr;
  TESSERA_DNNL_CHECK("memory desc", a.dnnl_memory_get_memory_desc(from, &from_md));
  TESSERA_DNNL_CHECK("memory desc", a.dnnl_memory_get_memory_desc(to, &to_md));
  dnnl_primitive_desc_t pd = nullptr;
  TESSERA_DNNL_CHECK("reorder", a.dnnl_reorder_primitive_desc_create(&pd, from_md, a.engine, to_md,
                                                                     a.engine, nullptr));
  dnnl_primitive_t p = nullptr;
  dnnl_status_t s = a.dnnl_primitive_create(&p, pd);
  a.dnnl_primitive_desc_destroy(pd);
  if (s != dnnl_success) return fail("reorder", s);
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  s = a.dnnl_primitive_execute(p, a.stream, 2, args);
  if (s == dnnl_success) s = a.dnnl_stream_wait(a.stream);
  a.dnnl_primitive_destroy(p);
  if (s != dnnl_success) return fail("reorder", s);
  return Status::ok();
}

struct PdDelete {
  void operator()(dnnl_primitive_desc_t pd) const { api().dnnl_primitive_desc_destroy(pd); }
};
using Pd = std::unique_ptr<std::remove_pointer_t<dnnl_primitive_desc_t>, PdDelete>;

enum class Role { kInput, kOutput };
struct ArgSpec {
  int arg;
  const Tensor* user;  // the caller's data; for a grouped weight, already regrouped
  Role role;
};

class Prim final : public Primitive {
 public:
  ~Prim() override {
    const Api& a = api();
    if (prim_ != nullptr) a.dnnl_primitive_destroy(prim_);
    for (dnnl_memory_t m : owned_) a.dnnl_memory_destroy(m);
  }

  // Takes the primitive descriptor, binds every argument (inputs reordered into the chosen
  // layouts now), allocates the workspace unless `workspace` is given, creates the primitive.
  Status init(Pd pd, const std::vector<ArgSpec>& specs, dnnl_memory_t workspace) {
    const Api& a = api();
    pd_ = std::move(pd);
    for (const ArgSpec& s : specs) {
      const dnnl_memory_desc_t* md =
          a.dnnl_primitive_desc_query_md(pd_.get(), dnnl_query_exec_arg_md, s.arg);
      if (md == nullptr || a.dnnl_memory_desc_get_size(md) == 0)
        return unsupported("oneDNN: argument " + std::to_string(s.arg) + " is not used");
      TESSERA_ASSIGN_OR_RETURN(dnnl_memory_t mine, memory(md, DNNL_MEMORY_ALLOCATE));
      args_.push_back({s.arg, mine});
      if (s.user == nullptr || s.user->data == nullptr) {
        if (s.role == Role::kInput)
          return unsupported("oneDNN anchor: input " + std::to_string(s.arg) + " has no data");
        continue;
      }
      TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t umd, user_md(*s.user));
      TESSERA_ASSIGN_OR_RETURN(dnnl_memory_t user, memory(&umd, s.user->data));
      if (s.role == Role::kInput)
        TESSERA_RETURN_IF_ERROR(reorder(user, mine));
      else
        outputs_.push_back({mine, user});
    }
    const dnnl_memory_desc_t* ws =
        a.dnnl_primitive_desc_query_md(pd_.get(), dnnl_query_workspace_md, 0);
    if (workspace != nullptr) {
      args_.push_back({DNNL_ARG_WORKSPACE, workspace});
    } else if (ws != nullptr && a.dnnl_memory_desc_get_size(ws) > 0) {
      TESSERA_ASSIGN_OR_RETURN(workspace_, memory(ws, DNNL_MEMORY_ALLOCATE));
      args_.push_back({DNNL_ARG_WORKSPACE, workspace_});
    }
    TESSERA_DNNL_CHECK("primitive", a.dnnl_primitive_create(&prim_, pd_.get()));
    const char* impl = nullptr;
    if (a.dnnl_primitive_desc_query(pd_.get(), dnnl_query_impl_info_str, 0, &impl) ==
            dnnl_success &&
        impl != nullptr)
      impl_ = impl;
    return Status::ok();
  }

  Status run() override {
    const Api& a = api();
    TESSERA_DNNL_CHECK(
        "execute",
        a.dnnl_primitive_execute(prim_, a.stream, static_cast<int>(args_.size()), args_.data()));
    TESSERA_DNNL_CHECK("execute", a.dnnl_stream_wait(a.stream));
    return Status::ok();
  }

  Status fetch() override {
    for (const Output& o : outputs_) TESSERA_RETURN_IF_ERROR(reorder(o.mine, o.user));
    return Status::ok();
  }
  std::string impl() const override { return impl_; }
  dnnl_memory_t workspace() const { return workspace_; }
  const_dnnl_primitive_desc_t pd() const { return pd_.get(); }

  // The forward run that backward pooling/LRN need for the workspace; kept alive with this.
  std::unique_ptr<Prim> forward;

 private:
  Result<dnnl_memory_t> memory(const dnnl_memory_desc_t* md, void* data) {
    dnnl_memory_t m = nullptr;
    TESSERA_DNNL_CHECK("memory", api().dnnl_memory_create(&m, md, api().engine, data));
    owned_.push_back(m);
    return m;
  }

  struct Output {
    dnnl_memory_t mine, user;
  };
  Pd pd_;
  dnnl_primitive_t prim_ = nullptr;
  dnnl_memory_t workspace_ = nullptr;
  std::vector<dnnl_exec_arg_t> args_;
  std::vector<dnnl_memory_t> owned_;
  std::vector<Output> outputs_;
  std::string impl_;
};

Result<Pd> primitive_desc(const void* op_desc, const char* what,
                          const_dnnl_primitive_desc_t hint = nullptr) {
  dnnl_primitive_desc_t pd = nullptr;
  TESSERA_DNNL_CHECK(what,
                     api().dnnl_primitive_desc_create(&pd, op_desc, nullptr, api().engine, hint));
  return Pd(pd);
}

// A primitive for `op_desc` (a backward one needs the forward `hint`) with its arguments.
Result<std::unique_ptr<Prim>> build(const void* op_desc, const char* what,
                                    const std::vector<ArgSpec>& specs,
                                    const_dnnl_primitive_desc_t hint = nullptr,
                                    dnnl_memory_t workspace = nullptr) {
  TESSERA_ASSIGN_OR_RETURN(Pd pd, primitive_desc(op_desc, what, hint));
  auto p = std::make_unique<Prim>();
  TESSERA_RETURN_IF_ERROR(p->init(std::move(pd), specs, workspace));
  return p;
}

Result<PrimitivePtr> done(Result<std::unique_ptr<Prim>> p) {
  if (!p.is_ok()) return p.status();
  return PrimitivePtr(std::move(p).value());
}

Status check_open() {
  std::string why;
  if (open(&why) == nullptr) return unsupported(why);
  return Status::ok();
}

std::vector<std::int64_t> minus_one(const std::vector<std::int64_t>& v) {
  std::vector<std::int64_t> o = v;
  for (auto& e : o) e -= 1;
  return o;
}

}  // namespace

Tensor tensor(const dnn::TensorDesc& d, const void* data) {
  return {d.dtype, d.dims, d.strides, const_cast<void*>(data)};
}

const Info* open(std::string* why) {
  Opened* o = load();
  if (!o->error.empty()) {
    if (why != nullptr) *why = o->error;
    return nullptr;
  }
  return &o->api.info;
}

void set_threads(int n) {
  if (open(nullptr) != nullptr && api().omp_set_num_threads != nullptr)
    api().omp_set_num_threads(n);
}

Result<PrimitivePtr> make_conv(const ConvSpec& s) {
  TESSERA_RETURN_IF_ERROR(check_open());
  const Api& a = api();
  const Tensor w = grouped_weights(s.w, s.groups);
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t xmd, any_md(s.x.dims, s.x.dtype));
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t wmd, any_md(w.dims, w.dtype));
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t ymd, any_md(s.y.dims, s.y.dtype));
  dnnl_dims_t stride{}, dil{}, pl{}, pr{};
  copy_dims(stride, s.stride);
  copy_dims(dil, minus_one(s.dilation));  // oneDNN counts dilation from 0
  copy_dims(pl, s.pad_begin);
  copy_dims(pr, s.pad_end);
  const bool forward = s.dir == dnn::ConvDir::kForward;
  // The forward descriptor: the problem itself, or the hint of a backward one.
  dnnl_convolution_desc_t fwd, bwd;
  TESSERA_DNNL_CHECK("convolution",
                     a.dnnl_dilated_convolution_forward_desc_init(
                         &fwd, forward ? dnnl_forward_inference : dnnl_forward_training,
                         dnnl_convolution_auto, &xmd, &wmd, nullptr, &ymd, stride, dil, pl, pr));
  if (forward)
    return done(build(&fwd, "convolution",
                      {{DNNL_ARG_SRC, &s.x, Role::kInput},
                       {DNNL_ARG_WEIGHTS, &w, Role::kInput},
                       {DNNL_ARG_DST, &s.y, Role::kOutput}}));
  TESSERA_ASSIGN_OR_RETURN(Pd hint, primitive_desc(&fwd, "convolution"));
  if (s.dir == dnn::ConvDir::kBackwardData) {
    TESSERA_DNNL_CHECK("convolution backward data",
                       a.dnnl_dilated_convolution_backward_data_desc_init(
                           &bwd, dnnl_convolution_auto, &xmd, &wmd, &ymd, stride, dil, pl, pr));
    return done(build(&bwd, "convolution backward data",
                      {{DNNL_ARG_WEIGHTS, &w, Role::kInput},
                       {DNNL_ARG_DIFF_DST, &s.y, Role::kInput},
                       {DNNL_ARG_DIFF_SRC, &s.x, Role::kOutput}},
                      hint.get()));
  }
  TESSERA_DNNL_CHECK(
      "convolution backward weights",
      a.dnnl_dilated_convolution_backward_weights_desc_init(&bwd, dnnl_convolution_auto, &xmd, &wmd,
                                                            nullptr, &ymd, stride, dil, pl, pr));
  return done(build(&bwd, "convolution backward weights",
                    {{DNNL_ARG_SRC, &s.x, Role::kInput},
                     {DNNL_ARG_DIFF_DST, &s.y, Role::kInput},
                     {DNNL_ARG_DIFF_WEIGHTS, &w, Role::kOutput}},
                    hint.get()));
}

Result<PrimitivePtr> make_pool(const PoolSpec& s) {
  TESSERA_RETURN_IF_ERROR(check_open());
  const Api& a = api();
  const dnnl_alg_kind_t alg = s.kind == dnn::PoolKind::kMax ? dnnl_pooling_max
                              : s.kind == dnn::PoolKind::kAvgIncludePad
                                  ? dnnl_pooling_avg_include_padding
                                  : dnnl_pooling_avg_exclude_padding;
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t xmd, user_md(s.x));
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t ymd, user_md(s.backward ? s.dy : s.y));
  dnnl_dims_t stride{}, kernel{}, dil{}, pl{}, pr{};
  copy_dims(stride, s.stride);
  copy_dims(kernel, s.kernel);
  copy_dims(dil, minus_one(s.dilation));
  copy_dims(pl, s.pad_begin);
  copy_dims(pr, s.pad_end);
  dnnl_pooling_v2_desc_t fwd, bwd;
  TESSERA_DNNL_CHECK(
      "pooling", a.dnnl_pooling_v2_forward_desc_init(
                     &fwd, s.backward ? dnnl_forward_training : dnnl_forward_inference, alg, &xmd,
                     &ymd, stride, kernel, dil, pl, pr));
  if (!s.backward)
    return done(build(&fwd, "pooling",
                      {{DNNL_ARG_SRC, &s.x, Role::kInput}, {DNNL_ARG_DST, &s.y, Role::kOutput}}));
  // Backward max pooling reads the workspace of a forward training run (made here, untimed).
  TESSERA_ASSIGN_OR_RETURN(
      auto f, build(&fwd, "pooling",
                    {{DNNL_ARG_SRC, &s.x, Role::kInput}, {DNNL_ARG_DST, nullptr, Role::kOutput}}));
  TESSERA_RETURN_IF_ERROR(f->run());
  TESSERA_DNNL_CHECK("pooling backward", a.dnnl_pooling_v2_backward_desc_init(
                                             &bwd, alg, &xmd, &ymd, stride, kernel, dil, pl, pr));
  TESSERA_ASSIGN_OR_RETURN(auto p, build(&bwd, "pooling backward",
                                         {{DNNL_ARG_DIFF_DST, &s.dy, Role::kInput},
                                          {DNNL_ARG_DIFF_SRC, &s.dx, Role::kOutput}},
                                         f->pd(), f->workspace()));
  p->forward = std::move(f);
  return PrimitivePtr(std::move(p));
}

Result<PrimitivePtr> make_eltwise(const EltwiseSpec& s) {
  TESSERA_RETURN_IF_ERROR(check_open());
  const Api& a = api();
  using dnn::ActKind;
  dnnl_alg_kind_t alg = dnnl_eltwise_linear;
  float alpha = 0, beta = 0;
  switch (s.act.kind) {
    case ActKind::kIdentity:
      alg = dnnl_eltwise_linear, alpha = 1;
      break;
    case ActKind::kRelu:
      alg = dnnl_eltwise_relu;
      break;
    case ActKind::kLeakyRelu:
      alg = dnnl_eltwise_relu, alpha = s.act.alpha;
      break;
    case ActKind::kElu:
      alg = dnnl_eltwise_elu, alpha = s.act.alpha;
      break;
    case ActKind::kSigmoid:
      alg = dnnl_eltwise_logistic;
      break;
    case ActKind::kTanh:
      alg = dnnl_eltwise_tanh;
      break;
    case ActKind::kGeluErf:
      alg = dnnl_eltwise_gelu_erf;
      break;
    case ActKind::kGeluTanh:
      alg = dnnl_eltwise_gelu_tanh;
      break;
    case ActKind::kSilu:
      alg = dnnl_eltwise_swish, alpha = 1;
      break;
    case ActKind::kMish:
      alg = dnnl_eltwise_mish;
      break;
    case ActKind::kSoftplus:
      alg = dnnl_eltwise_soft_relu;
      break;
    case ActKind::kClip:
      alg = dnnl_eltwise_clip_v2, alpha = s.act.alpha, beta = s.act.beta;
      break;
    case ActKind::kHardSwish:
      alg = dnnl_eltwise_hardswish;
      break;
    case ActKind::kAbs:
      alg = dnnl_eltwise_abs;
      break;
    default:
      return unsupported("oneDNN 2.6 has no " + std::string(dnn::act_name(s.act.kind)) +
                         " eltwise algorithm");
  }
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t xmd, user_md(s.x));
  dnnl_eltwise_desc_t fwd, bwd;
  TESSERA_DNNL_CHECK(
      "eltwise", a.dnnl_eltwise_forward_desc_init(
                     &fwd, s.backward ? dnnl_forward_training : dnnl_forward_inference, alg, &xmd,
                     alpha, beta));
  if (!s.backward)
    return done(build(&fwd, "eltwise",
                      {{DNNL_ARG_SRC, &s.x, Role::kInput}, {DNNL_ARG_DST, &s.y, Role::kOutput}}));
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t dmd, user_md(s.dy));
  TESSERA_ASSIGN_OR_RETURN(Pd hint, primitive_desc(&fwd, "eltwise"));
  TESSERA_DNNL_CHECK("eltwise backward",
                     a.dnnl_eltwise_backward_desc_init(&bwd, alg, &dmd, &xmd, alpha, beta));
  return done(build(&bwd, "eltwise backward",
                    {{DNNL_ARG_SRC, &s.x, Role::kInput},
                     {DNNL_ARG_DIFF_DST, &s.dy, Role::kInput},
                     {DNNL_ARG_DIFF_SRC, &s.dx, Role::kOutput}},
                    hint.get()));
}

Result<PrimitivePtr> make_softmax(const SoftmaxSpec& s) {
  TESSERA_RETURN_IF_ERROR(check_open());
  const Api& a = api();
  const dnnl_alg_kind_t alg = s.log ? dnnl_softmax_log : dnnl_softmax_accurate;
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t xmd, user_md(s.x));
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t ymd, user_md(s.y));
  dnnl_softmax_v2_desc_t fwd, bwd;
  TESSERA_DNNL_CHECK(
      "softmax", a.dnnl_softmax_v2_forward_desc_init(
                     &fwd, s.backward ? dnnl_forward_training : dnnl_forward_inference, alg, &xmd,
                     &ymd, s.axis));
  if (!s.backward)
    return done(build(&fwd, "softmax",
                      {{DNNL_ARG_SRC, &s.x, Role::kInput}, {DNNL_ARG_DST, &s.y, Role::kOutput}}));
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t dymd, user_md(s.dy));
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t dxmd, user_md(s.dx));
  TESSERA_ASSIGN_OR_RETURN(Pd hint, primitive_desc(&fwd, "softmax"));
  TESSERA_DNNL_CHECK("softmax backward",
                     a.dnnl_softmax_v2_backward_desc_init(&bwd, alg, &dxmd, &dymd, &ymd, s.axis));
  return done(build(&bwd, "softmax backward",
                    {{DNNL_ARG_DST, &s.y, Role::kInput},
                     {DNNL_ARG_DIFF_DST, &s.dy, Role::kInput},
                     {DNNL_ARG_DIFF_SRC, &s.dx, Role::kOutput}},
                    hint.get()));
}

Result<PrimitivePtr> make_norm(const NormSpec& s) {
  TESSERA_RETURN_IF_ERROR(check_open());
  const Api& a = api();
  const float eps = static_cast<float>(s.epsilon);
  const unsigned scale_shift = dnnl_use_scale | dnnl_use_shift;
  const char* what = s.layer ? "layer normalization" : "batch normalization";
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t xmd, user_md(s.x));
  union {
    dnnl_batch_normalization_desc_t bn;
    dnnl_layer_normalization_desc_t ln;
  } fwd, bwd;
  // The forward descriptor: the problem, or the hint of the backward one.
  const bool inference = s.prop == NormProp::kForwardInference;
  const dnnl_prop_kind_t fprop = inference ? dnnl_forward_inference : dnnl_forward_training;
  const unsigned fflags = scale_shift | (inference ? unsigned{dnnl_use_global_stats} : 0u);
  TESSERA_DNNL_CHECK(what, s.layer ? a.dnnl_layer_normalization_forward_desc_init(
                                         &fwd.ln, fprop, &xmd, nullptr, eps, fflags)
                                   : a.dnnl_batch_normalization_forward_desc_init(
                                         &fwd.bn, fprop, &xmd, eps, fflags));
  if (s.prop != NormProp::kBackward) {
    const Role stats = inference ? Role::kInput : Role::kOutput;
    return done(build(&fwd, what,
                      {{DNNL_ARG_SRC, &s.x, Role::kInput},
                       {DNNL_ARG_DST, &s.y, Role::kOutput},
                       {DNNL_ARG_SCALE, &s.scale, Role::kInput},
                       {DNNL_ARG_SHIFT, &s.shift, Role::kInput},
                       {DNNL_ARG_MEAN, &s.mean, stats},
                       {DNNL_ARG_VARIANCE, &s.variance, stats}}));
  }
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t dmd, user_md(s.dy));
  TESSERA_ASSIGN_OR_RETURN(Pd hint, primitive_desc(&fwd, what));
  TESSERA_DNNL_CHECK(what, s.layer
                               ? a.dnnl_layer_normalization_backward_desc_init(
                                     &bwd.ln, dnnl_backward, &dmd, &xmd, nullptr, eps, scale_shift)
                               : a.dnnl_batch_normalization_backward_desc_init(
                                     &bwd.bn, dnnl_backward, &dmd, &xmd, eps, scale_shift));
  return done(build(&bwd, what,
                    {{DNNL_ARG_SRC, &s.x, Role::kInput},
                     {DNNL_ARG_DIFF_DST, &s.dy, Role::kInput},
                     {DNNL_ARG_SCALE, &s.scale, Role::kInput},
                     {DNNL_ARG_SHIFT, &s.shift, Role::kInput},
                     {DNNL_ARG_MEAN, &s.mean, Role::kInput},
                     {DNNL_ARG_VARIANCE, &s.variance, Role::kInput},
                     {DNNL_ARG_DIFF_SRC, &s.dx, Role::kOutput},
                     {DNNL_ARG_DIFF_SCALE, &s.dscale, Role::kOutput},
                     {DNNL_ARG_DIFF_SHIFT, &s.dshift, Role::kOutput}},
                    hint.get()));
}

Result<PrimitivePtr> make_lrn(const LrnSpec& s) {
  TESSERA_RETURN_IF_ERROR(check_open());
  const Api& a = api();
  const dnnl_alg_kind_t alg = s.desc.mode == dnn::LrnMode::kAcrossChannels
                                  ? dnnl_lrn_across_channels
                                  : dnnl_lrn_within_channel;
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t xmd, user_md(s.x));
  const auto alpha = static_cast<float>(s.desc.alpha), beta = static_cast<float>(s.desc.beta),
             k = static_cast<float>(s.desc.k);
  dnnl_lrn_desc_t fwd, bwd;
  TESSERA_DNNL_CHECK("lrn", a.dnnl_lrn_forward_desc_init(
                                &fwd, s.backward ? dnnl_forward_training : dnnl_forward_inference,
                                alg, &xmd, s.desc.size, alpha, beta, k));
  if (!s.backward)
    return done(build(&fwd, "lrn",
                      {{DNNL_ARG_SRC, &s.x, Role::kInput}, {DNNL_ARG_DST, &s.y, Role::kOutput}}));
  // Backward reads the workspace of a forward training run (made here, untimed).
  TESSERA_ASSIGN_OR_RETURN(
      auto f, build(&fwd, "lrn",
                    {{DNNL_ARG_SRC, &s.x, Role::kInput}, {DNNL_ARG_DST, nullptr, Role::kOutput}}));
  TESSERA_RETURN_IF_ERROR(f->run());
  TESSERA_ASSIGN_OR_RETURN(dnnl_memory_desc_t dmd, user_md(s.dy));
  TESSERA_DNNL_CHECK("lrn backward", a.dnnl_lrn_backward_desc_init(&bwd, alg, &dmd, &xmd,
                                                                   s.desc.size, alpha, beta, k));
  TESSERA_ASSIGN_OR_RETURN(auto p, build(&bwd, "lrn backward",
                                         {{DNNL_ARG_SRC, &s.x, Role::kInput},
                                          {DNNL_ARG_DIFF_DST, &s.dy, Role::kInput},
                                          {DNNL_ARG_DIFF_SRC, &s.dx, Role::kOutput}},
                                         f->pd(), f->workspace()));
  p->forward = std::move(f);
  return PrimitivePtr(std::move(p));
}

}  // namespace tessera::cli::onednn
