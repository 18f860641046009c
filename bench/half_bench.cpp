// f16/bf16 bulk conversions per ISA path (TESSERA_MAX_ISA levels), in GB/s of f32 moved.
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include <tessera/core/cpu.hpp>
#include <tessera/core/half.hpp>

namespace {

using tessera::Isa;

template <typename Fn>
void run_capped(benchmark::State& state, Isa isa, Fn&& fn) {
  if (isa > tessera::cpu_info().detected_isa) {
    state.SkipWithError("ISA not available on this CPU");
    return;
  }
  tessera::ScopedIsaCap cap(isa);
  for (auto _ : state) fn();
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0) * 6);
}

std::vector<float> random_floats(std::size_t n) {
  std::vector<float> v(n);
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0, 100);
  for (float& x : v) x = d(rng);
  return v;
}

void BM_f32_to_f16(benchmark::State& state, Isa isa) {
  auto src = random_floats(static_cast<std::size_t>(state.range(0)));
  std::vector<tessera::f16> dst(src.size());
  run_capped(state, isa, [&] {
    tessera::convert_f32_to_f16(src.data(), dst.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
  });
}
void BM_f16_to_f32(benchmark::State& state, Isa isa) {
  auto src = random_floats(static_cast<std::size_t>(state.range(0)));
  std::vector<tessera::f16> h(src.size());
  tessera::convert_f32_to_f16(src.data(), h.data(), src.size());
  run_capped(state, isa, [&] {
    tessera::convert_f16_to_f32(h.data(), src.data(), src.size());
    benchmark::DoNotOptimize(src.data());
  });
}
void BM_f32_to_bf16(benchmark::State& state, Isa isa) {
  auto src = random_floats(static_cast<std::size_t>(state.range(0)));
  std::vector<tessera::bf16> dst(src.size());
  run_capped(state, isa, [&] {
    tessera::convert_f32_to_bf16(src.data(), dst.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
  });
}

constexpr std::int64_t kN = 1 << 16;  // 256 KiB of f32: stays in L2
BENCHMARK_CAPTURE(BM_f32_to_f16, generic, Isa::kGeneric)->Arg(kN);
BENCHMARK_CAPTURE(BM_f32_to_f16, avx2, Isa::kAvx2)->Arg(kN);
BENCHMARK_CAPTURE(BM_f32_to_f16, avx512, Isa::kAvx512)->Arg(kN);
BENCHMARK_CAPTURE(BM_f16_to_f32, generic, Isa::kGeneric)->Arg(kN);
BENCHMARK_CAPTURE(BM_f16_to_f32, avx2, Isa::kAvx2)->Arg(kN);
BENCHMARK_CAPTURE(BM_f16_to_f32, avx512, Isa::kAvx512)->Arg(kN);
BENCHMARK_CAPTURE(BM_f32_to_bf16, generic, Isa::kGeneric)->Arg(kN);
BENCHMARK_CAPTURE(BM_f32_to_bf16, avx2, Isa::kAvx2)->Arg(kN);
BENCHMARK_CAPTURE(BM_f32_to_bf16, avx512, Isa::kAvx512)->Arg(kN);

}  // namespace
