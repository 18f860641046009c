// Plain C++ microkernels: the fallback on any CPU, compiled without wide-vector flags.
#include "kernels.hpp"

namespace tessera::blas::kernels {
namespace {

template <int MR, int NR, typename TA, typename TB, typename TC>
void tile(std::int64_t k, const TA* a, const TB* b, TC* c, std::int64_t ldc, TC alpha, TC beta) {
  TC acc[NR][MR] = {};
  for (std::int64_t p = 0; p < k; ++p) {
    for (int j = 0; j < NR; ++j) {
      const TC bj = static_cast<TC>(b[p * NR + j]);
      for (int r = 0; r < MR; ++r) acc[j][r] += static_cast<TC>(a[p * MR + r]) * bj;
    }
  }
  for (int j = 0; j < NR; ++j) {
    TC* cj = c + j * ldc;
    if (beta == TC(0)) {
      for (int r = 0; r < MR; ++r) cj[r] = alpha * acc[j][r];
    } else {
      for (int r = 0; r < MR; ++r) cj[r] = alpha * acc[j][r] + beta * cj[r];
    }
  }
}

}  // namespace

void gemm_f32_generic_8x4(std::int64_t k, const float* a, const float* b, float* c,
                          std::int64_t ldc, float alpha, float beta) {
  tile<8, 4>(k, a, b, c, ldc, alpha, beta);
}

void gemm_f64_generic_4x4(std::int64_t k, const double* a, const double* b, double* c,
                          std::int64_t ldc, double alpha, double beta) {
  tile<4, 4>(k, a, b, c, ldc, alpha, beta);
}

// Integer arithmetic wraps (two's complement): products and sums are formed in uint32.
void gemm_u8s8s32_generic_8x4(std::int64_t k, const std::uint8_t* a, const std::int8_t* b,
                              std::int32_t* c, std::int64_t ldc, std::int32_t alpha,
                              std::int32_t beta) {
  std::uint32_t acc[4][8] = {};
  for (std::int64_t p = 0; p < k; ++p)
    for (int j = 0; j < 4; ++j) {
      const auto bj = static_cast<std::uint32_t>(static_cast<std::int32_t>(b[p * 4 + j]));
      for (int r = 0; r < 8; ++r) acc[j][r] += static_cast<std::uint32_t>(a[p * 8 + r]) * bj;
    }
  const auto ua = static_cast<std::uint32_t>(alpha), ub = static_cast<std::uint32_t>(beta);
  for (int j = 0; j < 4; ++j)
    for (int r = 0; r < 8; ++r) {
      std::uint32_t v = ua * acc[j][r];
      if (beta != 0) v += ub * static_cast<std::uint32_t>(c[r + j * ldc]);
      c[r + j * ldc] = static_cast<std::int32_t>(v);
    }
}

}  // namespace tessera::blas::kernels
