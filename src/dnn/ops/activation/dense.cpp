// Dense-layout predicates of dense.hpp.
#include "dense.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "../../common.hpp"

namespace tessera::dnn::detail {

int storage_index(DType t) {
  return t == DType::kBF16 ? 1 : (t == DType::kF16 ? 2 : 0);
}
std::int64_t storage_bytes(DType t) {
  return t == DType::kF32 ? 4 : 2;
}

bool stream_output(std::int64_t bytes) {
  static const std::int64_t threshold = [] {
    if (const char* env = std::getenv("TESSERA_STREAM_BYTES"); env && *env) {
      char* end = nullptr;
      const long long v = std::strtoll(env, &end, 10);
      if (*end == '\0' && v >= 0) return static_cast<std::int64_t>(v);
    }
    const std::int64_t l3 = cpu_info().cache_bytes(3);
    return l3 > 0 ? l3 : std::int64_t{32} << 20;
  }();
  return bytes >= threshold;
}

Status check_tensor_args(const std::string& fn, int min_rank,
                         std::initializer_list<TensorArg> args) {
  const TensorArg& first = *args.begin();
  for (const TensorArg& a : args) {
    TESSERA_RETURN_IF_ERROR(check_desc(fn, a.name, a.desc, min_rank, kMaxElementwiseRank));
    TESSERA_RETURN_IF_ERROR(check_float_dtype(fn, a.name, a.desc));
    // Element counts and offsets must fit comfortably in 64 bits.
    std::int64_t count = 1, last = 0;
    for (std::size_t i = 0; i < a.desc.dims.size(); ++i) {
      const std::int64_t d = a.desc.dims[i];
      std::int64_t reach = 0;
      if (__builtin_mul_overflow(count, d, &count) ||
          __builtin_mul_overflow(d > 0 ? d - 1 : 0, a.desc.strides[i], &reach) ||
          __builtin_add_overflow(last, reach, &last) || count > (std::int64_t{1} << 56) ||
          last > (std::int64_t{1} << 56))
        return invalid_argument(fn + ": " + a.name + " dims [" + dims_string(a.desc.dims) +
                                "] with strides [" + dims_string(a.desc.strides) +
                                "] address too many elements");
    }
  }
  for (const TensorArg& a : args) {
    if (&a == &first) continue;
    TESSERA_RETURN_IF_ERROR(check_same_dtype(fn, first.name, first.desc, a.name, a.desc));
    if (a.same_dims)
      TESSERA_RETURN_IF_ERROR(check_same_dims(fn, first.name, first.desc, a.name, a.desc));
  }
  for (const TensorArg& a : args)
    TESSERA_RETURN_IF_ERROR(check_ptr(fn, a.name, a.ptr, a.desc.numel() > 0));
  return Status::ok();
}

Status isa_allows(Isa needs) {
  const Isa isa = cpu_info().isa();
  if (isa >= needs) return Status::ok();
  return refuse("needs " + std::string(isa_name(needs)) +
                ", the CPU (with TESSERA_MAX_ISA) allows " + std::string(isa_name(isa)));
}

std::int64_t units_per_segment(std::int64_t len) {
  return len <= 0 ? 0 : (len + kUnitElements - 1) / kUnitElements;
}

void for_each_unit(
    const Handle& h, std::int64_t segments, std::int64_t len,
    const std::function<void(std::int64_t, std::int64_t, std::int64_t, std::int64_t)>& fn) {
  const std::int64_t per = units_per_segment(len);
  if (segments <= 0 || per == 0) return;
  const std::int64_t unit_len = std::min(len, kUnitElements);
  const std::int64_t grain = std::max<std::int64_t>(1, kGrainElements / unit_len);
  parallel_for(h, 0, segments * per, grain, [&](std::int64_t u0, std::int64_t u1) {
    for (std::int64_t u = u0; u < u1; ++u) {
      const std::int64_t seg = u / per, j = u % per;
      const std::int64_t begin = j * kUnitElements;
      fn(u, seg, begin, std::min(len, begin + kUnitElements));
    }
  });
}

bool is_dense(const TensorDesc& d) {
  if (d.strides.size() != d.dims.size()) return false;
  if (d.numel() == 0) return true;
  std::vector<std::pair<std::int64_t, std::int64_t>> sd;  // (stride, dim) of dims > 1
  for (std::size_t i = 0; i < d.dims.size(); ++i)
    if (d.dims[i] > 1) sd.emplace_back(d.strides[i], d.dims[i]);
  std::sort(sd.begin(), sd.end());
  std::int64_t expect = 1;
  for (const auto& [stride, dim] : sd) {
    if (stride != expect) return false;
    expect *= dim;
  }
  return true;
}

bool same_dense_layout(const TensorDesc& a, const TensorDesc& b) {
  if (a.dims != b.dims || !is_dense(a) || !is_dense(b)) return false;
  for (std::size_t i = 0; i < a.dims.size(); ++i)
    if (a.dims[i] > 1 && a.strides[i] != b.strides[i]) return false;
  return true;
}

AxisSplit split_at_axis(const TensorDesc& d, int axis) {
  AxisSplit s;
  const std::int64_t n = d.numel();
  s.len = d.dims[static_cast<std::size_t>(axis)];
  if (s.len <= 1 || n == 0) {
    s.outer = s.len == 0 ? 0 : n;
    s.len = std::min<std::int64_t>(s.len, 1);
    return s;
  }
  s.inner = d.strides[static_cast<std::size_t>(axis)];
  s.outer = n / (s.len * s.inner);
  return s;
}

bool same_order_channel_doubled(const TensorDesc& narrow, const TensorDesc& wide) {
  if (!is_dense(narrow) || !is_dense(wide) || narrow.rank() < 2 || wide.rank() != narrow.rank())
    return false;
  if (narrow.numel() == 0) return true;
  // wide has 2C >= 2 channels, so its channel stride places dim 1 among the others; dims
  // outside it have twice narrow's stride, dims inside the same, and dim 1 the same.
  const std::int64_t cs = wide.strides[1];
  for (std::size_t i = 0; i < narrow.dims.size(); ++i) {
    if (narrow.dims[i] <= 1) continue;
    const std::int64_t w = wide.strides[i];
    const std::int64_t expect = (i == 1 || w <= cs) ? w : w / 2;
    if (i != 1 && w > cs && w % 2 != 0) return false;
    if (narrow.strides[i] != expect) return false;
  }
  return true;
}

std::string dims_x(const TensorDesc& d) {
  return dims_string(d.dims, 'x');
}

std::string layout_flag(const TensorDesc& d) {
  if (d.rank() >= 3 && d.is_packed(Layout::kNHWC) && !d.is_packed(Layout::kNCHW))
    return " --layout nhwc";
  if (d.is_packed(Layout::kNCHW)) return "";
  return " --strided";
}

}  // namespace tessera::dnn::detail
