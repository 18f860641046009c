// DNN C API: tsr_dnn_handle, tensor descriptors, the descriptor and enum conversions shared by
// every dnn_*.cpp, and the descriptor initialisers.
#include <algorithm>
#include <cstring>

#include "dnn_capi.hpp"

namespace tessera::capi {
namespace {

namespace dnn = tessera::dnn;

// The C enumerators mirror the C++ ones value for value; the conversions rely on it.
static_assert(static_cast<int>(DType::kBool) == TSR_DTYPE_BOOL &&
              static_cast<int>(DType::kI8) == TSR_DTYPE_I8 &&
              static_cast<int>(DType::kU8) == TSR_DTYPE_U8 &&
              static_cast<int>(DType::kI32) == TSR_DTYPE_I32 &&
              static_cast<int>(DType::kI64) == TSR_DTYPE_I64 &&
              static_cast<int>(DType::kF16) == TSR_DTYPE_F16 &&
              static_cast<int>(DType::kBF16) == TSR_DTYPE_BF16 &&
              static_cast<int>(DType::kF32) == TSR_DTYPE_F32 &&
              static_cast<int>(DType::kF64) == TSR_DTYPE_F64 &&
              static_cast<int>(DType::kC64) == TSR_DTYPE_C64 &&
              static_cast<int>(DType::kC128) == TSR_DTYPE_C128);
static_assert(static_cast<int>(dnn::Layout::kNCHW) == TSR_DNN_LAYOUT_NCHW &&
              static_cast<int>(dnn::Layout::kNHWC) == TSR_DNN_LAYOUT_NHWC);
static_assert(static_cast<int>(dnn::ActKind::kIdentity) == TSR_DNN_ACT_IDENTITY &&
              static_cast<int>(dnn::ActKind::kRelu) == TSR_DNN_ACT_RELU &&
              static_cast<int>(dnn::ActKind::kLeakyRelu) == TSR_DNN_ACT_LEAKY_RELU &&
              static_cast<int>(dnn::ActKind::kElu) == TSR_DNN_ACT_ELU &&
              static_cast<int>(dnn::ActKind::kSelu) == TSR_DNN_ACT_SELU &&
              static_cast<int>(dnn::ActKind::kCelu) == TSR_DNN_ACT_CELU &&
              static_cast<int>(dnn::ActKind::kSigmoid) == TSR_DNN_ACT_SIGMOID &&
              static_cast<int>(dnn::ActKind::kHardSigmoid) == TSR_DNN_ACT_HARD_SIGMOID &&
              static_cast<int>(dnn::ActKind::kTanh) == TSR_DNN_ACT_TANH &&
              static_cast<int>(dnn::ActKind::kGeluErf) == TSR_DNN_ACT_GELU_ERF &&
              static_cast<int>(dnn::ActKind::kGeluTanh) == TSR_DNN_ACT_GELU_TANH &&
              static_cast<int>(dnn::ActKind::kSilu) == TSR_DNN_ACT_SILU &&
              static_cast<int>(dnn::ActKind::kMish) == TSR_DNN_ACT_MISH &&
              static_cast<int>(dnn::ActKind::kSoftplus) == TSR_DNN_ACT_SOFTPLUS &&
              static_cast<int>(dnn::ActKind::kSoftsign) == TSR_DNN_ACT_SOFTSIGN &&
              static_cast<int>(dnn::ActKind::kClip) == TSR_DNN_ACT_CLIP &&
              static_cast<int>(dnn::ActKind::kHardSwish) == TSR_DNN_ACT_HARD_SWISH &&
              static_cast<int>(dnn::ActKind::kAbs) == TSR_DNN_ACT_ABS);
static_assert(static_cast<int>(dnn::SoftmaxMode::kSoftmax) == TSR_DNN_SOFTMAX &&
              static_cast<int>(dnn::SoftmaxMode::kLogSoftmax) == TSR_DNN_LOG_SOFTMAX);
static_assert(static_cast<int>(dnn::PoolKind::kMax) == TSR_DNN_POOL_MAX &&
              static_cast<int>(dnn::PoolKind::kAvgIncludePad) == TSR_DNN_POOL_AVG_INCLUDE_PAD &&
              static_cast<int>(dnn::PoolKind::kAvgExcludePad) == TSR_DNN_POOL_AVG_EXCLUDE_PAD);
static_assert(static_cast<int>(dnn::BatchNormMode::kSpatial) == TSR_DNN_BATCH_NORM_SPATIAL &&
              static_cast<int>(dnn::BatchNormMode::kPerActivation) ==
                  TSR_DNN_BATCH_NORM_PER_ACTIVATION);
static_assert(static_cast<int>(dnn::LrnMode::kAcrossChannels) == TSR_DNN_LRN_ACROSS_CHANNELS &&
              static_cast<int>(dnn::LrnMode::kWithinChannel) == TSR_DNN_LRN_WITHIN_CHANNEL);
static_assert(static_cast<int>(dnn::ConvAlgo::kAuto) == TSR_DNN_CONV_ALGO_AUTO &&
              static_cast<int>(dnn::ConvAlgo::kDirect) == TSR_DNN_CONV_ALGO_DIRECT &&
              static_cast<int>(dnn::ConvAlgo::kIm2col) == TSR_DNN_CONV_ALGO_IM2COL &&
              static_cast<int>(dnn::ConvAlgo::kGemm1x1) == TSR_DNN_CONV_ALGO_GEMM1X1 &&
              static_cast<int>(dnn::ConvAlgo::kWinogradF2x3) == TSR_DNN_CONV_ALGO_WINOGRAD_F2X3 &&
              static_cast<int>(dnn::ConvAlgo::kWinogradF4x3) == TSR_DNN_CONV_ALGO_WINOGRAD_F4X3 &&
              static_cast<int>(dnn::ConvAlgo::kDepthwise) == TSR_DNN_CONV_ALGO_DEPTHWISE &&
              static_cast<int>(dnn::ConvAlgo::kFft) == TSR_DNN_CONV_ALGO_FFT &&
              static_cast<int>(dnn::ConvAlgo::kReference) == TSR_DNN_CONV_ALGO_REFERENCE);
static_assert(static_cast<int>(dnn::ConvDir::kForward) == TSR_DNN_CONV_FORWARD &&
              static_cast<int>(dnn::ConvDir::kBackwardData) == TSR_DNN_CONV_BACKWARD_DATA &&
              static_cast<int>(dnn::ConvDir::kBackwardWeights) == TSR_DNN_CONV_BACKWARD_WEIGHTS);

constexpr int kDTypeCount = TSR_DTYPE_C128 + 1;
constexpr int kActCount = TSR_DNN_ACT_ABS + 1;

Status check_not_null(const char* name, const void* p) {
  if (p != nullptr) return Status::ok();
  return invalid_argument(std::string(name) + " is null");
}

Status check_rank(std::string_view name, std::string_view field, std::int64_t rank) {
  if (rank >= 0 && rank <= TSR_TENSOR_MAX_RANK) return Status::ok();
  return invalid_argument(std::string(name) + std::string(field) + " = " + std::to_string(rank) +
                          " must be in 0.." + std::to_string(TSR_TENSOR_MAX_RANK));
}

// spatial_rank of a conv or pool descriptor: 1..3, and rank(ref) - 2 when ref has a rank the
// primitives accept (other ranks are reported by the C++ routine, naming the tensor).
Result<int> spatial_rank_of(const char* name, std::int32_t sr, const dnn::TensorDesc& ref,
                            const char* ref_name) {
  if (sr < 1 || sr > 3)
    return invalid_argument(std::string(name) + "->spatial_rank = " + std::to_string(sr) +
                            " must be 1, 2 or 3");
  if (ref.rank() >= 3 && ref.rank() <= 5 && sr != ref.rank() - 2)
    return invalid_argument(std::string(name) + "->spatial_rank = " + std::to_string(sr) + " but " +
                            ref_name + " has rank " + std::to_string(ref.rank()) + " (" +
                            std::to_string(ref.rank() - 2) + " spatial dims)");
  return static_cast<int>(sr);
}

std::vector<std::int64_t> first(const std::int64_t* v, int n) {
  return {v, v + n};
}

}  // namespace

Status check_enum(std::string_view name, std::string_view field, int value, int count,
                  const char* type_name) {
  if (value >= 0 && value < count) return Status::ok();
  return invalid_argument(std::string(name) + std::string(field) + " = " + std::to_string(value) +
                          " is not a " + type_name + " (0 to " + std::to_string(count - 1) + ")");
}

Result<dnn::TensorDesc> to_cpp(const char* name, const tsr_tensor_desc* d) {
  TESSERA_RETURN_IF_ERROR(check_not_null(name, d));
  TESSERA_RETURN_IF_ERROR(check_rank(name, "->rank", d->rank));
  TESSERA_ASSIGN_OR_RETURN(DType dtype,
                           (to_enum<DType>(name, "->dtype", d->dtype, kDTypeCount, "tsr_dtype")));
  dnn::TensorDesc t;
  t.dtype = dtype;
  t.dims = first(d->dims, d->rank);
  t.strides = first(d->strides, d->rank);
  return t;
}

Status from_cpp(const dnn::TensorDesc& d, tsr_tensor_desc* out) {
  if (d.rank() > TSR_TENSOR_MAX_RANK || d.strides.size() != d.dims.size())
    return internal_error("descriptor " + d.to_string() + " does not fit tsr_tensor_desc");
  tsr_tensor_desc c{};
  c.dtype = static_cast<tsr_dtype>(static_cast<int>(d.dtype));
  c.rank = d.rank();
  std::copy(d.dims.begin(), d.dims.end(), c.dims);
  std::copy(d.strides.begin(), d.strides.end(), c.strides);
  *out = c;
  return Status::ok();
}

Result<dnn::Activation> activation_of(std::string_view name, std::string_view field,
                                      const tsr_dnn_activation& a) {
  TESSERA_ASSIGN_OR_RETURN(dnn::ActKind kind, (to_enum<dnn::ActKind>(name, field, a.kind, kActCount,
                                                                     "tsr_dnn_act_kind")));
  return dnn::Activation{kind, a.alpha, a.beta};
}

Result<dnn::Activation> to_cpp(const char* name, const tsr_dnn_activation* a) {
  TESSERA_RETURN_IF_ERROR(check_not_null(name, a));
  return activation_of(name, "->kind", *a);
}

Result<dnn::ConvDesc> to_cpp(const char* name, const tsr_dnn_conv_desc* c,
                             const dnn::TensorDesc& ref, const char* ref_name) {
  TESSERA_RETURN_IF_ERROR(check_not_null(name, c));
  TESSERA_ASSIGN_OR_RETURN(int sr, spatial_rank_of(name, c->spatial_rank, ref, ref_name));
  dnn::ConvDesc d;
  d.stride = first(c->stride, sr);
  d.dilation = first(c->dilation, sr);
  d.pad_begin = first(c->pad_begin, sr);
  d.pad_end = first(c->pad_end, sr);
  d.groups = c->groups;
  return d;
}

Result<dnn::PoolDesc> to_cpp(const char* name, const tsr_dnn_pool_desc* p, const dnn::TensorDesc& x,
                             const char* x_name) {
  TESSERA_RETURN_IF_ERROR(check_not_null(name, p));
  TESSERA_ASSIGN_OR_RETURN(dnn::PoolKind kind, (to_enum<dnn::PoolKind>(name, "->kind", p->kind, 3,
                                                                       "tsr_dnn_pool_kind")));
  TESSERA_ASSIGN_OR_RETURN(int sr, spatial_rank_of(name, p->spatial_rank, x, x_name));
  dnn::PoolDesc d;
  d.kind = kind;
  d.kernel = first(p->kernel, sr);
  d.stride = first(p->stride, sr);
  d.pad_begin = first(p->pad_begin, sr);
  d.pad_end = first(p->pad_end, sr);
  d.dilation = first(p->dilation, sr);
  d.ceil_mode = p->ceil_mode != 0;
  return d;
}

Result<dnn::LrnDesc> to_cpp(const char* name, const tsr_dnn_lrn_desc* d) {
  TESSERA_RETURN_IF_ERROR(check_not_null(name, d));
  TESSERA_ASSIGN_OR_RETURN(dnn::LrnMode mode,
                           (to_enum<dnn::LrnMode>(name, "->mode", d->mode, 2, "tsr_dnn_lrn_mode")));
  return dnn::LrnDesc{mode, d->size, d->alpha, d->beta, d->k};
}

void copy_text(char* dst, std::size_t cap, std::string_view s) {
  if (cap == 0) return;
  const std::size_t n = std::min(cap - 1, s.size());
  std::memcpy(dst, s.data(), n);
  std::memset(dst + n, 0, cap - n);
}

}  // namespace tessera::capi

