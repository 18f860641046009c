// Names of the DNN enums (CLI flags, logs, tuning-database signatures) and their parsers.
#include <array>
#include <utility>

#include "tessera/dnn.hpp"

namespace tessera::dnn {
namespace {

constexpr std::array<std::pair<ActKind, std::string_view>, 18> kActNames = {{
    {ActKind::kIdentity, "identity"},
    {ActKind::kRelu, "relu"},
    {ActKind::kLeakyRelu, "leaky_relu"},
    {ActKind::kElu, "elu"},
    {ActKind::kSelu, "selu"},
    {ActKind::kCelu, "celu"},
    {ActKind::kSigmoid, "sigmoid"},
    {ActKind::kHardSigmoid, "hard_sigmoid"},
    {ActKind::kTanh, "tanh"},
    {ActKind::kGeluErf, "gelu_erf"},
    {ActKind::kGeluTanh, "gelu_tanh"},
    {ActKind::kSilu, "silu"},
    {ActKind::kMish, "mish"},
    {ActKind::kSoftplus, "softplus"},
    {ActKind::kSoftsign, "softsign"},
    {ActKind::kClip, "clip"},
    {ActKind::kHardSwish, "hard_swish"},
    {ActKind::kAbs, "abs"},
}};

constexpr std::array<std::pair<ConvAlgo, std::string_view>, 9> kAlgoNames = {{
    {ConvAlgo::kAuto, "auto"},
    {ConvAlgo::kDirect, "direct"},
    {ConvAlgo::kIm2col, "im2col"},
    {ConvAlgo::kGemm1x1, "gemm1x1"},
    {ConvAlgo::kWinogradF2x3, "winograd_f2x3"},
    {ConvAlgo::kWinogradF4x3, "winograd_f4x3"},
    {ConvAlgo::kDepthwise, "depthwise"},
    {ConvAlgo::kFft, "fft"},
    {ConvAlgo::kReference, "reference"},
}};

constexpr std::array<std::pair<BinaryOp, std::string_view>, kNumBinaryOps> kBinaryNames = {{
    {BinaryOp::kAdd, "add"},           {BinaryOp::kSub, "sub"},
    {BinaryOp::kMul, "mul"},           {BinaryOp::kDiv, "div"},
    {BinaryOp::kPow, "pow"},           {BinaryOp::kMod, "mod"},
    {BinaryOp::kFmod, "fmod"},         {BinaryOp::kMin, "min"},
    {BinaryOp::kMax, "max"},           {BinaryOp::kEqual, "equal"},
    {BinaryOp::kNotEqual, "not_equal"}, {BinaryOp::kLess, "less"},
    {BinaryOp::kLessEqual, "less_equal"}, {BinaryOp::kGreater, "greater"},
    {BinaryOp::kGreaterEqual, "greater_equal"}, {BinaryOp::kAnd, "and"},
    {BinaryOp::kOr, "or"},             {BinaryOp::kXor, "xor"},
    {BinaryOp::kBitAnd, "bit_and"},    {BinaryOp::kBitOr, "bit_or"},
    {BinaryOp::kBitXor, "bit_xor"},
}};
constexpr std::array<std::pair<UnaryOp, std::string_view>, kNumUnaryOps> kUnaryNames = {{
    {UnaryOp::kNeg, "neg"},     {UnaryOp::kAbs, "abs"},     {UnaryOp::kSign, "sign"},
    {UnaryOp::kReciprocal, "reciprocal"}, {UnaryOp::kSqrt, "sqrt"}, {UnaryOp::kRsqrt, "rsqrt"},
    {UnaryOp::kExp, "exp"},     {UnaryOp::kLog, "log"},     {UnaryOp::kSin, "sin"},
    {UnaryOp::kCos, "cos"},     {UnaryOp::kTan, "tan"},     {UnaryOp::kAsin, "asin"},
    {UnaryOp::kAcos, "acos"},   {UnaryOp::kAtan, "atan"},   {UnaryOp::kSinh, "sinh"},
    {UnaryOp::kCosh, "cosh"},   {UnaryOp::kTanh, "tanh"},   {UnaryOp::kErf, "erf"},
    {UnaryOp::kFloor, "floor"}, {UnaryOp::kCeil, "ceil"},   {UnaryOp::kRound, "round"},
    {UnaryOp::kNot, "not"},     {UnaryOp::kIsNan, "isnan"}, {UnaryOp::kIsInf, "isinf"},
}};
constexpr std::array<std::pair<ReduceOp, std::string_view>, kNumReduceOps> kReduceNames = {{
    {ReduceOp::kSum, "sum"},   {ReduceOp::kMean, "mean"}, {ReduceOp::kProd, "prod"},
    {ReduceOp::kMax, "max"},   {ReduceOp::kMin, "min"},   {ReduceOp::kL1, "l1"},
    {ReduceOp::kL2, "l2"},     {ReduceOp::kSumSquare, "sum_square"},
    {ReduceOp::kLogSum, "log_sum"}, {ReduceOp::kLogSumExp, "log_sum_exp"},
}};

constexpr std::array<std::pair<ScatterReduce, std::string_view>, 5> kScatterNames = {{
    {ScatterReduce::kNone, "none"},
    {ScatterReduce::kAdd, "add"},
    {ScatterReduce::kMul, "mul"},
    {ScatterReduce::kMax, "max"},
    {ScatterReduce::kMin, "min"},
}};

constexpr std::array<std::pair<ResizeMode, std::string_view>, 3> kResizeModeNames = {{
    {ResizeMode::kNearest, "nearest"},
    {ResizeMode::kLinear, "linear"},
    {ResizeMode::kCubic, "cubic"},
}};
constexpr std::array<std::pair<ResizeCoord, std::string_view>, 5> kResizeCoordNames = {{
    {ResizeCoord::kHalfPixel, "half_pixel"},
    {ResizeCoord::kHalfPixelSymmetric, "half_pixel_symmetric"},
    {ResizeCoord::kPytorchHalfPixel, "pytorch_half_pixel"},
    {ResizeCoord::kAlignCorners, "align_corners"},
    {ResizeCoord::kAsymmetric, "asymmetric"},
}};
constexpr std::array<std::pair<ResizeNearest, std::string_view>, 4> kResizeNearestNames = {{
    {ResizeNearest::kRoundPreferFloor, "round_prefer_floor"},
    {ResizeNearest::kRoundPreferCeil, "round_prefer_ceil"},
    {ResizeNearest::kFloor, "floor"},
    {ResizeNearest::kCeil, "ceil"},
}};

constexpr std::array<std::pair<LossReduction, std::string_view>, 3> kLossReductionNames = {{
    {LossReduction::kNone, "none"},
    {LossReduction::kSum, "sum"},
    {LossReduction::kMean, "mean"},
}};
constexpr std::array<std::pair<PointLoss, std::string_view>, 4> kPointLossNames = {{
    {PointLoss::kMse, "mse"},
    {PointLoss::kL1, "l1"},
    {PointLoss::kSmoothL1, "smooth_l1"},
    {PointLoss::kBceWithLogits, "bce_with_logits"},
}};

constexpr std::array<std::pair<RnnCell, std::string_view>, 4> kRnnCellNames = {{
    {RnnCell::kRnnTanh, "rnn_tanh"},
    {RnnCell::kRnnRelu, "rnn_relu"},
    {RnnCell::kLstm, "lstm"},
    {RnnCell::kGru, "gru"},
}};

constexpr std::array<std::pair<PadMode, std::string_view>, 4> kPadModeNames = {{
    {PadMode::kConstant, "constant"},
    {PadMode::kReflect, "reflect"},
    {PadMode::kEdge, "edge"},
    {PadMode::kWrap, "wrap"},
}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [k, n] : table)
    if (k == e && !n.empty()) return n;
  return "?";
}
template <typename E, std::size_t N>
std::optional<E> parse_name(const std::array<std::pair<E, std::string_view>, N>& table,
                            std::string_view name) {
  for (const auto& [k, n] : table)
    if (n == name && !n.empty()) return k;
  return std::nullopt;
}

}  // namespace

