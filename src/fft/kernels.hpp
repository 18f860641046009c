// The per-ISA passes of the 1-D complex FFT (kernels_body.inc, compiled once per ISA by
// kernels_generic.cpp, kernels_avx2.cpp and kernels_avx512.cpp).
//
// A pass is one radix-r step of the Stockham autosort algorithm (decimation in frequency).
// With n_cur = r * m points left per sub-sequence and s sub-sequences interleaved (stride s):
//   for p < m, q < s:  a_j = x[q + s (p + j m)]                       j < r
//                      y[q + s (r p + k)] = w^(p k) * sum_j a_j exp(sign 2 pi i j k / r)
//   with w = exp(sign 2 pi i / n_cur). After the last pass the output is in natural order.
// Two shapes of vector loop:
//   q-passes put W consecutive q in a vector (any s; a masked tail when W does not divide s),
//     every butterfly of a vector sharing one twiddle per k;
//   lane passes serve s < W with W % s == 0 (the first passes of a transform): a vector holds
//     W / s consecutive p of all s sub-sequences, loads stay contiguous, twiddles come from a
//     per-lane table, and the r outputs go through a small transpose to their places.
// Short lengths on a single line skip the passes: a codelet holds the whole transform
// in registers (one radix-J step down the vectors, twiddles, W x W transposes, one radix-W
// step), loads and stores each element once and runs no loop. Powers of two up to 16 times
// that run as rows of codelets: one radix-N1 sweep into N1 rows, a codelet per row, and one
// sweep of W x W transposes back to natural order (three sweeps over the data where the
// passes take four to five).
#pragma once

#include <complex>
#include <cstdint>
#include <utility>

#include "tessera/core/cpu.hpp"

namespace tessera::fft::detail {

template <typename R>
using cx = std::complex<R>;

// Radices with their own butterfly; kGenericOdd is any odd radix up to kMaxRadix.
enum RadixKind : int { kR2, kR3, kR4, kR5, kR7, kR8, kR11, kR13, kGenericOdd, kRadixKinds };
inline constexpr int kMaxRadix = 63;
int radix_kind(int r);  // kRadixKinds when r has no butterfly

template <typename R>
struct PassArgs {
  int radix = 0;
  std::int64_t m = 0;  // butterflies per sub-sequence
  std::int64_t s = 0;  // interleaved sub-sequences
  // Twiddles w^(p k): q-passes split into (re, re) and (im, im) pairs for cmul_split,
  const cx<R>* tw = nullptr;   // tw[2 (p (r - 1) + k - 1) + {0, 1}]
  const cx<R>* twl = nullptr;  // lane passes: twl[(k - 1) m s + p s + q], interleaved
  const R* cosv = nullptr;     // odd radices: cos(2 pi t / r), t < r
  const R* sinv = nullptr;     // and sin(2 pi t / r)
};

template <typename R>
using PassFn = void (*)(const PassArgs<R>& a, const cx<R>* x, cx<R>* y);

// A whole transform of J * W points in registers (kernels_body.inc, codelet).
template <typename R>
using CodeletFn = void (*)(const cx<R>* x, cx<R>* y, const cx<R>* tw);
inline constexpr int kMaxCodeletLog2J = 4;  // J = 2 ... 16
// A longer power of two n = N1 J W as N1 codelets of J W points between a radix-N1 sweep
// into scratch t (n elements) and a transposing sweep back (kernels_body.inc, rows_codelet);
// tw: the radix-N1 sweep's twiddles, ctw: the codelet's.
template <typename R>
using RowsFn = void (*)(const cx<R>* x, cx<R>* y, cx<R>* t, const cx<R>* tw, const cx<R>* ctw);

template <typename R>
struct Kernels {
  int lanes = 1;  // complex elements per vector (W)
  const char* isa = "generic";
  PassFn<R> q[kRadixKinds][2] = {};  // [radix kind][0 forward, 1 inverse]
  PassFn<R> lane[kRadixKinds][2] = {};
  // [J]: J <= 16 made of 2, 3, 5 and 7; null where J < lanes
  CodeletFn<R> codelet[(1 << kMaxCodeletLog2J) + 1][2] = {};
  // [log2 N1][log2 J]; null where N1 or J < lanes
  RowsFn<R> rows[kMaxCodeletLog2J + 1][kMaxCodeletLog2J + 1][2] = {};
  // y[i] = x[i] * c (contiguous, n elements); the final scaling of a transform.
  void (*scale)(const cx<R>* x, cx<R>* y, std::int64_t n, R c) = nullptr;
  // The real transforms' post- and pre-processing of a contiguous half-length line
  // (kernels_body.inc, r2c_post / c2r_pre; tw[k] = exp(-2 pi i k / 2h), k <= h).
  void (*r2c_post)(const cx<R>* z, cx<R>* y, std::int64_t h, const cx<R>* tw, R c) = nullptr;
  void (*c2r_pre)(const cx<R>* x, cx<R>* z, std::int64_t h, const cx<R>* tw) = nullptr;
};

template <typename R>
const Kernels<R>& kernels(Isa isa);  // the best table at or below isa

// Per-ISA tables (defined in the ISA files).
const Kernels<float>& kernels_f32_generic();
const Kernels<double>& kernels_f64_generic();
const Kernels<float>& kernels_f32_avx2();
const Kernels<double>& kernels_f64_avx2();
const Kernels<float>& kernels_f32_avx512();
const Kernels<double>& kernels_f64_avx512();

}  // namespace tessera::fft::detail
