// Helpers shared by the norm entry points: memory arrangements, offsets, kernel tables.
#include <tessera/core/cpu.hpp>

#include "norm.hpp"

namespace tessera::dnn::norm {

i64 spatial_size(const TensorDesc& d) {
  i64 s = 1;
  for (int i = 2; i < d.rank(); ++i) s *= d.dims[static_cast<std::size_t>(i)];
  return s;
}

std::optional<Arrangement> arrangement(const TensorDesc& d) {
  if (d.rank() < 2) return std::nullopt;
  const i64 s = spatial_size(d);
  if (s > 1 && d.is_packed(Layout::kNCHW)) return Arrangement::kSpatialInner;
  if (d.is_packed(Layout::kNHWC)) return Arrangement::kChannelsInner;
  return std::nullopt;
}

std::optional<Arrangement> common_arrangement(std::initializer_list<const TensorDesc*> ds) {
  std::optional<Arrangement> a;
  for (const TensorDesc* d : ds) {
    if (d == nullptr) continue;
    const auto b = arrangement(*d);
    if (!b || (a && *a != *b)) return std::nullopt;
    a = b;
  }
  return a;
}

std::vector<i64> offsets_of(const TensorDesc& d, int first, int last) {
  std::vector<i64> off = {0};
  for (int i = first; i < last; ++i) {
    const auto k = static_cast<std::size_t>(i);
    std::vector<i64> next;
    next.reserve(off.size() * static_cast<std::size_t>(d.dims[k]));
    for (i64 o : off)
      for (i64 j = 0; j < d.dims[k]; ++j) next.push_back(o + j * d.strides[k]);
    off.swap(next);
  }
  return off;
}

const NormKernels& kernels_for(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return kNormAvx512;
    case Isa::kAvx2:
      return kNormAvx2;
    default:
      return kNormGeneric;
  }
}

Status isa_ok(Isa need) {
  const Isa have = cpu_info().isa();
  if (have >= need) return Status::ok();
  return detail::refuse("needs " + std::string(isa_name(need)) +
                        "; the CPU (under TESSERA_MAX_ISA) allows " + std::string(isa_name(have)));
}

std::string layout_of(const TensorDesc& d) {
  const auto l = d.packed_layout();
  return l ? std::string(layout_name(*l)) : std::string("strided");
}

Status check_epsilon(const std::string& fn, double epsilon) {
  if (std::isfinite(epsilon) && epsilon >= 0.0) return Status::ok();
  return invalid_argument(fn + ": epsilon = " + std::to_string(epsilon) +
                          " must be finite and >= 0");
}

}  // namespace tessera::dnn::norm
