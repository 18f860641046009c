// Normalisation internals shared by the reference (ref.cpp) and the entry points
// (batch_norm.cpp, layer_norm.cpp, group_norm.cpp): problem structs, the memory arrangements
// the fast paths know, and shared helpers. Generic code only (ISA files include kernels.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tessera/core/cpu.hpp>

#include "../../common.hpp"
#include "kernels.hpp"

namespace tessera::dnn::norm {

using i64 = std::int64_t;

enum class Dir : int { kForwardTraining, kForwardInference, kBackward };

// Where channels sit in memory for the fast paths: spatial-inner (packed NCHW with a spatial
// extent above 1: each (n, c) is one contiguous segment) or channels-inner (packed NHWC, or
// any packed tensor without spatial extent: a [rows, C] matrix).
enum class Arrangement : int { kSpatialInner, kChannelsInner };
std::optional<Arrangement> arrangement(const TensorDesc& d);
// The same arrangement for every tensor of a problem (nullptr entries are skipped).
std::optional<Arrangement> common_arrangement(std::initializer_list<const TensorDesc*> ds);

i64 spatial_size(const TensorDesc& d);  // product of dims[2..]; 1 for rank 2

// Offsets (under d's strides) of every element of dims [first, last) in row-major order.
std::vector<i64> offsets_of(const TensorDesc& d, int first, int last);

struct BnProblem {
  Dir dir = Dir::kForwardTraining;
  BatchNormMode mode = BatchNormMode::kSpatial;
  TensorDesc x_desc, y_desc;  // backward: y_desc describes dy
  TensorDesc dx_desc;
  const void* x = nullptr;
  const void* dy = nullptr;
  void* y = nullptr;  // forward output
  void* dx = nullptr;
  const float* scale = nullptr;
  const float* bias = nullptr;
  const float* mean = nullptr;    // inference: running mean; backward: saved mean
  const float* var = nullptr;     // inference: running variance
  const float* invstd = nullptr;  // backward: saved invstd
  double epsilon = 0.0, momentum = 0.0;
  float* running_mean = nullptr;
  float* running_var = nullptr;
  float* saved_mean = nullptr;
  float* saved_invstd = nullptr;
  float* dscale = nullptr;
  float* dbias = nullptr;
};

struct LnProblem {
  bool backward = false;
  int axis = 0;                        // normalised dims [axis, rank)
  TensorDesc x_desc, y_desc, dx_desc;  // backward: y_desc describes dy
  const void* x = nullptr;
  const void* dy = nullptr;
  void* y = nullptr;
  void* dx = nullptr;
  const float* scale = nullptr;
  const float* bias = nullptr;
  double epsilon = 0.0;
  float* mean_out = nullptr;    // forward
  float* invstd_out = nullptr;  // forward
  const float* mean = nullptr;  // backward
  const float* invstd = nullptr;
  float* dscale = nullptr;
  float* dbias = nullptr;
};

struct GnProblem {
  bool backward = false;
  i64 groups = 1;
  TensorDesc x_desc, y_desc, dx_desc;  // backward: y_desc describes dy
  const void* x = nullptr;
  const void* dy = nullptr;
  void* y = nullptr;
  void* dx = nullptr;
  const float* scale = nullptr;
  const float* bias = nullptr;
  double epsilon = 0.0;
  float* mean_out = nullptr;
  float* invstd_out = nullptr;
  const float* mean = nullptr;
  const float* invstd = nullptr;
  float* dscale = nullptr;
  float* dbias = nullptr;
};

// ref.cpp: plain loops over logical indices, statistics in f64 (two passes), any strides.
Status batch_norm_ref(Handle& h, const BnProblem& p);
Status layer_norm_ref(Handle& h, const LnProblem& p);
Status group_norm_ref(Handle& h, const GnProblem& p);

// The kernels of an ISA level, and a refusal when the CPU (under TESSERA_MAX_ISA) lacks it.
const NormKernels& kernels_for(Isa isa);
Status isa_ok(Isa need);

// 1 / sqrt(var + eps) in f64.
inline double inv_std(double var, double eps) {
  return 1.0 / std::sqrt(var + eps);
}

// Moments around `shift` (sum of x - shift, sum of squares) -> mean and biased variance.
inline void moments_to_stats(double shift, double s1, double s2, double count, double* mean,
                             double* var) {
  const double m1 = s1 / count;
  *mean = shift + m1;
  const double v = s2 / count - m1 * m1;
  *var = v > 0.0 ? v : 0.0;
}

std::string layout_of(const TensorDesc& d);  // "nchw", "nhwc" or "strided"
Status check_epsilon(const std::string& fn, double epsilon);

}  // namespace tessera::dnn::norm
