// The references of dropout and the losses (ref.cpp): plain loops over any strides, per-element
// and per-sample values in f64, the reductions summed in sample order. training.cpp checks the
// arguments, then runs the first entry of each ordered list that accepts; these end the lists.
// The helpers below are shared with the fast paths (per-sample values are reduced alike).
#pragma once

#include <cstdint>
#include <vector>

#include "../../common.hpp"

namespace tessera::dnn::training_ref {

using i64 = std::int64_t;

// The class-indexed losses' samples: the label per sample (row-major over N, d1, ...;
// ignore_index kept as is) and the class count.
struct Samples {
  i64 C = 0;
  std::vector<i64> label;
};

// Offsets of every element of a box of dims with these strides, row-major.
std::vector<i64> offsets_of(const std::vector<i64>& dims, const std::vector<i64>& strides);
std::vector<i64> offsets_of(const TensorDesc& d);
// The offset of class 0 of every sample of [N, C, d...] (row-major over N, d...).
std::vector<i64> class0_offsets(const TensorDesc& d);

inline double class_weight(const ClassLossParams& p, i64 c) { return p.weight != nullptr ? p.weight[c] : 1.0; }
// The sum of the C class weights (C without weights).
double total_class_weight(const ClassLossParams& p, i64 C);
// The total weight of the counted samples (mean's divisor).
double weight_sum(const ClassLossParams& p, const Samples& s);
// Writes per-sample values or their reduction (sample order, f64); `weight_sum` divides for mean.
void write_loss(const double* per, i64 n, double weight_sum, LossReduction r, const TensorDesc& d,
                void* out);
// The gradient reaching each sample: dloss per sample (none), or the scalar (divided for mean).
std::vector<double> sample_grads(LossReduction r, const TensorDesc& d, const void* g, i64 n,
                                 double weight_sum);
// d loss / d x of one dloss value for reduction r over n elements (sum: g, mean: g / n).
double scalar_grad(LossReduction r, double g, double n);

void dropout_forward(Handle& h, float ratio, std::uint64_t seed, std::uint64_t offset,
                     const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y,
                     const TensorDesc& mask_desc, void* mask);
void dropout_backward(Handle& h, float ratio, const TensorDesc& mask_desc, const void* mask,
                      const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                      void* dx);
void softmax_cross_entropy_forward(Handle& h, const ClassLossParams& p, const Samples& s,
                                   const TensorDesc& x_desc, const void* x,
                                   const TensorDesc& loss_desc, void* loss);
void softmax_cross_entropy_backward(Handle& h, const ClassLossParams& p, const Samples& s,
                                    const TensorDesc& x_desc, const void* x,
                                    const TensorDesc& dloss_desc, const void* dloss,
                                    const TensorDesc& dx_desc, void* dx);
// nll's backward without its zero fill of dx (the caller's): the one value per sample.
void nll_loss_scatter(const ClassLossParams& p, const Samples& s, const TensorDesc& dloss_desc,
                      const void* dloss, const TensorDesc& dx_desc, void* dx);
void point_loss_forward(Handle& h, const PointLossParams& p, const TensorDesc& x_desc,
                        const void* x, const TensorDesc& target_desc, const void* target,
                        const TensorDesc& loss_desc, void* loss);
void point_loss_backward(Handle& h, const PointLossParams& p, const TensorDesc& x_desc,
                         const void* x, const TensorDesc& target_desc, const void* target,
                         const TensorDesc& dloss_desc, const void* dloss,
                         const TensorDesc& dx_desc, void* dx);

}  // namespace tessera::dnn::training_ref