using tessera::Status;
using tessera::capi::check_enum;
using tessera::capi::check_result;
using tessera::capi::guard;
using Handle = tessera::dnn::Handle;
namespace dnn = tessera::dnn;
namespace capi = tessera::capi;

extern "C" {

// ---- handle ----
TSR_API tsr_status tsr_dnn_create_handle(tsr_dnn_handle* handle) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(handle, "handle"));
    *handle = new tsr_dnn_handle_s();
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_destroy_handle(tsr_dnn_handle handle) {
  delete handle;
  return TSR_STATUS_OK;
}

TSR_API tsr_status tsr_dnn_set_num_threads(tsr_dnn_handle h, int num_threads) {
  return guard(__func__, h, [&](Handle& hh) { return hh.set_num_threads(num_threads); });
}

TSR_API tsr_status tsr_dnn_get_num_threads(tsr_dnn_handle h, int* num_threads) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(num_threads, "num_threads"));
    *num_threads = hh.num_threads();
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_set_tune_db(tsr_dnn_handle h, const char* path) {
  return guard(__func__, h, [&](Handle& hh) {
    hh.set_tune_db(path == nullptr ? std::string() : std::string(path));
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_get_tune_db(tsr_dnn_handle h, const char** path) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(path, "path"));
    *path = hh.tune_db().c_str();
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_set_use_tune_db(tsr_dnn_handle h, int use) {
  return guard(__func__, h, [&](Handle& hh) {
    hh.set_use_tune_db(use != 0);
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_get_use_tune_db(tsr_dnn_handle h, int* use) {
  return guard(__func__, h, [&](Handle& hh) -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(use, "use"));
    *use = hh.use_tune_db() ? 1 : 0;
    return Status::ok();
  });
}

// ---- tensor descriptors ----
TSR_API tsr_status tsr_dnn_tensor_desc_packed(tsr_dtype dtype, int32_t rank, const int64_t* dims,
                                              tsr_dnn_layout layout, tsr_tensor_desc* desc) {
  return guard(__func__, [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(
        tessera::DType t,
        (capi::to_enum<tessera::DType>("dtype", "", dtype, TSR_DTYPE_C128 + 1, "tsr_dtype")));
    TESSERA_ASSIGN_OR_RETURN(
        dnn::Layout l, (capi::to_enum<dnn::Layout>("layout", "", layout, 2, "tsr_dnn_layout")));
    if (rank < 0 || rank > TSR_TENSOR_MAX_RANK)
      return tessera::invalid_argument("rank = " + std::to_string(rank) + " must be in 0.." +
                                       std::to_string(TSR_TENSOR_MAX_RANK));
    if (rank > 0) TESSERA_RETURN_IF_ERROR(check_result(dims, "dims"));
    TESSERA_RETURN_IF_ERROR(check_result(desc, "desc"));
    std::int64_t elements = 1;
    for (int32_t i = 0; i < rank; ++i) {
      if (dims[i] < 0)
        return tessera::invalid_argument("dims[" + std::to_string(i) +
                                         "] = " + std::to_string(dims[i]) + " must be >= 0");
      if (__builtin_mul_overflow(elements, std::max<int64_t>(dims[i], 1), &elements))
        return tessera::invalid_argument("the element count of dims overflows int64 at dims[" +
                                         std::to_string(i) + "]");
    }
    return capi::from_cpp(dnn::TensorDesc::make(t, {dims, dims + rank}, l), desc);
  });
}

// ---- names ----
TSR_API const char* tsr_dnn_act_name(tsr_dnn_act_kind kind) {
  const int v = static_cast<int>(kind);
  if (v < 0 || v > TSR_DNN_ACT_ABS) return "unknown activation";
  // act_name returns views of string literals, so data() is NUL-terminated.
  return dnn::act_name(static_cast<dnn::ActKind>(v)).data();
}

TSR_API const char* tsr_dnn_conv_algo_name(tsr_dnn_conv_algo algo) {
  const int v = static_cast<int>(algo);
  if (v < 0 || v > TSR_DNN_CONV_ALGO_REFERENCE) return "unknown algorithm";
  return dnn::algo_name(static_cast<dnn::ConvAlgo>(v)).data();
}

// ---- descriptor initialisers ----
TSR_API tsr_status tsr_dnn_activation_init(tsr_dnn_act_kind kind, tsr_dnn_activation* act) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(check_enum("kind", "", kind, TSR_DNN_ACT_ABS + 1, "tsr_dnn_act_kind"));
    TESSERA_RETURN_IF_ERROR(check_result(act, "act"));
    const dnn::Activation a = dnn::Activation::make(static_cast<dnn::ActKind>(kind));
    *act = tsr_dnn_activation{kind, a.alpha, a.beta};
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_conv_desc_init(int32_t spatial_rank, tsr_dnn_conv_desc* conv) {
  return guard(__func__, [&]() -> Status {
    if (spatial_rank < 1 || spatial_rank > 3)
      return tessera::invalid_argument("spatial_rank = " + std::to_string(spatial_rank) +
                                       " must be 1, 2 or 3");
    TESSERA_RETURN_IF_ERROR(check_result(conv, "conv"));
    tsr_dnn_conv_desc c{};
    c.spatial_rank = spatial_rank;
    for (int i = 0; i < 3; ++i) c.stride[i] = c.dilation[i] = 1;
    c.groups = 1;
    *conv = c;
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_pool_desc_init(tsr_dnn_pool_kind kind, int32_t spatial_rank,
                                          const int64_t* kernel, tsr_dnn_pool_desc* pool) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(check_enum("kind", "", kind, 3, "tsr_dnn_pool_kind"));
    if (spatial_rank < 1 || spatial_rank > 3)
      return tessera::invalid_argument("spatial_rank = " + std::to_string(spatial_rank) +
                                       " must be 1, 2 or 3");
    TESSERA_RETURN_IF_ERROR(check_result(kernel, "kernel"));
    TESSERA_RETURN_IF_ERROR(check_result(pool, "pool"));
    tsr_dnn_pool_desc p{};
    p.kind = kind;
    p.spatial_rank = spatial_rank;
    for (int i = 0; i < 3; ++i) {
      p.kernel[i] = i < spatial_rank ? kernel[i] : 0;
      p.stride[i] = p.dilation[i] = 1;
    }
    *pool = p;
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_pool_desc_global(tsr_dnn_pool_kind kind, const tsr_tensor_desc* x_desc,
                                            tsr_dnn_pool_desc* pool) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(check_enum("kind", "", kind, 3, "tsr_dnn_pool_kind"));
    TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc x, capi::to_cpp("x_desc", x_desc));
    TESSERA_RETURN_IF_ERROR(check_result(pool, "pool"));
    if (x.rank() < 3 || x.rank() > 5)
      return tessera::invalid_argument("x_desc has rank " + std::to_string(x.rank()) +
                                       "; global pooling needs 3 to 5 (N, C, 1 to 3 spatial)");
    const dnn::PoolDesc g = dnn::PoolDesc::global(static_cast<dnn::PoolKind>(kind), x);
    tsr_dnn_pool_desc p{};
    p.kind = kind;
    p.spatial_rank = x.rank() - 2;
    for (int i = 0; i < 3; ++i) {
      const auto si = static_cast<std::size_t>(i);
      p.kernel[i] = si < g.kernel.size() ? g.kernel[si] : 0;
      p.stride[i] = si < g.stride.size() ? g.stride[si] : 1;
      p.pad_begin[i] = si < g.pad_begin.size() ? g.pad_begin[si] : 0;
      p.pad_end[i] = si < g.pad_end.size() ? g.pad_end[si] : 0;
      p.dilation[i] = si < g.dilation.size() ? g.dilation[si] : 1;
    }
    p.ceil_mode = g.ceil_mode ? 1 : 0;
    *pool = p;
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_lrn_desc_init(tsr_dnn_lrn_mode mode, tsr_dnn_lrn_desc* lrn) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(check_enum("mode", "", mode, 2, "tsr_dnn_lrn_mode"));
    TESSERA_RETURN_IF_ERROR(check_result(lrn, "lrn"));
    const dnn::LrnDesc d;
    *lrn = tsr_dnn_lrn_desc{mode, d.size, d.alpha, d.beta, d.k};
    return Status::ok();
  });
}

TSR_API tsr_status tsr_dnn_find_options_init(tsr_dnn_find_options* options) {
  return guard(__func__, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(check_result(options, "options"));
    const dnn::FindOptions o;
    *options = tsr_dnn_find_options{o.min_seconds_per_algo, o.min_samples, o.record ? 1 : 0,
                                    o.include_reference ? 1 : 0};
    return Status::ok();
  });
}

}  // extern "C"
