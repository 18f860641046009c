// The executor's kernels (kernels.hpp): the elementwise ops and the kernel table here, the
// shape and reduction ops in kernels_shape.cpp, the
// network ops (convolution, pooling, normalisation, softmax, Gemm, MatMul) in kernels_nn.cpp,
// the data-movement and generator ops (Slice, Split, Expand, Pad, Tile, ConstantOfShape,
// Range) and LayerNormalization in kernels_data.cpp.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>

#include "kernels.hpp"
#include "tessera/core/float8.hpp"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/dnn/tensor_ops.hpp"
#include "tessera/dnn/training.hpp"

namespace tessera::exec::detail {

namespace {

using Dims = std::vector<std::int64_t>;


std::string lower(std::string_view s) {
  std::string r(s);
  for (char& ch : r) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}


// ---- elementwise -------------------------------------------------------------------------
Status binary_op(KernelCall& c, dnn::BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  TESSERA_ASSIGN_OR_RETURN(Dims dims, dnn::broadcast_dims(a.shape().dims(), b.shape().dims()));
  const bool cmp = op >= dnn::BinaryOp::kEqual && op <= dnn::BinaryOp::kGreaterEqual;
  if (widened(a.dtype()) != a.dtype() || widened(b.dtype()) != b.dtype()) {
    // Wrapping ops keep u64's bits through i64; the others need values below 2^63.
    const bool ordered = op != dnn::BinaryOp::kAdd && op != dnn::BinaryOp::kSub && op != dnn::BinaryOp::kMul &&
                         op != dnn::BinaryOp::kEqual;
    TESSERA_ASSIGN_OR_RETURN(Tensor aw, widen(c.h, a, ordered, "A"));
    TESSERA_ASSIGN_OR_RETURN(Tensor bw, widen(c.h, b, ordered, "B"));
    Tensor yw;
    TESSERA_RETURN_IF_ERROR(binary_op(c, op, aw, bw, yw));
    if (cmp) {
      y = std::move(yw);
      return Status::ok();
    }
    TESSERA_ASSIGN_OR_RETURN(y, c.output_for(y, dims, a.dtype()));
    return dnn::cast(c.h, desc(yw), yw.data(), desc(y), y.data());
  }
  TESSERA_ASSIGN_OR_RETURN(y, c.output_for(y, dims, cmp ? DType::kBool : a.dtype()));
  return dnn::binary(c.h, op, desc(a), a.data(), desc(b), b.data(), desc(y), y.data());
}

Status binary_kernel(KernelCall& c) {
  static const std::map<std::string, dnn::BinaryOp, std::less<>> kOps = {
      {"Add", dnn::BinaryOp::kAdd},         {"Sub", dnn::BinaryOp::kSub},
      {"Mul", dnn::BinaryOp::kMul},         {"Div", dnn::BinaryOp::kDiv},
      {"Pow", dnn::BinaryOp::kPow},         {"Equal", dnn::BinaryOp::kEqual},
      {"Less", dnn::BinaryOp::kLess},       {"LessOrEqual", dnn::BinaryOp::kLessEqual},
      {"Greater", dnn::BinaryOp::kGreater}, {"GreaterOrEqual", dnn::BinaryOp::kGreaterEqual},
      {"And", dnn::BinaryOp::kAnd},         {"Or", dnn::BinaryOp::kOr},
      {"Xor", dnn::BinaryOp::kXor}};
  dnn::BinaryOp op = dnn::BinaryOp::kAdd;
  if (c.node.op_type == "Mod") op = c.attr_int("fmod", 0) ? dnn::BinaryOp::kFmod : dnn::BinaryOp::kMod;
  else op = kOps.find(c.node.op_type)->second;
  const Tensor &a = *c.input(0), &b = *c.input(1);
  if (op == dnn::BinaryOp::kPow && a.dtype() != b.dtype()) {  // mixed types: in f64, y of a's dtype
    Tensor a64, b64, y64;
    TESSERA_ASSIGN_OR_RETURN(a64, like(a, DType::kF64));
    TESSERA_ASSIGN_OR_RETURN(b64, like(b, DType::kF64));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(a), a.data(), desc(a64), a64.data()));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(b), b.data(), desc(b64), b64.data()));
    TESSERA_RETURN_IF_ERROR(binary_op(c, op, a64, b64, y64));
    TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, y64.shape().dims(), a.dtype()));
    return dnn::cast(c.h, desc(y64), y64.data(), desc(c.out[0]), c.out[0].data());
  }
  return binary_op(c, op, a, b, c.out[0]);
}

