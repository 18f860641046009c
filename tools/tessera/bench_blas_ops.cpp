// `tessera bench blas`: dtype names, the outputs of a plan, and the table of ops (whose rows and
// plans live in bench_blas_level3.cpp and bench_blas_level12.cpp). Anchors are reached
// through dlsym with local copies of the CBLAS constants; no system cblas.h is included.
#include "bench_blas_plan.hpp"

namespace tessera::cli::blas_bench {

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kC64:
      return "c64";
    case DType::kC128:
      return "c128";
    case DType::kBf16:
      return "bf16";
    case DType::kF16:
      return "f16";
    case DType::kInt8:
      return "int8";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : kAllDTypes)
    if (dtype_name(d) == name) return d;
  return std::nullopt;
}

void Outputs::restore() {
  for (Slot& s : slots_) std::memcpy(s.data, s.pristine.data(), s.bytes);
}

void Outputs::save_reference() {
  for (Slot& s : slots_) std::memcpy(s.reference.data(), s.data, s.bytes);
}

double Outputs::error_vs_reference() const {
  double e = 0;
  for (const Slot& s : slots_) e = std::max(e, s.error(s.reference.data(), s.data, s.count));
  return e;
}

const std::vector<OpInfo>& blas_ops() {
  static const std::vector<OpInfo> ops = [] {
    std::vector<OpInfo> all = level3_ops();
    for (OpInfo& o : level12_ops()) all.push_back(o);
    return all;
  }();
  return ops;
}

const OpInfo* find_op(std::string_view name) {
  for (const OpInfo& o : blas_ops())
    if (name == o.name) return &o;
  return nullptr;
}

}  // namespace tessera::cli::blas_bench
