// Scalar f16/bf16 conversions and the run-time choice of the bulk kernels.
#include <atomic>
#include <iterator>

#include <tessera/core/cpu.hpp>
#include <tessera/core/half.hpp>
#include <tessera/core/log.hpp>

#include "half_kernels.hpp"

namespace tessera {

std::uint16_t f32_to_f16_bits(float value) {
  const auto x = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u)  // NaN: keep the top 10 payload bits, set the quiet bit
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u)  // >= 65520 (halfway between 65504 and 65536) rounds to infinity
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {  // below 2^-14: an f16 subnormal (in units of 2^-24) or zero
    const std::uint32_t exp = abs >> 23;
    if (exp < 102) return sign;  // below 2^-25: rounds to zero
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - exp;  // 14..24
    std::uint32_t q = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<std::uint16_t>(sign | q);
  }
  // Normal: round to nearest even on bit 13, then rebias the exponent from 127 to 15.
  const std::uint32_t rounded = abs + 0x0fffu + ((abs >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | ((rounded - (112u << 23)) >> 13));
}

float f16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f)  // Inf, or NaN made quiet with its payload kept
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u));
  if (exp == 0) {
    if (mant == 0) return std::bit_cast<float>(sign);
    // Subnormal: normalise the mantissa; the f32 exponent absorbs the shift.
    int e = -1;
    do {
      mant <<= 1;
      ++e;
    } while ((mant & 0x400u) == 0);
    return std::bit_cast<float>(sign | ((112u - static_cast<std::uint32_t>(e)) << 23) |
                                ((mant & 0x3ffu) << 13));
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

std::uint16_t f32_to_bf16_bits(float value) {
  const auto x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u)  // NaN: keep sign and top payload, set the quiet bit
    return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

namespace {

using NarrowFn = void (*)(const float*, std::uint16_t*, std::size_t);
using WidenFn = void (*)(const std::uint16_t*, float*, std::size_t);

void f32_to_f16_scalar(const float* s, std::uint16_t* d, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) d[i] = f32_to_f16_bits(s[i]);
}
void f16_to_f32_scalar(const std::uint16_t* s, float* d, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) d[i] = f16_bits_to_f32(s[i]);
}
void f32_to_bf16_scalar(const float* s, std::uint16_t* d, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) d[i] = f32_to_bf16_bits(s[i]);
}
void bf16_to_f32_scalar(const std::uint16_t* s, float* d, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) d[i] = bf16_bits_to_f32(s[i]);
}

// Ordered lists: the first path the CPU (under TESSERA_MAX_ISA) can run wins.
struct NarrowPath {
  const char* name;
  CpuFeature needs;
  NarrowFn fn;
};
struct WidenPath {
  const char* name;
  CpuFeature needs;
  WidenFn fn;
};
constexpr NarrowPath kF32ToF16[] = {{"avx512", CpuFeature::kAvx512f, detail::f32_to_f16_avx512},
                                    {"f16c", CpuFeature::kF16c, detail::f32_to_f16_f16c},
                                    {"scalar", CpuFeature::kCount, f32_to_f16_scalar}};
constexpr WidenPath kF16ToF32[] = {{"avx512", CpuFeature::kAvx512f, detail::f16_to_f32_avx512},
                                   {"f16c", CpuFeature::kF16c, detail::f16_to_f32_f16c},
                                   {"scalar", CpuFeature::kCount, f16_to_f32_scalar}};
constexpr NarrowPath kF32ToBf16[] = {
    {"avx512_bf16", CpuFeature::kAvx512bf16, detail::f32_to_bf16_avx512bf16},
    {"avx2", CpuFeature::kAvx2, detail::f32_to_bf16_avx2},
    {"scalar", CpuFeature::kCount, f32_to_bf16_scalar}};
constexpr WidenPath kBf16ToF32[] = {{"avx512", CpuFeature::kAvx512f, detail::bf16_to_f32_avx512},
                                    {"avx2", CpuFeature::kAvx2, detail::bf16_to_f32_avx2},
                                    {"scalar", CpuFeature::kCount, bf16_to_f32_scalar}};

// The first path the CPU can run under the current ISA cap. The choice depends on the cap
// alone (the features are fixed), so it is remembered per cap level and the walk runs again
// only while TESSERA_VERBOSE=dispatch logs every decision (a call on 256 elements had spent
// more time choosing than converting: 22 -> 13 ns a call).
template <const auto& paths>
const auto& choose(const char* op) {
  constexpr std::size_t N = std::size(paths);
  // Per cap level: the chosen index + 1, 0 until walked.
  static std::atomic<int> chosen[static_cast<int>(Isa::kAvx512) + 1];
  const CpuInfo& cpu = cpu_info();
  std::atomic<int>& memo = chosen[static_cast<int>(cpu.max_isa)];
  if (const int i = memo.load(std::memory_order_relaxed); i > 0 && !log::enabled(log::Category::kDispatch))
    return paths[i - 1];
  std::size_t k = 0;
  for (; k + 1 < N; ++k) {
    const auto& p = paths[k];
    if (p.needs == CpuFeature::kCount || cpu.usable(p.needs)) break;
    TESSERA_VLOG(kDispatch) << op << ": " << p.name << " refused: needs "
                            << cpu_feature_name(p.needs)
                            << (cpu.has(p.needs) ? " (capped by TESSERA_MAX_ISA)"
                                                 : " (not on this CPU)");
  }
  TESSERA_VLOG(kDispatch) << op << ": chose " << paths[k].name;
  memo.store(static_cast<int>(k) + 1, std::memory_order_relaxed);
  return paths[k];
}

}  // namespace

void convert_f32_to_f16(const float* src, f16* dst, std::size_t n) {
  choose<kF32ToF16>("convert f32->f16").fn(src, reinterpret_cast<std::uint16_t*>(dst), n);
}
void convert_f16_to_f32(const f16* src, float* dst, std::size_t n) {
  choose<kF16ToF32>("convert f16->f32").fn(reinterpret_cast<const std::uint16_t*>(src), dst, n);
}
void convert_f32_to_bf16(const float* src, bf16* dst, std::size_t n) {
  choose<kF32ToBf16>("convert f32->bf16").fn(src, reinterpret_cast<std::uint16_t*>(dst), n);
}
void convert_bf16_to_f32(const bf16* src, float* dst, std::size_t n) {
  choose<kBf16ToF32>("convert bf16->f32").fn(reinterpret_cast<const std::uint16_t*>(src), dst, n);
}

std::string half_conversion_paths() {
  return std::string("f32->f16: ") + choose<kF32ToF16>("convert f32->f16").name +
         ", f16->f32: " + choose<kF16ToF32>("convert f16->f32").name +
         ", f32->bf16: " + choose<kF32ToBf16>("convert f32->bf16").name +
         ", bf16->f32: " + choose<kBf16ToF32>("convert bf16->f32").name;
}

}  // namespace tessera