// Max, Min, Sum, Mean over any number of inputs, folded left to right.
Status variadic_kernel(KernelCall& c) {
  const std::string& op = c.node.op_type;
  const dnn::BinaryOp b = op == "Max" ? dnn::BinaryOp::kMax : op == "Min" ? dnn::BinaryOp::kMin : dnn::BinaryOp::kAdd;
  Tensor acc = *c.input(0);
  for (std::size_t k = 1; k < c.in.size(); ++k) {
    Tensor next;
    TESSERA_RETURN_IF_ERROR(binary_op(c, b, acc, *c.input(k), next));
    acc = std::move(next);
  }
  if (op == "Mean" && c.in.size() > 1) {
    TESSERA_ASSIGN_OR_RETURN(Tensor n, new_tensor({}, DType::kF64));
    *n.data<double>() = static_cast<double>(c.in.size());
    TESSERA_ASSIGN_OR_RETURN(Tensor count, new_tensor({}, acc.dtype()));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(n), n.data(), desc(count), count.data()));
    return binary_op(c, dnn::BinaryOp::kDiv, acc, count, c.out[0]);
  }
  c.out[0] = std::move(acc);
  return Status::ok();
}

Status where_kernel(KernelCall& c) {
  const Tensor &cond = *c.input(0), &a = *c.input(1), &b = *c.input(2);
  TESSERA_ASSIGN_OR_RETURN(Dims ab, dnn::broadcast_dims(a.shape().dims(), b.shape().dims()));
  TESSERA_ASSIGN_OR_RETURN(Dims dims, dnn::broadcast_dims(cond.shape().dims(), ab));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, a.dtype()));
  return dnn::where(c.h, desc(cond), cond.data(), desc(a), a.data(), desc(b), b.data(), desc(c.out[0]), c.out[0].data());
}

Status unary_kernel(KernelCall& c) {
  const std::optional<dnn::UnaryOp> op = dnn::parse_unary(lower(c.node.op_type));
  const Tensor& x = *c.input(0);
  const bool to_bool = *op == dnn::UnaryOp::kIsNan || *op == dnn::UnaryOp::kIsInf;
  if (widened(x.dtype()) != x.dtype()) {
    TESSERA_ASSIGN_OR_RETURN(Tensor xw, widen(c.h, x, false, "X"));
    TESSERA_ASSIGN_OR_RETURN(Tensor yw, like(xw, to_bool ? DType::kBool : xw.dtype()));
    TESSERA_RETURN_IF_ERROR(dnn::unary(c.h, *op, desc(xw), xw.data(), desc(yw), yw.data()));
    TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), to_bool ? DType::kBool : x.dtype()));
    return dnn::cast(c.h, desc(yw), yw.data(), desc(c.out[0]), c.out[0].data());
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), to_bool ? DType::kBool : x.dtype()));
  return dnn::unary(c.h, *op, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

}  // namespace

