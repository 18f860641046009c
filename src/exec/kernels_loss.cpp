// ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: scores [N, C, d1, ...] against
// labels [N, d1, ...] with optional class weights, ignore_index and none/sum/mean reduction
// (mean divides by the summed weights of the counted samples). f32, f16 and bf16 scores with
// f32 weights run the DNN primitives (f32 compute, f64 sums); the rest (f64 scores, the
// log_prob output, ONNX's mean over every sample with ignore_index -1 and no weights) is
// computed in f64 here, each output rounded once to the input's dtype. A label outside
// [0, C) that is not ignore_index is an error naming it.
#include <limits>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace tessera::exec::detail {
namespace {

// loss = NLL of log-probabilities lp ([N, C, D] packed f64) into c.out[0].
Status nll(KernelCall& c, const Tensor& lp, std::int64_t n, std::int64_t classes, std::int64_t inner, DType dtype) {
  const Tensor& labels_t = *c.input(1);
  TESSERA_ASSIGN_OR_RETURN(Tensor labels, like(labels_t, DType::kI64));
  TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(labels_t), labels_t.data(), desc(labels), labels.data()));
  if (labels.numel() != n * inner) return invalid_argument("the labels' dims " + labels_t.shape().to_string() + " do not match the scores'");
  const Tensor* weight_t = c.input(2);
  Tensor weight;
  if (weight_t) {
    if (weight_t->numel() != classes) return invalid_argument("the weights must hold one value per class (" + std::to_string(classes) + ")");
    TESSERA_ASSIGN_OR_RETURN(weight, as_f64(c.h, *weight_t));
  }
  const graph::Attribute* ia = c.attr("ignore_index");
  const std::int64_t ignore = ia ? ia->i : 0;
  const std::string reduction = c.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") return invalid_argument("reduction '" + reduction + "'");

  TESSERA_ASSIGN_OR_RETURN(Tensor loss, like(labels_t, DType::kF64));
  const auto* lab = labels.data<std::int64_t>();
  double* l = loss.data<double>();
  double sum = 0, wsum = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t d = 0; d < inner; ++d) {
      const std::int64_t t = lab[i * inner + d];
      double& out = l[i * inner + d];
      if (ia && t == ignore) {
        out = 0;
        continue;
      }
      if (t < 0 || t >= classes) return invalid_argument("label " + std::to_string(t) + " is outside [0, " + std::to_string(classes) + ")");
      const double w = weight_t ? weight.data<double>()[t] : 1.0;
      out = -w * lp.data<double>()[(i * classes + t) * inner + d];
      sum += out;
      wsum += w;
    }
  if (reduction == "none") return from_f64(c.h, loss, dtype, c.out[0]);
  // ONNX's reference: without weights and with ignore_index -1, the mean is over every sample.
  if (reduction == "mean") sum /= !weight_t && ia && ignore == -1 ? static_cast<double>(n * inner) : wsum;
  TESSERA_ASSIGN_OR_RETURN(Tensor s, Tensor::from_vector<double>(Shape{}, {sum}));
  return from_f64(c.h, s, dtype, c.out[0]);
}

// The scores as packed f64 and their N, C and inner (product of the dims after C) counts.
Status scores(KernelCall& c, Tensor& x64, std::int64_t& n, std::int64_t& classes, std::int64_t& inner) {
  const Tensor& x = *c.input(0);
  if (x.rank() < 2) return invalid_argument("the scores must be [N, C, ...], not rank " + std::to_string(x.rank()));
  if (!is_floating(x.dtype())) return invalid_argument("the scores must be floating point");
  TESSERA_ASSIGN_OR_RETURN(x64, as_f64(c.h, x));
  n = x.shape()[0];
  classes = x.shape()[1];
  inner = classes == 0 || n == 0 ? 0 : x.numel() / (n * classes);
  return Status::ok();
}

