// Shared by `tessera bench dnn pool|act|softmax` (bench_dnn_ops.cpp) and `norm`
// (bench_dnn_norm.cpp): the options as given, the tensor they describe, and small helpers.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench_dnn.hpp"

namespace tessera::cli::dnn_bench::ops {

// Every option of the four commands; each command registers those it takes.
struct OpArgs {
  std::string kind, dims, layout, dtype = "f32", dir = "fwd", kernel, stride, pad, pad_begin,
                                  pad_end, dilation, mode, lrn_mode;
  double alpha = 0, beta = 0, eps = 1e-5, momentum = 0.1, k = 1;
  std::int64_t axis = 1, groups = 1, slopes = 1, size = 5;
  bool ceil = false, indices = false, strided = false, running = false;
  std::map<std::string, CLI::Option*> options;
  bool given(const std::string& flag) const {
    auto it = options.find(flag);
    return it != options.end() && it->second->count() > 0;
  }
  // Refuses every given option not in `takes` (for what the command's --kind does not read).
  void only(const std::string& what, const std::set<std::string>& takes) const {
    for (const auto& [flag, opt] : options)
      if (opt->count() > 0 && takes.count(flag) == 0) bad(what + " takes no " + flag);
  }
};

// The tensor the options describe (packed; "strided" lines cannot carry their strides).
struct Shape {
  DType dtype = DType::kF32;
  std::vector<std::int64_t> dims;
  dnn::Layout layout = dnn::Layout::kNCHW;
  dnn::TensorDesc desc() const { return dnn::TensorDesc::make(dtype, dims, layout); }
  dnn::TensorDesc desc(std::vector<std::int64_t> d) const {
    return dnn::TensorDesc::make(dtype, std::move(d), layout);
  }
};

Shape parse_shape(const OpArgs& a, std::size_t min_rank);
std::string shape_flags(const Shape& s);  // " --dims ... --layout ... --dtype ..."
std::string shape_text(const Shape& s);   // "8x64x56x56 nhwc"
double tolerance(DType d);                // cross-check tolerance of the memory-bound primitives
onednn::Tensor f32_vector(float* data, std::int64_t n);
// The anchor's primitive, or the reason it has none.
void set_anchor(Plan& p, Result<onednn::PrimitivePtr> made);
void check_status(const Status& s);  // throws CommandError when not ok
Case make_case(const std::string& primitive, const Shape& s, std::string command, std::string shape,
               nlohmann::json args);
bool parse_fwd_bwd(const std::string& dir);  // "fwd" -> false, "bwd" -> true

Case pool_case(const OpArgs& a);
Case act_case(const OpArgs& a);
Case softmax_case(const OpArgs& a);
Case norm_case(const OpArgs& a);

}  // namespace tessera::cli::dnn_bench::ops