// The activation of an ONNX op with its parameters (alpha, beta: LeakyRelu's, Elu's and Celu's
// alpha, Selu's alpha and gamma, HardSigmoid's alpha and beta, Clip's bounds; for Gelu a
// nonzero alpha means approximate=tanh), or nullopt for an op that is not one.
std::optional<dnn::Activation> onnx_activation(std::string_view op, float alpha, float beta) {
  static const std::map<std::string, dnn::ActKind, std::less<>> kKinds = {
      {"Relu", dnn::ActKind::kRelu},         {"Sigmoid", dnn::ActKind::kSigmoid},       {"Tanh", dnn::ActKind::kTanh},
      {"Softplus", dnn::ActKind::kSoftplus}, {"Softsign", dnn::ActKind::kSoftsign},     {"HardSwish", dnn::ActKind::kHardSwish},
      {"Mish", dnn::ActKind::kMish},         {"LeakyRelu", dnn::ActKind::kLeakyRelu},   {"Elu", dnn::ActKind::kElu},
      {"Celu", dnn::ActKind::kCelu},         {"Selu", dnn::ActKind::kSelu},             {"HardSigmoid", dnn::ActKind::kHardSigmoid},
      {"Clip", dnn::ActKind::kClip},         {"Gelu", dnn::ActKind::kGeluErf}};
  const auto it = kKinds.find(op);
  if (it == kKinds.end()) return std::nullopt;
  if (it->second == dnn::ActKind::kGeluErf) return dnn::Activation::make(alpha != 0 ? dnn::ActKind::kGeluTanh : dnn::ActKind::kGeluErf);
  dnn::Activation a = dnn::Activation::make(it->second);
  switch (it->second) {
    case dnn::ActKind::kLeakyRelu:
    case dnn::ActKind::kElu:
    case dnn::ActKind::kCelu: a.alpha = alpha; break;
    case dnn::ActKind::kSelu:
    case dnn::ActKind::kHardSigmoid:
    case dnn::ActKind::kClip: a.alpha = alpha, a.beta = beta; break;
    default: break;
  }
  return a;
}

