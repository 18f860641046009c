// tessera DNN training operations: dropout with counter-based random numbers, and losses
// (softmax cross-entropy, negative log-likelihood, MSE, L1, smooth L1, binary cross-entropy
// with logits), forward and backward. Included by tessera/dnn.hpp.
//
// Dtypes: f32, f16 and bf16 tensors (computed in f32, sums in f64 in a fixed order); labels
// are i32 or i64; class weights are f32. Results are bitwise identical for any thread count.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tessera/dnn.hpp"

namespace tessera::dnn {

// ---- dropout ----------------------------------------------------------------------------------
// Element i (row-major over x's dims) is kept when u_i >= ratio, u_i = the 24 high bits of word
// i % 4 of Philox4x32-10 (key = seed, counter = i / 4 and `offset`) scaled to [0, 1). Kept
// elements are scaled by 1 / (1 - ratio); ratio 1 drops everything. The same seed and offset
// give the same mask for any thread count, strides or dtype. mask (bool, x's dims) may be
// null when not needed.
Status dropout_forward(Handle& h, float ratio, std::uint64_t seed, std::uint64_t offset,
                       const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y,
                       const TensorDesc& mask_desc, void* mask);
// dx = mask ? dy / (1 - ratio) : 0.
Status dropout_backward(Handle& h, float ratio, const TensorDesc& mask_desc, const void* mask,
                        const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                        void* dx);
// Philox4x32-10 (Salmon et al., SC'11): the four 32-bit words for a counter and key.
void philox4x32(const std::uint32_t counter[4], const std::uint32_t key[2], std::uint32_t out[4]);

// ---- losses -----------------------------------------------------------------------------------
enum class LossReduction : int { kNone, kSum, kMean };
std::string_view loss_reduction_name(LossReduction r);  // "none", "sum", "mean"
std::optional<LossReduction> parse_loss_reduction(std::string_view name);

// The class-indexed losses take scores/log-probabilities [N, C, d1, ...] and labels
// [N, d1, ...]; classes are axis 1. Samples whose label is ignore_index count nowhere. A label
// outside [0, C) (other than ignore_index) is an error. `weight` ([C] f32, or null) scales
// each class. Reductions: none (loss has labels' dims), sum (a scalar), mean (sum divided by
// the total weight of the counted samples, as PyTorch; NaN when that is 0).
struct ClassLossParams {
  LossReduction reduction = LossReduction::kMean;
  std::int64_t ignore_index = -100;
  float label_smoothing = 0.0f;  // softmax cross-entropy only: eps in [0, 1]
  const float* weight = nullptr;
};
// Softmax cross-entropy on raw scores: per sample -(1 - eps) w_t log p_t - eps/C sum_c w_c log p_c.
Status softmax_cross_entropy_forward(Handle& h, const ClassLossParams& p, const TensorDesc& x_desc,
                                     const void* x, const TensorDesc& labels_desc,
                                     const void* labels, const TensorDesc& loss_desc, void* loss);
// dx from dloss (loss's dims).
Status softmax_cross_entropy_backward(Handle& h, const ClassLossParams& p,
                                      const TensorDesc& x_desc, const void* x,
                                      const TensorDesc& labels_desc, const void* labels,
                                      const TensorDesc& dloss_desc, const void* dloss,
                                      const TensorDesc& dx_desc, void* dx);
// Negative log-likelihood on log-probabilities: per sample -w_t x_t (label_smoothing unused).
Status nll_loss_forward(Handle& h, const ClassLossParams& p, const TensorDesc& x_desc,
                        const void* x, const TensorDesc& labels_desc, const void* labels,
                        const TensorDesc& loss_desc, void* loss);
Status nll_loss_backward(Handle& h, const ClassLossParams& p, const TensorDesc& x_desc,
                         const TensorDesc& labels_desc, const void* labels,
                         const TensorDesc& dloss_desc, const void* dloss,
                         const TensorDesc& dx_desc, void* dx);

// Elementwise losses of an input x against a target of the same dims (d = x - target):
// mse d^2; l1 |d|; smooth_l1 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta > 0);
// bce_with_logits pos_weight * t * softplus(-x) + (1 - t) * softplus(x), computed stably.
// Reductions: none (x's dims), sum, mean (over all elements).
enum class PointLoss : int { kMse, kL1, kSmoothL1, kBceWithLogits };
std::string_view point_loss_name(PointLoss k);  // "mse", "l1", "smooth_l1", "bce_with_logits"
std::optional<PointLoss> parse_point_loss(std::string_view name);
struct PointLossParams {
  PointLoss kind = PointLoss::kMse;
  LossReduction reduction = LossReduction::kMean;
  float beta = 1.0f;        // smooth_l1
  float pos_weight = 1.0f;  // bce_with_logits
};
Status point_loss_forward(Handle& h, const PointLossParams& p, const TensorDesc& x_desc,
                          const void* x, const TensorDesc& target_desc, const void* target,
                          const TensorDesc& loss_desc, void* loss);
// dx (d loss / d x) from dloss.
Status point_loss_backward(Handle& h, const PointLossParams& p, const TensorDesc& x_desc,
                           const void* x, const TensorDesc& target_desc, const void* target,
                           const TensorDesc& dloss_desc, const void* dloss,
                           const TensorDesc& dx_desc, void* dx);

}  // namespace tessera::dnn
