// GEMM microkernels: one register-blocked kernel per (element types, ISA). A kernel computes
// one MR x NR tile of C from packed panels:
//
//   C[0:MR, 0:NR] = alpha * sum_p A[:, p] * B[p, :] + beta * C     (C column-major, ldc)
//
// with beta == 0 meaning C is not read (NaN in C never propagates). `k` counts elements of
// the reduction and is a multiple of the kernel's k-unit KU (packing pads with zeros).
// Packed layouts (u = KU):
//   A micro-panel: a[(p / u) * MR * u + r * u + (p % u)]   for row r < MR, p < k
//   B micro-panel: b[(p / u) * NR * u + j * u + (p % u)]   for column j < NR
// KU is 1 for f32/f64, 2 for bf16 (pairs feed vdpbf16ps), 4 for u8 x s8 (quads feed vpdpbusd).
#pragma once

#include <cstdint>

#include "tessera/core/cpu.hpp"

namespace tessera::blas::kernels {

template <typename TA, typename TB, typename TC>
using GemmUkrFn = void (*)(std::int64_t k, const TA* a, const TB* b, TC* c, std::int64_t ldc,
                           TC alpha, TC beta);

template <typename TA, typename TB, typename TC>
struct GemmUkr {
  const char* name;  // e.g. "gemm_f32_avx512_32x12"
  int mr, nr, ku;
  GemmUkrFn<TA, TB, TC> fn;
  // The CPU features the kernel needs (all must be usable).
  CpuFeature need[2];
  int need_count;
};

// ---- generic (plain C++) -------------------------------------------------------------
void gemm_f32_generic_8x4(std::int64_t, const float*, const float*, float*, std::int64_t, float,
                          float);
void gemm_f64_generic_4x4(std::int64_t, const double*, const double*, double*, std::int64_t,
                          double, double);
void gemm_u8s8s32_generic_8x4(std::int64_t, const std::uint8_t*, const std::int8_t*,
                              std::int32_t*, std::int64_t, std::int32_t, std::int32_t);

// ---- AVX2 + FMA -----------------------------------------------------------------------
void gemm_f32_avx2_16x6(std::int64_t, const float*, const float*, float*, std::int64_t, float,
                        float);
void gemm_f64_avx2_8x6(std::int64_t, const double*, const double*, double*, std::int64_t, double,
                       double);

// ---- AVX-512 (F, BW, DQ, VL; BF16 and VNNI for the low-precision kernels) --------------
void gemm_f32_avx512_32x12(std::int64_t, const float*, const float*, float*, std::int64_t, float,
                           float);
void gemm_f64_avx512_16x12(std::int64_t, const double*, const double*, double*, std::int64_t,
                           double, double);
void gemm_bf16_avx512bf16_32x12(std::int64_t, const std::uint16_t*, const std::uint16_t*, float*,
                                std::int64_t, float, float);
void gemm_u8s8s32_avx512vnni_32x12(std::int64_t, const std::uint8_t*, const std::int8_t*,
                                   std::int32_t*, std::int64_t, std::int32_t, std::int32_t);

// Ordered lists, best first; the first whose features are usable wins (see select_ukr).
inline constexpr GemmUkr<float, float, float> kGemmF32[] = {
    {"gemm_f32_avx512_32x12", 32, 12, 1, gemm_f32_avx512_32x12, {CpuFeature::kAvx512f}, 1},
    {"gemm_f32_avx2_16x6", 16, 6, 1, gemm_f32_avx2_16x6, {CpuFeature::kAvx2, CpuFeature::kFma}, 2},
    {"gemm_f32_generic_8x4", 8, 4, 1, gemm_f32_generic_8x4, {}, 0},
};
inline constexpr GemmUkr<double, double, double> kGemmF64[] = {
    {"gemm_f64_avx512_16x12", 16, 12, 1, gemm_f64_avx512_16x12, {CpuFeature::kAvx512f}, 1},
    {"gemm_f64_avx2_8x6", 8, 6, 1, gemm_f64_avx2_8x6, {CpuFeature::kAvx2, CpuFeature::kFma}, 2},
    {"gemm_f64_generic_4x4", 4, 4, 1, gemm_f64_generic_4x4, {}, 0},
};
// bf16 x bf16 -> f32. Without AVX512-BF16 the inputs are widened to f32 while packing and the
// f32 list runs instead (see gemm_lowp.cpp).
inline constexpr GemmUkr<std::uint16_t, std::uint16_t, float> kGemmBf16[] = {
    {"gemm_bf16_avx512bf16_32x12", 32, 12, 2, gemm_bf16_avx512bf16_32x12,
     {CpuFeature::kAvx512bf16}, 1},
};
inline constexpr GemmUkr<std::uint8_t, std::int8_t, std::int32_t> kGemmU8S8[] = {
    {"gemm_u8s8s32_avx512vnni_32x12", 32, 12, 4, gemm_u8s8s32_avx512vnni_32x12,
     {CpuFeature::kAvx512vnni}, 1},
    {"gemm_u8s8s32_generic_8x4", 8, 4, 1, gemm_u8s8s32_generic_8x4, {}, 0},
};

}  // namespace tessera::blas::kernels

namespace tessera::blas::kernels {

// Small-matrix path: C = alpha*A*B + beta*C straight from the caller's matrices, no packing
// (A column-major with columns contiguous; B element (p, j) at b[p * rsb + j * csb]). Row
// tails use masked loads and stores. For problems that fit in cache, where packing would
// cost as much as the arithmetic.
template <typename T>
using GemmSmallFn = void (*)(std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                             const T* a, std::int64_t lda, const T* b, std::int64_t rsb,
                             std::int64_t csb, T beta, T* c, std::int64_t ldc);

void gemm_small_f32_avx512(std::int64_t, std::int64_t, std::int64_t, float, const float*,
                           std::int64_t, const float*, std::int64_t, std::int64_t, float, float*,
                           std::int64_t);
void gemm_small_f64_avx512(std::int64_t, std::int64_t, std::int64_t, double, const double*,
                           std::int64_t, const double*, std::int64_t, std::int64_t, double,
                           double*, std::int64_t);

template <typename T>
struct GemmSmall {
  const char* name;
  GemmSmallFn<T> fn;
  int mb, nb;  // tile: rows x columns (threads split at multiples of these)
  CpuFeature need;
};
inline constexpr GemmSmall<float> kGemmSmallF32[] = {
    {"gemm_small_f32_avx512", gemm_small_f32_avx512, 32, 12, CpuFeature::kAvx512f},
};
inline constexpr GemmSmall<double> kGemmSmallF64[] = {
    {"gemm_small_f64_avx512", gemm_small_f64_avx512, 16, 12, CpuFeature::kAvx512f},
};

}  // namespace tessera::blas::kernels