namespace {

Status activation_kernel(KernelCall& c) {
  const std::string& op = c.node.op_type;
  float alpha = 0, beta = 0;
  if (op == "LeakyRelu") alpha = c.attr_float("alpha", 0.01f);
  else if (op == "Elu" || op == "Celu") alpha = c.attr_float("alpha", 1.0f);
  else if (op == "Selu") alpha = c.attr_float("alpha", 1.67326319217681884765625f), beta = c.attr_float("gamma", 1.05070102214813232421875f);
  else if (op == "HardSigmoid") alpha = c.attr_float("alpha", 0.2f), beta = c.attr_float("beta", 0.5f);
  else if (op == "Gelu") alpha = c.attr_string("approximate", "none") == "tanh" ? 1.0f : 0.0f;
  else if (op == "Clip") {
    alpha = -std::numeric_limits<float>::infinity(), beta = std::numeric_limits<float>::infinity();
    if (c.opset < 11) {
      alpha = c.attr_float("min", alpha);
      beta = c.attr_float("max", beta);
    } else {
      for (std::size_t k : {std::size_t{1}, std::size_t{2}}) {
        const Tensor* b = c.input(k);
        if (!b) continue;
        if (b->numel() != 1) return invalid_argument("Clip's bound must be a scalar");
        TESSERA_ASSIGN_OR_RETURN(Tensor f, new_tensor({}, DType::kF32));
        TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(*b), b->data(), desc(f), f.data()));
        (k == 1 ? alpha : beta) = *f.data<float>();
      }
    }
  }
  const dnn::Activation a = *onnx_activation(op, alpha, beta);
  const Tensor& x = *c.input(0);
  if (op == "Clip" && !is_floating(x.dtype())) {  // integers: max with the low bound, min with the high one
    Tensor y = x;
    for (std::size_t k : {std::size_t{1}, std::size_t{2}}) {
      if (!c.input(k)) continue;
      Tensor next;
      TESSERA_RETURN_IF_ERROR(binary_op(c, k == 1 ? dnn::BinaryOp::kMax : dnn::BinaryOp::kMin, y, *c.input(k), next));
      y = std::move(next);
    }
    c.out[0] = std::move(y);
    return Status::ok();
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  if (x.rank() == 0) {  // the primitive takes rank 1 and up: a scalar as one element
    dnn::TensorDesc one{x.dtype(), {1}, {1}};
    return dnn::activation_forward(c.h, a, one, x.data(), one, c.out[0].data());
  }
  return dnn::activation_forward(c.h, a, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

// tessera.FusedElementwise (graph/passes.hpp): its steps for dnn::elementwise_chain, built on
// the first run of the node.
struct ChainCache final : NodeCache {
  std::vector<dnn::ChainStep> steps;
};

Result<std::vector<dnn::ChainStep>> chain_steps(const KernelCall& c) {
  static const std::map<std::string, dnn::BinaryOp, std::less<>> kBinary = {
      {"Add", dnn::BinaryOp::kAdd}, {"Sub", dnn::BinaryOp::kSub}, {"Mul", dnn::BinaryOp::kMul}, {"Div", dnn::BinaryOp::kDiv},
      {"Pow", dnn::BinaryOp::kPow}, {"Max", dnn::BinaryOp::kMax}, {"Min", dnn::BinaryOp::kMin}};
  const graph::Attribute *ops = c.attr("ops"), *operands = c.attr("operands"), *alphas = c.attr("alphas"), *betas = c.attr("betas");
  if (!ops || !operands || !alphas || !betas) return invalid_argument("the attributes ops, operands, alphas and betas are needed");
  const std::size_t n = ops->strings.size();
  if (operands->ints.size() != n || alphas->floats.size() != n || betas->floats.size() != n)
    return invalid_argument("ops, operands, alphas and betas differ in length");
  std::vector<dnn::ChainStep> steps(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& op = ops->strings[i];
    dnn::ChainStep& s = steps[i];
    const std::int64_t k = operands->ints[i];
    if (const auto b = kBinary.find(op); b != kBinary.end()) {
      const auto index = static_cast<std::size_t>(k < 0 ? -k : k);
      if (index == 0 || index >= c.in.size()) return invalid_argument("step " + std::to_string(i) + " (" + op + "): operand " + std::to_string(k) + " of " + std::to_string(c.in.size()) + " inputs");
      s.kind = dnn::ChainStep::Kind::kBinary;
      s.binary = b->second;
      s.operand = static_cast<int>(index) - 1;
      s.operand_first = k < 0;
    } else if (const auto a = onnx_activation(op, alphas->floats[i], betas->floats[i])) {
      s.kind = dnn::ChainStep::Kind::kActivation;
      s.activation = *a;
    } else if (const auto u = dnn::parse_unary(lower(op))) {
      s.kind = dnn::ChainStep::Kind::kUnary;
      s.unary = *u;
    } else {
      return invalid_argument("step " + std::to_string(i) + ": " + op + " is not an elementwise op");
    }
    if (s.kind != dnn::ChainStep::Kind::kBinary && k != 0) return invalid_argument("step " + std::to_string(i) + " (" + op + ") takes no operand");
  }
  return steps;
}

Status fused_elementwise_kernel(KernelCall& c) {
  if (!c.cache) {
    auto cache = std::make_unique<ChainCache>();
    TESSERA_ASSIGN_OR_RETURN(cache->steps, chain_steps(c));
    c.cache = std::move(cache);
  }
  const auto* cache = dynamic_cast<const ChainCache*>(c.cache.get());
  if (!cache) return internal_error("the node's cache is not a chain");
  const Tensor* x = c.input(0);
  if (!x) return invalid_argument("X is missing");
  std::vector<dnn::TensorDesc> descs;
  std::vector<const void*> ptrs;
  for (std::size_t k = 1; k < c.in.size(); ++k) {
    if (!c.input(k)) return invalid_argument("operand " + std::to_string(k) + " is missing");
    descs.push_back(desc(*c.input(k)));
    ptrs.push_back(c.input(k)->data());
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x->shape().dims(), x->dtype()));
  return dnn::elementwise_chain(c.h, cache->steps, desc(*x), x->data(), descs, ptrs, desc(c.out[0]), c.out[0].data());
}

// Cast, and CastLike (to the dtype of its second input).
Status cast_kernel(KernelCall& c) {
  const auto to = c.node.op_type == "CastLike" ? std::optional<DType>(c.input(1)->dtype())
                                                : graph::to_dtype(static_cast<graph::ElemType>(c.attr_int("to", 0)));
  if (!to) return unsupported("Cast to element type " + std::to_string(c.attr_int("to", 0)));
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), *to));
  const std::optional<Float8> f8 = float8_of(*to);
  const bool saturate = c.attr_int("saturate", 1) != 0;
  if (x.dtype() != *to && ((f8 && !saturate) || *to == DType::kF8E8M0)) {
    // f8 without saturation (out-of-range values to inf or NaN instead of the largest value)
    // and e8m0 with its rounding mode: from f32 (an f64 source is rounded to f32 first, which
    // may round twice).
    const std::string mode = c.attr_string("round_mode", "up");
    if (mode != "up" && mode != "down" && mode != "nearest") return invalid_argument("round_mode '" + mode + "' (up, down or nearest)");
    const E8M0Round round = mode == "up" ? E8M0Round::kUp : mode == "down" ? E8M0Round::kDown : E8M0Round::kNearest;
    TESSERA_ASSIGN_OR_RETURN(Tensor f, as_f32(c.h, x));
    const float* p = f.data<float>();
    auto* y = static_cast<std::uint8_t*>(c.out[0].data());
    for (std::int64_t i = 0; i < f.numel(); ++i) y[i] = f8 ? f32_to_f8_bits(p[i], *f8, false) : f32_to_e8m0_bits(p[i], saturate, round);
    return Status::ok();
  }
  return dnn::cast(c.h, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

}  // namespace

