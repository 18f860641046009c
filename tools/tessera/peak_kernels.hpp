// Register-only multiply-add loops that measure the per-core arithmetic peak, one set per
// instruction-set file (compiled with its own flags). Each runs `iters` iterations and returns
// the operations it performed (a fused multiply-add counts as two); the accumulators are
// stored to a volatile sink so the loop cannot be removed. This header stays free of inline
// code so no wide-vector instruction leaks into generic objects.
#pragma once

#include <cstdint>

namespace tessera::cli::detail {

// peak_avx2.cpp (AVX2 + FMA): 12 independent ymm accumulators.
double fma_f32_avx2(std::int64_t iters);
double fma_f64_avx2(std::int64_t iters);

// peak_avx512.cpp (AVX-512 F, BF16, VNNI): 16 independent zmm accumulators.
double fma_f32_avx512(std::int64_t iters);
double fma_f64_avx512(std::int64_t iters);
double dpbf16_avx512(std::int64_t iters);  // vdpbf16ps: 2 bf16 products per f32 lane
double dpbusd_avx512(std::int64_t iters);  // vpdpbusd: 4 u8 x s8 products per i32 lane

}  // namespace tessera::cli::detail