// The primitives' forward (dnn::softmax_cross_entropy_forward / nll_loss_forward: f32
// compute, f64 sums in a fixed order) where the node means what they compute: f32, f16 or
// bf16 scores, f32 weights or none, no log_prob output, and not the ONNX reference's mean over
// every sample (ignore_index -1 without weights). Without ignore_index no label may be
// ignored: the primitives get the one i64 value no valid label has, and a label holding it
// takes the f64 path, which names it as out of range. false: the f64 path runs instead.
Result<bool> via_primitives(KernelCall& c, bool softmax) {
  const Tensor& x = *c.input(0);
  const Tensor* weight = c.input(2);
  const graph::Attribute* ia = c.attr("ignore_index");
  const DType t = x.dtype();
  if ((t != DType::kF32 && t != DType::kF16 && t != DType::kBF16) || x.rank() < 2) return false;
  if (weight != nullptr && (weight->dtype() != DType::kF32 || weight->numel() != x.shape()[1])) return false;
  if (c.out.size() > 1 && c.node.outputs[1] != graph::kNoValue) return false;
  const std::optional<dnn::LossReduction> r = dnn::parse_loss_reduction(c.attr_string("reduction", "mean"));
  if (!r || (*r == dnn::LossReduction::kMean && weight == nullptr && ia != nullptr && ia->i == -1)) return false;
  const Tensor& labels_t = *c.input(1);
  if (labels_t.dtype() != DType::kI32 && labels_t.dtype() != DType::kI64) return false;
  dnn::ClassLossParams p;
  p.reduction = *r;
  p.ignore_index = ia != nullptr ? ia->i : std::numeric_limits<std::int64_t>::min();
  TESSERA_ASSIGN_OR_RETURN(const Tensor labels, as_i64(c.h, labels_t));
  if (ia == nullptr) {
    const auto* l = labels.data<std::int64_t>();
    for (std::int64_t i = 0; i < labels.numel(); ++i)
      if (l[i] == p.ignore_index) return false;
  }
  Tensor weights;
  if (weight != nullptr) {
    TESSERA_ASSIGN_OR_RETURN(weights, weight->contiguous());
    p.weight = weights.data<float>();
  }
  std::vector<std::int64_t> dims;
  if (*r == dnn::LossReduction::kNone) dims = labels_t.shape().dims();
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, t));
  const auto forward = softmax ? &dnn::softmax_cross_entropy_forward : &dnn::nll_loss_forward;
  TESSERA_RETURN_IF_ERROR(forward(c.h, p, desc(x), x.data(), desc(labels), labels.data(), desc(c.out[0]), c.out[0].data()));
  return true;
}

}  // namespace

Status nll_loss_kernel(KernelCall& c) {
  TESSERA_ASSIGN_OR_RETURN(const bool done, via_primitives(c, false));
  if (done) return Status::ok();
  Tensor x;
  std::int64_t n = 0, classes = 0, inner = 0;
  TESSERA_RETURN_IF_ERROR(scores(c, x, n, classes, inner));
  return nll(c, x, n, classes, inner, c.input(0)->dtype());
}

Status softmax_cross_entropy_kernel(KernelCall& c) {
  TESSERA_ASSIGN_OR_RETURN(const bool done, via_primitives(c, true));
  if (done) return Status::ok();
  Tensor x;
  std::int64_t n = 0, classes = 0, inner = 0;
  TESSERA_RETURN_IF_ERROR(scores(c, x, n, classes, inner));
  softmax_f64(x.data<double>(), n, classes, inner, true);  // log-probabilities, in place
  const DType dtype = c.input(0)->dtype();
  TESSERA_RETURN_IF_ERROR(nll(c, x, n, classes, inner, dtype));
  if (c.out.size() > 1 && c.node.outputs[1] != graph::kNoValue) return from_f64(c.h, x, dtype, c.out[1]);
  return Status::ok();
}

}  // namespace tessera::exec::detail
