// Cost of one parallel loop: tessera's pool against OpenMP (libgomp), the usual anchor for
// fork-join overhead. Same thread count, same static partition, same (out-of-line) body.
#include <vector>

#include <benchmark/benchmark.h>
#include <omp.h>

#include <tessera/core/thread_pool.hpp>

namespace {

__attribute__((noinline)) void scale_range(float* x, std::int64_t b, std::int64_t e) {
  for (std::int64_t i = b; i < e; ++i) x[i] *= 1.0000001f;
}

void BM_parallel_for_tessera(benchmark::State& state) {
  std::vector<float> x(static_cast<std::size_t>(state.range(0)), 1.0f);
  auto& pool = tessera::thread_pool();
  for (auto _ : state) {
    pool.parallel_for(0, state.range(0), 1,
                      [&](std::int64_t b, std::int64_t e) { scale_range(x.data(), b, e); });
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = pool.num_threads();
}

void BM_parallel_for_openmp(benchmark::State& state) {
  std::vector<float> x(static_cast<std::size_t>(state.range(0)), 1.0f);
  const int threads = tessera::thread_pool().num_threads();
  const std::int64_t n = state.range(0);
  for (auto _ : state) {
#pragma omp parallel num_threads(threads)
    {
      const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      scale_range(x.data(), n * t / nt, n * (t + 1) / nt);
    }
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = threads;
}

BENCHMARK(BM_parallel_for_tessera)->Arg(1)->Arg(1 << 12)->Arg(1 << 20);
BENCHMARK(BM_parallel_for_openmp)->Arg(1)->Arg(1 << 12)->Arg(1 << 20);

}  // namespace