// The shape, data-layout and reduction kernels (kernels_shape.cpp).
Status identity_kernel(KernelCall& c);
Status dropout_kernel(KernelCall& c);
Status step_dropout_kernel(KernelCall& c);
Status flatten_kernel(KernelCall& c);
Status reshape_kernel(KernelCall& c);
Status squeeze_kernel(KernelCall& c);
Status transpose_kernel(KernelCall& c);
Status concat_kernel(KernelCall& c);
Status constant_kernel(KernelCall& c);
Status size_kernel(KernelCall& c);
Status shape_kernel(KernelCall& c);
Status gather_kernel(KernelCall& c);
Status reduce_kernel(KernelCall& c);

// The gradient ops autodiff writes (kernels_grad.cpp).
Status conv_grad_data_kernel(KernelCall& c);
Status conv_grad_weight_kernel(KernelCall& c);
Status pool_grad_kernel(KernelCall& c);
Status activation_grad_kernel(KernelCall& c);
Status softmax_cross_entropy_grad_kernel(KernelCall& c);

// The network ops (kernels_nn.cpp).
Status conv_kernel(KernelCall& c);
Status conv_transpose_kernel(KernelCall& c);
Status pool_kernel(KernelCall& c);
Status batch_norm_grad_kernel(KernelCall& c);
Status layer_norm_grad_kernel(KernelCall& c);
Status rnn_grad_kernel(KernelCall& c);
Status gather_grad_kernel(KernelCall& c);
Status nll_loss_grad_kernel(KernelCall& c);
Status instance_norm_grad_kernel(KernelCall& c);
Status global_pool_kernel(KernelCall& c);
Status batch_norm_kernel(KernelCall& c);
Status softmax_kernel(KernelCall& c);
Status gemm_kernel(KernelCall& c);
Status matmul_kernel(KernelCall& c);
// The data-movement and generator ops (kernels_data.cpp).
Status slice_kernel(KernelCall& c);
Status split_kernel(KernelCall& c);
Status expand_kernel(KernelCall& c);
Status pad_kernel(KernelCall& c);
Status tile_kernel(KernelCall& c);
Status constant_of_shape_kernel(KernelCall& c);
Status range_kernel(KernelCall& c);
Status layer_norm_kernel(KernelCall& c);
// Indexing, rearranging and the rare elementwise ops (kernels_index.cpp).
Status rare_unary_kernel(KernelCall& c);
Status is_inf_kernel(KernelCall& c);
Status arg_kernel(KernelCall& c);
Status hardmax_kernel(KernelCall& c);
Status gather_elements_kernel(KernelCall& c);
Status gather_nd_kernel(KernelCall& c);
Status scatter_kernel(KernelCall& c);
Status one_hot_kernel(KernelCall& c);
Status cumsum_kernel(KernelCall& c);
Status top_k_kernel(KernelCall& c);
Status depth_space_kernel(KernelCall& c);
Status resize_kernel(KernelCall& c);
Status trilu_kernel(KernelCall& c);
Status eye_like_kernel(KernelCall& c);
Status non_zero_kernel(KernelCall& c);
Status compress_kernel(KernelCall& c);
Status attention_kernel(KernelCall& c);  // kernels_attention.cpp
Status nll_loss_kernel(KernelCall& c);   // kernels_loss.cpp
Status softmax_cross_entropy_kernel(KernelCall& c);
Status instance_group_norm_kernel(KernelCall& c);  // kernels_norm.cpp
Status lrn_kernel(KernelCall& c);
Status prelu_kernel(KernelCall& c);
Status rms_norm_kernel(KernelCall& c);
Status lp_norm_kernel(KernelCall& c);
Status mvn_kernel(KernelCall& c);
Status rnn_kernel(KernelCall& c);  // kernels_rnn.cpp
Status quantize_kernel(KernelCall& c);  // kernels_quant.cpp
Status dequantize_kernel(KernelCall& c);
Status dynamic_quantize_kernel(KernelCall& c);
Status bitwise_kernel(KernelCall& c);  // kernels_misc.cpp
Status cumprod_kernel(KernelCall& c);
Status einsum_kernel(KernelCall& c);
Status reverse_sequence_kernel(KernelCall& c);
Status bitcast_kernel(KernelCall& c);
Status unique_kernel(KernelCall& c);  // kernels_index.cpp
Status dft_kernel(KernelCall& c);
Status window_kernel(KernelCall& c);
Status center_crop_pad_kernel(KernelCall& c);
Status lp_pool_kernel(KernelCall& c);  // kernels_nn.cpp
Status control_flow_kernel(KernelCall& c);  // kernels_control.cpp
Status grid_sample_kernel(KernelCall& c);  // kernels_spatial.cpp
Status affine_grid_kernel(KernelCall& c);
Status col2im_kernel(KernelCall& c);
Status max_unpool_kernel(KernelCall& c);
Status non_max_suppression_kernel(KernelCall& c);  // kernels_detect.cpp
Status rotary_embedding_kernel(KernelCall& c);
Status matmul_integer_kernel(KernelCall& c);
Status qlinear_matmul_kernel(KernelCall& c);
Status linear_attention_kernel(KernelCall& c);  // kernels_recurrent.cpp
Status causal_conv_with_state_kernel(KernelCall& c);
Status det_kernel(KernelCall& c);  // kernels_extra.cpp
Status swiglu_kernel(KernelCall& c);
Status tensor_scatter_kernel(KernelCall& c);
Status stft_kernel(KernelCall& c);
Status mel_weight_matrix_kernel(KernelCall& c);
Status roi_align_kernel(KernelCall& c);  // kernels_conv_extra.cpp
Status deform_conv_kernel(KernelCall& c);
Status conv_integer_kernel(KernelCall& c);
Status qlinear_conv_kernel(KernelCall& c);

