// Measures the per-core peak: an ordered list of loops per operation, the first one the
// hardware supports wins; each is timed a few times and the best rate is kept.
#include "peak.hpp"

#include <chrono>
#include <cstdint>

#include <tessera/core/cpu.hpp>
#include <tessera/core/log.hpp>

#include "peak_kernels.hpp"

namespace tessera::cli {
namespace {

using Loop = double (*)(std::int64_t);

volatile double generic_sink;

// Plain C++ for CPUs without AVX2: eight chains of multiply and add (a lower bound; the
// compiler decides how to vectorise it).
template <typename T>
double mul_add_generic(std::int64_t iters) {
  T c[8] = {0, 1, 2, 3, 4, 5, 6, 7};  // distinct, so the compiler cannot merge the chains
  const T a = T(0.5), b = T(0.5);
  for (std::int64_t i = 0; i < iters; ++i)
    for (T& v : c) v = v * a + b;
  T s = 0;
  for (T v : c) s += v;
  generic_sink = static_cast<double>(s);
  return static_cast<double>(iters) * 8 * 2;
}

struct PeakLoop {
  const char* isa;
  CpuFeature needs;  // kCount: always usable
  Loop fn;
};

constexpr PeakLoop kF32[] = {{"avx512", CpuFeature::kAvx512f, detail::fma_f32_avx512},
                             {"avx2", CpuFeature::kFma, detail::fma_f32_avx2},
                             {"generic", CpuFeature::kCount, mul_add_generic<float>}};
constexpr PeakLoop kF64[] = {{"avx512", CpuFeature::kAvx512f, detail::fma_f64_avx512},
                             {"avx2", CpuFeature::kFma, detail::fma_f64_avx2},
                             {"generic", CpuFeature::kCount, mul_add_generic<double>}};
constexpr PeakLoop kBf16[] = {{"avx512_bf16", CpuFeature::kAvx512bf16, detail::dpbf16_avx512}};
constexpr PeakLoop kInt8[] = {{"avx512_vnni", CpuFeature::kAvx512vnni, detail::dpbusd_avx512}};

bool hardware_has(CpuFeature f) {
  const CpuInfo& cpu = cpu_info();
  if (f == CpuFeature::kCount) return true;
  // The AVX2 loops need AVX2 as well as FMA; the AVX-512 extensions need AVX-512 F.
  if (f == CpuFeature::kFma) return cpu.has(CpuFeature::kFma) && cpu.has(CpuFeature::kAvx2);
  if (f == CpuFeature::kAvx512bf16 || f == CpuFeature::kAvx512vnni)
    return cpu.has(f) && cpu.has(CpuFeature::kAvx512f);
  return cpu.has(f);
}

// Giga-operations per second: the best of five runs of a millisecond or two (a few
// milliseconds in all, so every command can afford it).
double measure(Loop fn) {
  using Clock = std::chrono::steady_clock;
  std::int64_t iters = 1 << 12;
  // Grow the run until it lasts a millisecond (this also ramps up the clock).
  for (;;) {
    auto t0 = Clock::now();
    fn(iters);
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s > 1e-3 || iters > (std::int64_t{1} << 40)) break;
    iters *= 2;
  }
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    double ops = fn(iters);
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s > 0 && ops / s > best) best = ops / s;
  }
  return best * 1e-9;
}

template <std::size_t N>
double measure_first(const char* what, const PeakLoop (&loops)[N], std::string* isa) {
  for (const PeakLoop& l : loops) {
    if (!hardware_has(l.needs)) continue;
    TESSERA_VLOG(kDispatch) << "peak " << what << ": " << l.isa;
    if (isa != nullptr) *isa = l.isa;
    return measure(l.fn);
  }
  TESSERA_VLOG(kDispatch) << "peak " << what << ": no instruction for it on this CPU";
  return 0;
}

}  // namespace

const Peak& machine_peak() {
  static const Peak peak = [] {
    Peak p;
    p.f32 = measure_first("f32", kF32, &p.isa);
    p.f64 = measure_first("f64", kF64, nullptr);
    p.bf16 = measure_first("bf16", kBf16, nullptr);
    p.int8 = measure_first("int8", kInt8, nullptr);
    return p;
  }();
  return peak;
}

}  // namespace tessera::cli
