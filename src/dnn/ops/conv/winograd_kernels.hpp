// Winograd convolution kernels, one table per instruction set (winograd_avx512.cpp,
// winograd_avx2.cpp, winograd_generic.cpp; the transforms are written once in
// winograd_body.inc). ISA files include only this header: declarations, no inline code, so
// nothing compiled with wide-vector flags can leak into generic objects.
//
// Data layouts (all f32, channel counts padded to kWinoPad with zeros where noted):
// - staged input strip: [rows][cols][cp] (channels inner, cp a multiple of kWinoPad, padding
//   rows, columns and channels zero), read by the input transform;
// - V: per transform position p, [tiles][vs] (a tile's transformed input channels);
// - U: per position, [c][width] (the transformed filters of one panel of <= 32 output
//   channels, zero past the real ones);
// - M: per position, [tiles][width] (a tile's transformed outputs of that panel).
#pragma once

#include <cstdint>

namespace tessera::dnn::conv {

inline constexpr std::int64_t kWinoPad = 16;    // channel padding of V, U and M rows
inline constexpr std::int64_t kWinoPanel = 32;  // output channels per panel

// The activation an output transform applies itself (others are applied by the caller).
enum class WinoAct : int { kNone, kRelu, kLeakyRelu, kClip };

// Destination of one output tile: up to m x m pixels at y (row stride, pixel stride), channel
// j of the chunk at y[j]. bias (per channel of the chunk) and residual (laid out like y) may
// be null. Only `rows` x `cols` pixels are written.
struct WinoOut {
  float* y;
  const float* residual;
  const float* bias;
  std::int64_t row_stride, pixel_stride;
  int rows, cols;
  WinoAct act;
  float alpha, beta;  // leaky relu slope; clip bounds [alpha, beta]
};

// One tile's input transform B^T d B over cp channels (a multiple of kWinoPad): d at s
// (pixel stride `col`, row stride `row`), result position p channel c at v[p * pos + c].
using WinoInputFn = void (*)(const float* s, std::int64_t col, std::int64_t row, std::int64_t cp,
                             float* v, std::int64_t pos);
// One tile's output transform A^T m A over n channels (m rows hold a multiple of kWinoPad
// readable values): position p channel j at m[p * pos + j], then bias, residual, activation.
using WinoOutputFn = void (*)(const float* m, std::int64_t pos, std::int64_t n, const WinoOut& o);
// Weight transform G g G^T of `n` filters (n a multiple of kWinoPad): tap t (row-major 3x3) of
// filter j at g[t * ld + j]; position p filter j goes to u[p * pos + j].
using WinoWeightsFn = void (*)(const float* g, std::int64_t ld, std::int64_t n, float* u,
                               std::int64_t pos);
// m[t][j] (+)= sum over c < C, in order, of v[t][c] * u[c][j], for t < T and j < width (16
// or 32; u rows are `width` apart), starting from 0 or (accumulate) from m. Each m element is
// one chain of multiply-adds over c, continued exactly across calls that split c, so the
// result does not depend on how rows, columns or c are cut.
using WinoGemmFn = void (*)(std::int64_t T, std::int64_t C, const float* v, std::int64_t vs,
                            const float* u, std::int64_t width, float* m, std::int64_t ms,
                            bool accumulate);
// Backward-weights: m[r][j] (+)= sum over t < T, in order, of a[t * lda + r] * b[t * ldb + j],
// for r < rows and j < width (16 or 32), starting from 0 or (accumulate) from m; the same
// one-chain-per-element rule as WinoGemmFn, so a split of t continues exactly.
using WinoGemmAtFn = void (*)(std::int64_t rows, std::int64_t T, const float* a, std::int64_t lda,
                              const float* b, std::int64_t ldb, std::int64_t width, float* m,
                              std::int64_t ms, bool accumulate);
// Backward-weights: G^T m G of n filters (n a multiple of kWinoPad), position p filter j at
// m[p * pos + j]; tap t (row-major 3x3) of filter j goes to g[t * ld + j].
using WinoWgradFn = void (*)(const float* m, std::int64_t pos, std::int64_t n, float* g,
                             std::int64_t ld);
// dst[j * ds + i] = src[i * ss + j] for i < rows, j < cols.
using WinoTransposeFn = void (*)(std::int64_t rows, std::int64_t cols, const float* src,
                                 std::int64_t ss, float* dst, std::int64_t ds);

struct WinoKernels {
  const char* isa;       // "avx512", "avx2", "generic"
  WinoInputFn input[2];  // [0] F(2x2,3x3), [1] F(4x4,3x3)
  WinoOutputFn output[2];
  WinoWeightsFn weights[2];
  WinoGemmFn gemm;
  WinoTransposeFn transpose;
  // Backward-weights: A dy A^T of an m x m output-gradient tile (a WinoInputFn over m x m
  // pixels), G^T m G, and the GEMM with reduction-major multipliers.
  WinoInputFn grad[2];
  WinoWgradFn wgrad[2];
  WinoGemmAtFn gemm_at;
};

extern const WinoKernels kWinoAvx512;
extern const WinoKernels kWinoAvx2;
extern const WinoKernels kWinoGeneric;

}  // namespace tessera::dnn::conv