namespace {
const std::map<std::string, Kernel, std::less<>>& table() {
  static const std::map<std::string, Kernel, std::less<>> t = [] {
    std::map<std::string, Kernel, std::less<>> m;
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Equal", "Less", "LessOrEqual", "Greater",
                           "GreaterOrEqual", "And", "Or", "Xor"})
      m[op] = &binary_kernel;
    for (const char* op : {"Max", "Min", "Sum", "Mean"}) m[op] = &variadic_kernel;
    for (const char* op : {"Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin",
                           "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Erf", "Not", "IsNaN"})
      m[op] = &unary_kernel;
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Softplus", "Softsign", "HardSwish", "Mish", "LeakyRelu",
                           "Elu", "Celu", "Selu", "HardSigmoid", "Gelu", "Clip"})
      m[op] = &activation_kernel;
    m["Where"] = &where_kernel;
    m["Cast"] = &cast_kernel;
    m["Identity"] = &identity_kernel;
    m["Dropout"] = &dropout_kernel;
    m["Flatten"] = &flatten_kernel;
    m["Reshape"] = &reshape_kernel;
    m["Squeeze"] = &squeeze_kernel;
    m["Unsqueeze"] = &squeeze_kernel;
    m["Transpose"] = &transpose_kernel;
    m["Concat"] = &concat_kernel;
    m["Constant"] = &constant_kernel;
    m["Shape"] = &shape_kernel;
    m["Gather"] = &gather_kernel;
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
      m[op] = &reduce_kernel;
    m["Conv"] = &conv_kernel;
    m["ConvTranspose"] = &conv_transpose_kernel;
    m["tessera:FusedConv"] = &conv_kernel;
    m["tessera:FusedElementwise"] = &fused_elementwise_kernel;
    m["MaxPool"] = &pool_kernel;
    m["LpPool"] = &lp_pool_kernel;
    m["BitCast"] = &bitcast_kernel;
    m["Unique"] = &unique_kernel;
    m["DFT"] = &dft_kernel;
    for (const char* op : {"If", "Loop", "Scan"}) m[op] = &control_flow_kernel;
    for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) m[op] = &window_kernel;
    m["CenterCropPad"] = &center_crop_pad_kernel;
    m["AveragePool"] = &pool_kernel;
    m["GlobalAveragePool"] = &global_pool_kernel;
    m["GlobalMaxPool"] = &global_pool_kernel;
    // The layout pass's channels-last pools (channels_last = 1): [N, spatial..., C] in and out.
    m["tessera:MaxPool"] = &pool_kernel;
    m["tessera:AveragePool"] = &pool_kernel;
    m["tessera:GlobalAveragePool"] = &global_pool_kernel;
    m["tessera:GlobalMaxPool"] = &global_pool_kernel;
    m["tessera:ConvGradData"] = &conv_grad_data_kernel;
    m["tessera:ConvGradWeight"] = &conv_grad_weight_kernel;
    m["tessera:PoolGrad"] = &pool_grad_kernel;
    m["tessera:ActivationGrad"] = &activation_grad_kernel;
    m["tessera:SoftmaxCrossEntropyLossGrad"] = &softmax_cross_entropy_grad_kernel;
    m["tessera:BatchNormGrad"] = &batch_norm_grad_kernel;
    m["tessera:LayerNormGrad"] = &layer_norm_grad_kernel;
    m["tessera:RNNGrad"] = &rnn_grad_kernel;
    m["tessera:GatherGrad"] = &gather_grad_kernel;
    m["tessera:NLLLossGrad"] = &nll_loss_grad_kernel;
    m["tessera:InstanceNormGrad"] = &instance_norm_grad_kernel;
    m["tessera:Dropout"] = &step_dropout_kernel;
    m["BatchNormalization"] = &batch_norm_kernel;
    m["tessera:BatchNormalization"] = &batch_norm_kernel;  // the layout pass's channels-last one
    m["Softmax"] = &softmax_kernel;
    m["LogSoftmax"] = &softmax_kernel;
    m["Gemm"] = &gemm_kernel;
    m["MatMul"] = &matmul_kernel;
    m["Slice"] = &slice_kernel;
    m["Split"] = &split_kernel;
    m["Expand"] = &expand_kernel;
    m["Pad"] = &pad_kernel;
    m["Tile"] = &tile_kernel;
    m["ConstantOfShape"] = &constant_of_shape_kernel;
    m["Range"] = &range_kernel;
    m["LayerNormalization"] = &layer_norm_kernel;
    m["tessera:LayerNormalization"] = &layer_norm_kernel;  // the layernorm-fusion pass's, below opset 17
    for (const char* op : {"Acosh", "Asinh", "Atanh", "ThresholdedRelu", "Shrink", "Swish"}) m[op] = &rare_unary_kernel;
    m["IsInf"] = &is_inf_kernel;
    m["ArgMax"] = &arg_kernel;
    m["ArgMin"] = &arg_kernel;
    m["Hardmax"] = &hardmax_kernel;
    m["GatherElements"] = &gather_elements_kernel;
    m["GatherND"] = &gather_nd_kernel;
    for (const char* op : {"Scatter", "ScatterElements", "ScatterND"}) m[op] = &scatter_kernel;
    m["OneHot"] = &one_hot_kernel;
    m["CumSum"] = &cumsum_kernel;
    m["TopK"] = &top_k_kernel;
    m["DepthToSpace"] = &depth_space_kernel;
    m["SpaceToDepth"] = &depth_space_kernel;
    m["Resize"] = &resize_kernel;
    m["Upsample"] = &resize_kernel;
    m["Trilu"] = &trilu_kernel;
    m["EyeLike"] = &eye_like_kernel;
    m["NonZero"] = &non_zero_kernel;
    m["Compress"] = &compress_kernel;
    m["CastLike"] = &cast_kernel;
    m["Size"] = &size_kernel;
    m["Attention"] = &attention_kernel;
    m["NegativeLogLikelihoodLoss"] = &nll_loss_kernel;
    m["SoftmaxCrossEntropyLoss"] = &softmax_cross_entropy_kernel;
    m["InstanceNormalization"] = &instance_group_norm_kernel;
    m["GroupNormalization"] = &instance_group_norm_kernel;
    m["LRN"] = &lrn_kernel;
    m["PRelu"] = &prelu_kernel;
    m["RMSNormalization"] = &rms_norm_kernel;
    m["LpNormalization"] = &lp_norm_kernel;
    m["MeanVarianceNormalization"] = &mvn_kernel;
    for (const char* op : {"RNN", "LSTM", "GRU"}) m[op] = &rnn_kernel;
    m["QuantizeLinear"] = &quantize_kernel;
    m["DequantizeLinear"] = &dequantize_kernel;
    m["DynamicQuantizeLinear"] = &dynamic_quantize_kernel;
    for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "BitShift"}) m[op] = &bitwise_kernel;
    m["CumProd"] = &cumprod_kernel;
    m["Einsum"] = &einsum_kernel;
    m["ReverseSequence"] = &reverse_sequence_kernel;
    m["GridSample"] = &grid_sample_kernel;
    m["AffineGrid"] = &affine_grid_kernel;
    m["Col2Im"] = &col2im_kernel;
    m["MaxUnpool"] = &max_unpool_kernel;
    m["NonMaxSuppression"] = &non_max_suppression_kernel;
    m["RotaryEmbedding"] = &rotary_embedding_kernel;
    m["MatMulInteger"] = &matmul_integer_kernel;
    m["QLinearMatMul"] = &qlinear_matmul_kernel;
    m["LinearAttention"] = &linear_attention_kernel;
    m["CausalConvWithState"] = &causal_conv_with_state_kernel;
    m["Det"] = &det_kernel;
    m["SwiGLU"] = &swiglu_kernel;
    m["TensorScatter"] = &tensor_scatter_kernel;
    m["STFT"] = &stft_kernel;
    m["MelWeightMatrix"] = &mel_weight_matrix_kernel;
    m["RoiAlign"] = &roi_align_kernel;
    m["DeformConv"] = &deform_conv_kernel;
    m["ConvInteger"] = &conv_integer_kernel;
    m["QLinearConv"] = &qlinear_conv_kernel;
    return m;
  }();
  return t;
}
}  // namespace

Kernel find_kernel(std::string_view op) {
  const auto it = table().find(op);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& [name, k] : table()) names.push_back(name);
  return names;
}

}  // namespace tessera::exec::detail