std::string_view act_name(ActKind k) { return name_of(kActNames, k); }
std::string_view binary_name(BinaryOp op) { return name_of(kBinaryNames, op); }
std::optional<BinaryOp> parse_binary(std::string_view name) { return parse_name(kBinaryNames, name); }
std::string_view unary_name(UnaryOp op) { return name_of(kUnaryNames, op); }
std::optional<UnaryOp> parse_unary(std::string_view name) { return parse_name(kUnaryNames, name); }
std::string_view reduce_name(ReduceOp op) { return name_of(kReduceNames, op); }
std::optional<ReduceOp> parse_reduce(std::string_view name) { return parse_name(kReduceNames, name); }
std::string_view scatter_reduce_name(ScatterReduce r) { return name_of(kScatterNames, r); }
std::optional<ScatterReduce> parse_scatter_reduce(std::string_view name) { return parse_name(kScatterNames, name); }
std::string_view resize_mode_name(ResizeMode m) { return name_of(kResizeModeNames, m); }
std::string_view resize_coord_name(ResizeCoord c) { return name_of(kResizeCoordNames, c); }
std::string_view resize_nearest_name(ResizeNearest n) { return name_of(kResizeNearestNames, n); }
std::optional<ResizeMode> parse_resize_mode(std::string_view name) { return parse_name(kResizeModeNames, name); }
std::optional<ResizeCoord> parse_resize_coord(std::string_view name) { return parse_name(kResizeCoordNames, name); }
std::optional<ResizeNearest> parse_resize_nearest(std::string_view name) { return parse_name(kResizeNearestNames, name); }
std::string_view loss_reduction_name(LossReduction r) { return name_of(kLossReductionNames, r); }
std::optional<LossReduction> parse_loss_reduction(std::string_view name) { return parse_name(kLossReductionNames, name); }
std::string_view point_loss_name(PointLoss k) { return name_of(kPointLossNames, k); }
std::optional<PointLoss> parse_point_loss(std::string_view name) { return parse_name(kPointLossNames, name); }
std::string_view rnn_cell_name(RnnCell c) { return name_of(kRnnCellNames, c); }
std::optional<RnnCell> parse_rnn_cell(std::string_view name) { return parse_name(kRnnCellNames, name); }
std::string_view pad_mode_name(PadMode m) { return name_of(kPadModeNames, m); }
std::optional<PadMode> parse_pad_mode(std::string_view name) { return parse_name(kPadModeNames, name); }
std::optional<ActKind> parse_act(std::string_view name) {
  if (name == "relu6") return ActKind::kClip;
  return parse_name(kActNames, name);
}

Activation Activation::make(ActKind kind) {
  switch (kind) {
    case ActKind::kLeakyRelu: return {kind, 0.01f, 0.0f};
    case ActKind::kElu:
    case ActKind::kCelu: return {kind, 1.0f, 0.0f};
    case ActKind::kSelu: return {kind, 1.67326319217681884765625f, 1.05070102214813232421875f};
    case ActKind::kHardSigmoid: return {kind, 0.2f, 0.5f};
    case ActKind::kClip: return {kind, 0.0f, 6.0f};
    default: return {kind, 0.0f, 0.0f};
  }
}

std::string_view algo_name(ConvAlgo a) { return name_of(kAlgoNames, a); }
std::optional<ConvAlgo> parse_algo(std::string_view name) { return parse_name(kAlgoNames, name); }

std::string_view dir_name(ConvDir d) {
  switch (d) {
    case ConvDir::kForward: return "fwd";
    case ConvDir::kBackwardData: return "bwd-data";
    case ConvDir::kBackwardWeights: return "bwd-weights";
  }
  return "?";
}

}  // namespace tessera::dnn
