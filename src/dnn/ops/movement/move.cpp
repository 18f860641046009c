// The move engine: the ordered list (avx512, avx2, generic walks, then the reference) that
// copies and converts one box of elements between two strided views (move.hpp).
//
// The fast walks first put the box in y's memory order: dims of 1 dropped, dims where y steps
// backwards flipped (both views), the rest ordered by y's stride and merged where both views
// step through neighbours as one (nest.hpp). The order of a copy is free, so this never changes
// a result. Then, by the innermost (y-contiguous) dim:
// - rows: x contiguous or broadcast along it too: converted (or copied, streamed past the
//   last-level cache) a row at a time, short streamed rows by runs of y's second dim;
// - narrow: pixels of a few elements split into planes, or planes merged into pixels;
// - tiles: x contiguous along another dim instead (a transpose): 2-D tiles of the two dims,
//   transposed in registers, so both sides are read and written by whole cache lines;
// - strided: anything else, gathered into a block, converted, scattered.
// Every element is written by exactly one thread, so any thread count gives the same bits.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <type_traits>

#include <tessera/core/float8.hpp>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "../eltwise/kernels.hpp"
#include "kernels.hpp"
#include "move.hpp"

namespace tessera::dnn::detail {
namespace {
#include "convert.inc"

namespace mk = move_kernels;
namespace ek = elt_kernels;
using i64 = std::int64_t;

constexpr i64 kBlock = 1024;     // elements staged per conversion step
constexpr i64 kSegment = 65536;  // elements of a row per work unit
constexpr i64 kGrain = 65536;    // elements per thread chunk, at least

i64 esize(DType t) { return static_cast<i64>(dtype_size(t)); }
int type_index(DType t) {
  switch (t) {
    case DType::kBool: return mk::kBool;
    case DType::kI8: return mk::kI8;
    case DType::kU8: return mk::kU8;
    case DType::kI32: return mk::kI32;
    case DType::kI64: return mk::kI64;
    case DType::kF32: return mk::kF32;
    case DType::kF64: return mk::kF64;
    default: return -1;  // f16, bf16: staged through f32
  }
}

// ---- element conversion ---------------------------------------------------------------------
template <typename T>
T get(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void put(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
// An integer onto a `bits`-wide two's-complement (sign-extended into a byte) or unsigned type,
// modulo 2^bits.
std::int8_t wrap_signed(std::int64_t v, int bits) {
  const auto m = static_cast<std::int64_t>(static_cast<std::uint64_t>(v) & ((1u << bits) - 1));
  return static_cast<std::int8_t>(m >= (1 << (bits - 1)) ? m - (1 << bits) : m);
}
std::uint8_t wrap_unsigned(std::int64_t v, int bits) { return static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) & ((1u << bits) - 1)); }

template <typename From>
void store_as(From v, DType to, void* d) {
  switch (to) {
    case DType::kBool: put(d, convert_value<bool>(v)); break;
    case DType::kI8: put(d, convert_value<std::int8_t>(v)); break;
    case DType::kU8: put(d, convert_value<std::uint8_t>(v)); break;
    case DType::kI32: put(d, convert_value<std::int32_t>(v)); break;
    case DType::kI64: put(d, convert_value<std::int64_t>(v)); break;
    case DType::kF16: put(d, f32_to_f16_bits(to_half_source(v))); break;
    case DType::kBF16: put(d, f32_to_bf16_bits(to_half_source(v))); break;
    case DType::kF32: put(d, convert_value<float>(v)); break;
    case DType::kF64: put(d, convert_value<double>(v)); break;
    case DType::kI16: put(d, convert_value<std::int16_t>(v)); break;
    case DType::kU16: put(d, convert_value<std::uint16_t>(v)); break;
    case DType::kU32: put(d, convert_value<std::uint32_t>(v)); break;
    case DType::kU64: put(d, convert_value<std::uint64_t>(v)); break;
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ: put(d, f32_to_f8_bits(to_half_source(v), *float8_of(to))); break;  // saturating
    // Floats to the sub-byte integers truncate and wrap, as ml_dtypes (ONNX's reference) does.
    case DType::kI4: put(d, wrap_signed(convert_value<std::int64_t>(v), 4)); break;
    case DType::kI2: put(d, wrap_signed(convert_value<std::int64_t>(v), 2)); break;
    case DType::kU4: put(d, wrap_unsigned(convert_value<std::int64_t>(v), 4)); break;
    case DType::kU2: put(d, wrap_unsigned(convert_value<std::int64_t>(v), 2)); break;
    case DType::kF4E2M1: put(d, f32_to_f4e2m1_bits(to_half_source(v))); break;
    case DType::kF8E8M0: put(d, f32_to_e8m0_bits(to_half_source(v))); break;  // saturating, rounding up
    default: break;
  }
}

// n contiguous elements of xt at s into yt at d (d may be s when the sizes agree); `stage`
// holds kBlock floats.
void convert_row(const mk::Kernels& K, DType xt, const void* s, DType yt, void* d, i64 n, float* stage) {
  if (xt == yt) {
    if (s != d) std::memmove(d, s, static_cast<std::size_t>(n * esize(xt)));
    return;
  }
  const int xi = type_index(xt), yi = type_index(yt);
  if (xi >= 0 && yi >= 0) {
    K.convert[xi][yi](n, s, d);
    return;
  }
  const auto no_kernels = [](DType t) {
    return t == DType::kI16 || t == DType::kU16 || t == DType::kU32 || t == DType::kU64 || t == DType::kI4 ||
           t == DType::kU4 || t == DType::kI2 || t == DType::kU2 || is_small_float(t);
  };
  if (no_kernels(xt) || no_kernels(yt)) {
    // The rest of ONNX's integer types have no vector kernels: element by element.
    for (i64 i = 0; i < n; ++i) convert_element(xt, at_elem(s, xt, i), yt, at_elem(d, yt, i));
    return;
  }
  const bool odd = yi < 0 && (xt == DType::kI32 || xt == DType::kI64 || xt == DType::kF64);
  for (i64 i = 0; i < n; i += kBlock) {
    const i64 nb = std::min(kBlock, n - i);
    const void* si = at_elem(s, xt, i);
    void* di = at_elem(d, yt, i);
    const float* f = stage;
    if (xt == DType::kF16) convert_f16_to_f32(static_cast<const f16*>(si), stage, static_cast<std::size_t>(nb));
    else if (xt == DType::kBF16) convert_bf16_to_f32(static_cast<const bf16*>(si), stage, static_cast<std::size_t>(nb));
    else if (xt == DType::kF32) f = static_cast<const float*>(si);
    else if (odd) K.odd_f32[xi](nb, si, stage);  // not exact in f32: rounded to odd, then once to the half type
    else K.convert[xi][mk::kF32](nb, si, stage);
    if (yt == DType::kF16) convert_f32_to_f16(f, static_cast<f16*>(di), static_cast<std::size_t>(nb));
    else if (yt == DType::kBF16) convert_f32_to_bf16(f, static_cast<bf16*>(di), static_cast<std::size_t>(nb));
    else K.convert[mk::kF32][yi](nb, f, di);
  }
}

// n elements of `bytes` each, strided, to or from a contiguous block.
void gather(const void* src, i64 stride, i64 n, i64 bytes, void* dst) {
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  switch (bytes) {
    case 1: for (i64 i = 0; i < n; ++i) d[i] = s[i * stride]; break;
    case 2: for (i64 i = 0; i < n; ++i) std::memcpy(d + 2 * i, s + 2 * i * stride, 2); break;
    case 4: for (i64 i = 0; i < n; ++i) std::memcpy(d + 4 * i, s + 4 * i * stride, 4); break;
    default: for (i64 i = 0; i < n; ++i) std::memcpy(d + 8 * i, s + 8 * i * stride, 8); break;
  }
}
void scatter(const void* src, i64 n, i64 bytes, void* dst, i64 stride) {
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  switch (bytes) {
    case 1: for (i64 i = 0; i < n; ++i) d[i * stride] = s[i]; break;
    case 2: for (i64 i = 0; i < n; ++i) std::memcpy(d + 2 * i * stride, s + 2 * i, 2); break;
    case 4: for (i64 i = 0; i < n; ++i) std::memcpy(d + 4 * i * stride, s + 4 * i, 4); break;
    default: for (i64 i = 0; i < n; ++i) std::memcpy(d + 8 * i * stride, s + 8 * i, 8); break;
  }
}
// d[0, n) = one element (already at d[0]), by doubling copies.
void replicate(void* d, i64 n, i64 bytes) {
  char* p = static_cast<char*>(d);
  for (i64 have = 1; have < n;) {
    const i64 k = std::min(have, n - have);
    std::memcpy(p + have * bytes, p, static_cast<std::size_t>(k * bytes));
    have += k;
  }
}

// ---- the fast walks -------------------------------------------------------------------------
// Edge of a transposed tile in elements. For the line kernels, rows of four cache lines (256
// bytes: against 64 x 64 tiles, f16 128 x 128 ran at 0.66 -> 0.73 of the copy, f64 32 x 32 at
// 0.65 -> 0.73). Else 64 (a tile of 8 to 32 KiB for 2- to 8-byte elements; 128 x 128 f16
// tiles, the whole L1, were 25% slower through the 256-bit kernel and its stage), 256 for bytes.
i64 tile_edge(i64 bytes, bool lines) { return lines ? 256 / bytes : bytes == 1 ? 256 : 64; }

// The box in y's memory order (see the top of the file), merged.
Nest y_ordered_nest(const Move& m, const void*& x, void*& y) {
  std::array<int, kMaxNestRank> order{};
  std::array<i64, kMaxNestRank> dims{}, xs{}, ys{};
  int r = 0;
  x = m.x;
  y = m.y;
  for (int i = 0; i < m.rank; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (m.dims[k] == 1) continue;
    i64 sx = m.xs[k], sy = m.ys[k];
    if (sy < 0) {
      x = at_elem(x, m.xt, (m.dims[k] - 1) * sx);
      y = at_elem(y, m.yt, (m.dims[k] - 1) * sy);
      sx = -sx;
      sy = -sy;
    }
    const auto j = static_cast<std::size_t>(r++);
    dims[j] = m.dims[k];
    xs[j] = sx;
    ys[j] = sy;
    order[j] = static_cast<int>(j);
  }
  std::stable_sort(order.begin(), order.begin() + r, [&](int a, int b) {
    return ys[static_cast<std::size_t>(a)] > ys[static_cast<std::size_t>(b)];
  });
  std::array<i64, kMaxNestRank> od{}, oxs{}, oys{};
  for (int i = 0; i < r; ++i) {
    const auto k = static_cast<std::size_t>(order[static_cast<std::size_t>(i)]);
    od[static_cast<std::size_t>(i)] = dims[k];
    oxs[static_cast<std::size_t>(i)] = xs[k];
    oys[static_cast<std::size_t>(i)] = ys[k];
  }
  const i64* strides[2] = {oxs.data(), oys.data()};
  return make_nest(r, od.data(), std::span<const i64* const>(strides, 2));
}

// The dims of a nest other than dim `skip` and the inner one, with x's and y's strides: the
// outer index of a work unit, and its element offsets.
struct Outer {
  std::array<i64, kMaxNestRank> dims{}, xs{}, ys{};
  int rank = 0;
  Outer(const Nest& n, int skip) {
    for (int i = 0; i + 1 < n.rank; ++i) {
      if (i == skip) continue;
      const auto j = static_cast<std::size_t>(rank++);
      dims[j] = n.dims[static_cast<std::size_t>(i)];
      xs[j] = n.strides[0][static_cast<std::size_t>(i)];
      ys[j] = n.strides[1][static_cast<std::size_t>(i)];
    }
  }
  void at(i64 o, i64& ox, i64& oy) const {  // row-major index o
    ox = oy = 0;
    for (int i = rank - 1; i >= 0; --i) {
      const auto j = static_cast<std::size_t>(i);
      const i64 idx = o % dims[j];
      o /= dims[j];
      ox += idx * xs[j];
      oy += idx * ys[j];
    }
  }
};

// n short rows of `bytes` (at most 1 KiB), `stride` bytes apart in x, to y back to back through
// the stream kernel: rows that fill y's lines whole (multiples of 64 bytes, y aligned) straight
// from x, others copied back to back into an L1 stage first, so that no line of y is written
// half plain, half streamed. The rows of `pre` (the same stride; a later unit's) are prefetched
// into L1 first (an inline prefetcht0: GCC drops loops of __builtin_prefetch alone).
template <const ek::Kernels* kE>
void stream_rows(i64 n, i64 bytes, const char* x, i64 stride, char* y, const char* pre) {
  for (i64 r = 0; r < n; ++r)
    for (i64 b = 0; b < bytes; b += 64) {
#if defined(__x86_64__)
      asm volatile("prefetcht0 %0" : : "m"(pre[r * stride + b]));
#else
      __builtin_prefetch(pre + r * stride + b, 0, 3);
#endif
    }
  if (bytes % 64 == 0 && reinterpret_cast<std::uintptr_t>(y) % 64 == 0) {
    for (i64 r = 0; r < n; ++r) kE->stream(y + r * bytes, x + r * stride, bytes);
    return;
  }
  constexpr i64 kStage = 4096;
  alignas(64) char stage[kStage];
  const i64 per = std::max<i64>(1, kStage / bytes);
  for (i64 r0 = 0; r0 < n; r0 += per) {
    const i64 k = std::min(per, n - r0);
    for (i64 r = 0; r < k; ++r) std::memcpy(stage + r * bytes, x + (r0 + r) * stride, static_cast<std::size_t>(bytes));
    kE->stream(y + r0 * bytes, stage, k * bytes);
  }
}

// Narrow transposes (see move_run): pixels of C elements split into C planes (`split`: x
// contiguous along dim k of extent C, y along the pixels, the inner dim) or planes merged into
// pixels (y contiguous along the inner dim of extent C, x along the pixel dim k). A unit is an
// outer index and a run of pixels; past the last-level cache each block of pixels goes through
// L1 and streams out.
template <const mk::Kernels* kK, const ek::Kernels* kE>
Status narrow_run(Handle& h, const Move& m, const Nest& n, const void* x0, void* y0, int k, bool split) {
  const auto ku = static_cast<std::size_t>(k);
  const i64 L = n.inner(), e = esize(m.xt);
  const i64 C = split ? n.dims[ku] : L, P = split ? L : n.dims[ku];
  const i64 ld = split ? n.strides[1][ku] : n.inner_stride(0);  // between planes: y's or x's
  const mk::NarrowFn fn = (split ? kK->deinterleave : kK->interleave)[std::countr_zero(static_cast<unsigned>(e))][C];
  const Outer outer(n, k);
  constexpr i64 kRun = 16384, kStaged = 512;  // pixels per unit; per streamed block (<= 32 KiB)
  const i64 runs = (P + kRun - 1) / kRun, total = m.numel();
  const bool stream = stream_output(total * e);
  parallel_for(h, 0, total / (C * P) * runs, 1, [&](i64 u0, i64 u1) {
    std::unique_ptr<unsigned char[]> tmp;
    if (stream) tmp = std::make_unique_for_overwrite<unsigned char[]>(static_cast<std::size_t>(kStaged * C * e));
    for (i64 u = u0; u < u1; ++u) {
      i64 ox, oy;
      outer.at(u / runs, ox, oy);
      const i64 p0 = u % runs * kRun, p1 = std::min(P, p0 + kRun);
      // Pixel p: x at p * C (split) or p, y at p or p * C.
      auto x_at = [&](i64 p) { return at_elem(x0, m.xt, ox + p * (split ? C : 1)); };
      auto y_at = [&](i64 p) { return at_elem(y0, m.yt, oy + p * (split ? 1 : C)); };
      if (!stream) {
        fn(p1 - p0, x_at(p0), y_at(p0), ld);
        continue;
      }
      for (i64 p = p0; p < p1; p += kStaged) {
        const i64 nb = std::min(kStaged, p1 - p);
        if (split) {
          fn(nb, x_at(p), tmp.get(), nb);
          for (i64 c = 0; c < C; ++c) kE->stream(at_elem(y_at(p), m.yt, c * ld), tmp.get() + c * nb * e, nb * e);
        } else {
          fn(nb, x_at(p), tmp.get(), ld);
          kE->stream(y_at(p), tmp.get(), nb * C * e);
        }
      }
    }
    if (stream) kE->fence();
  });
  return Status::ok();
}

template <const mk::Kernels* kK, const ek::Kernels* kE>
Status move_run(Handle& h, const Move& m) {
  const i64 total = m.numel();
  if (total == 0) return Status::ok();
  const void* x0;
  void* y0;
  const Nest n = y_ordered_nest(m, x0, y0);
  const int R = n.rank;
  const i64 L = n.inner(), xsL = n.inner_stride(0), ysL = n.inner_stride(1);
  const i64 xe = esize(m.xt), ye = esize(m.yt);
  const bool same = m.xt == m.yt;

  // Narrow transposes: pixels of 2 to kMaxNarrow elements to planes, or planes to pixels of
  // under 32 bytes (wider ones go faster through the tiles' 8 x 8 kernels: f32 [64,8,224,224]
  // to NHWC, 0.84-0.93 of the copy by tiles, 0.76-0.82 interleaved).
  if (same && ysL == 1 && xsL > 1) {
    int k = -1;
    bool split = false;
    for (int i = 0; i + 1 < R; ++i) {
      const auto j = static_cast<std::size_t>(i);
      if (n.strides[0][j] != 1) continue;
      if (xsL == n.dims[j] && xsL <= mk::kMaxNarrow) {  // x's pixels packed, y's planes
        k = i;
        split = true;
      } else if (n.strides[1][j] == L && L >= 2 && L <= mk::kMaxNarrow && L * ye < 32) {  // y's pixels packed
        k = i;
        split = false;
      }
    }
    if (k >= 0) return narrow_run<kK, kE>(h, m, n, x0, y0, k, split);
  }

  // Tiles: y contiguous along the inner dim, x along dim k instead.
  int k = -1;
  if (ysL == 1 && xsL != 0 && xsL != 1)
    for (int i = 0; i + 1 < R; ++i)
      if (n.strides[0][static_cast<std::size_t>(i)] == 1 && n.dims[static_cast<std::size_t>(i)] >= 4) k = i;
  if (k >= 0) {
    const int lg = std::countr_zero(static_cast<unsigned>(xe));
    // Blocks of whole 64-byte rows and columns, where the ISA has them: x's lines are read
    // whole (staged only where they are not aligned), y's written whole (streamed straight
    // from the registers).
    const mk::TransposeLinesFn lines = same ? kK->transpose_lines[lg] : nullptr;
    const i64 tb = tile_edge(xe, lines != nullptr);
    const auto ku = static_cast<std::size_t>(k);
    const i64 K = n.dims[ku], ysK = n.strides[1][ku];
    const Outer outer(n, k);
    // A unit is a block of up to kSuper x kSuper tiles, so the pages it touches on both sides
    // stay in the TLB (a tile's rows are on as many pages when the rows are long). Its tiles
    // go along x's rows first (tk fastest): the next tile's rows are the current one's, a tile
    // further on, where the tile below would share its columns' offsets in every page. With row
    // strides of a power of two the tile below then falls in the same L2 sets (only the page
    // bits vary), and prefetching it evicted the tile being read: f32 8192^2 at 2 threads 0.67
    // -> 0.86 of the copy, f16 0.50 -> 0.56, u8 0.46 -> 0.53; others the same or faster (f32
    // 3136 x 4096 0.69 -> 0.84 at 1 thread; in-process A/B on AVX2).
    constexpr i64 kSuper = 8;
    const i64 nk = (K + tb - 1) / tb, nl = (L + tb - 1) / tb;
    const i64 sk = (nk + kSuper - 1) / kSuper, sl = (nl + kSuper - 1) / kSuper;
    const i64 units = total / (K * L) * sk * sl;
    // Outputs past the last-level cache: each tile transposed into L1, its rows streamed out.
    const bool stream = same && stream_output(total * ye);
    // 1- and 4-byte elements with strides of a multiple of 4 KiB on either side: a kernel's
    // rows fall in one L1 set and evict each other half-used (u8 4096x4096 ran at 0.05 of a
    // copy, 4000x4000 at 0.3); staged, the tile's rows are read and written whole. (f32
    // 4096x4096 8.0-9.0 -> 6.7-7.3 ms; f16 and f64 measured slower staged and are not.)
    const bool staged = (xe == 1 || xe == 4) && ((xsL * xe) % 4096 == 0 || (ysK * ye) % 4096 == 0);
    // A line block's 64 / ye columns land on y rows ysK apart; a multiple of 2 KiB puts them
    // in one or two of L1's 64 sets, and at 16 or more a set, plain stores stall (f32 1024^2:
    // 0.28 of the copy, 0.53 streamed; u8 4096^2: 0.12 and 0.43). Such outputs past L2 stream.
    const bool crowded = 64 / ye / (4096 / std::gcd(ysK * ye, i64{4096})) >= 16 && total * ye >= (i64{1} << 20);
    const bool stream_lines = stream || (lines && crowded);
    const bool x_lines = (xsL * xe) % 64 == 0;
    const i64 ahead = lines ? 1 : 2;
    parallel_for(h, 0, units, 1, [&](i64 u0, i64 u1) {
      std::unique_ptr<unsigned char[]> tmp;
      if (!same || (stream && !lines) || staged)
        tmp = std::make_unique_for_overwrite<unsigned char[]>(static_cast<std::size_t>(2 * tb * tb * xe + kBlock * 4));
      // [transposed tile | conversion stage | the staged tile's rows] (none on the direct path)
      auto* stage = tmp ? reinterpret_cast<float*>(tmp.get() + tb * tb * xe) : nullptr;
      unsigned char* const rows_in = tmp ? tmp.get() + tb * tb * xe + kBlock * 4 : nullptr;
      for (i64 u = u0; u < u1; ++u) {
        i64 ox, oy;
        outer.at(u / (sk * sl), ox, oy);
        const i64 tk0 = u / sl % sk * kSuper, tl0 = u % sl * kSuper;
        const i64 ntk = std::min(nk, tk0 + kSuper) - tk0, ntl = std::min(nl, tl0 + kSuper) - tl0;
        auto tile_x = [&](i64 q, i64& kb, i64& lb) {  // tile q of the unit (tk fastest): x's first element
          const i64 k0 = (tk0 + q % ntk) * tb, l0 = (tl0 + q / ntk) * tb;
          kb = std::min(tb, K - k0);
          lb = std::min(tb, L - l0);
          return at_elem(x0, m.xt, ox + k0 + l0 * xsL);
        };
        for (i64 q = 0; q < ntk * ntl; ++q) {
          // The rows of a tile ahead on their way to L2: they are too short and too far apart
          // for the hardware prefetchers (one line per 64 bytes of each row). Two tiles ahead,
          // one for the line kernels' larger tiles (u8 8192^2: 0.46-0.50 -> 0.51-0.54 of the copy).
          i64 kb = 0, lb = 0;
          if (q + ahead < ntk * ntl) {
            const auto* next = static_cast<const char*>(tile_x(q + ahead, kb, lb));
            for (i64 r = 0; r < lb; ++r)
              for (i64 b = 0; b < kb * xe; b += 64) __builtin_prefetch(next + r * xsL * xe + b, 0, 2);
          }
          const void* xs = tile_x(q, kb, lb);
          const i64 k0 = (tk0 + q % ntk) * tb, l0 = (tl0 + q / ntk) * tb;
          void* ys = at_elem(y0, m.yt, oy + k0 * ysK + l0);
          if (lines) {
            if (staged && !(x_lines && reinterpret_cast<std::uintptr_t>(xs) % 64 == 0)) {
              for (i64 r = 0; r < lb; ++r)
                std::memcpy(rows_in + r * kb * xe, static_cast<const char*>(xs) + r * xsL * xe, static_cast<std::size_t>(kb * xe));
              lines(lb, kb, rows_in, kb, ys, ysK, stream_lines);
            } else {
              lines(lb, kb, xs, xsL, ys, ysK, stream_lines);
            }
            continue;
          }
          if (same && !stream && !staged) {
            kK->transpose[lg](lb, kb, xs, xsL, ys, ysK);
            continue;
          }
          if (staged) {  // the tile's rows copied together first: x's stride leaves the kernel's reads
            for (i64 r = 0; r < lb; ++r)
              std::memcpy(rows_in + r * kb * xe, static_cast<const char*>(xs) + r * xsL * xe, static_cast<std::size_t>(kb * xe));
            kK->transpose[lg](lb, kb, rows_in, kb, tmp.get(), lb);
          } else {
            kK->transpose[lg](lb, kb, xs, xsL, tmp.get(), lb);
          }
          for (i64 c = 0; c < kb; ++c) {
            void* row = at_elem(ys, m.yt, c * ysK);
            if (stream) kE->stream(row, tmp.get() + c * lb * xe, lb * xe);
            else convert_row(*kK, m.xt, tmp.get() + c * lb * xe, m.yt, row, lb, stage);
          }
        }
      }
      if (stream_lines) kE->fence();
    });
    return Status::ok();
  }

  // Rows (x contiguous or broadcast along the row) or strided rows.
  const i64 rows = n.rows();
  const i64 segs = (L + kSegment - 1) / kSegment, seg_len = std::min(L, kSegment);
  const i64 units = rows * segs;
  const bool direct = ysL == 1 && (xsL == 0 || xsL == 1);
  const bool stream = direct && same && xsL == 1 && stream_output(total * ye);
  // Streamed short rows by runs of y's second dim (back to back in y, about 4 KiB a unit), the
  // unit about 8 KiB ahead prefetched. A transpose that keeps the inner dim (attention's [b, h,
  // s, d] -> [b, s, h, d]) reads rows too short and too far apart for the hardware prefetchers;
  // a split along the last dim writes rows that are not whole lines.
  if (stream && R >= 2 && L * xe <= 1024 && n.strides[1][static_cast<std::size_t>(R - 2)] == L) {
    const auto g = static_cast<std::size_t>(R - 2);
    const i64 G = n.dims[g], gx = n.strides[0][g];
    const i64 run = std::min(G, std::max<i64>(1, 4096 / (L * xe))), runs = (G + run - 1) / run;
    const i64 pieces = rows / G * runs, ahead = std::max<i64>(1, 8192 / (run * L * xe));
    const Outer outer(n, R - 2);
    auto offsets = [&](i64 u, i64& ox, i64& oy) {  // of unit u's first row
      outer.at(u / runs, ox, oy);
      ox += u % runs * run * gx;
      oy += u % runs * run * L;
    };
    parallel_for(h, 0, pieces, std::max<i64>(1, kGrain / (run * L)), [&](i64 u0, i64 u1) {
      for (i64 u = u0; u < u1; ++u) {
        i64 ox, oy, px, py;
        offsets(u, ox, oy);
        offsets(std::min(u + ahead, pieces - 1), px, py);
        const i64 count = std::min(run, G - u % runs * run);
        stream_rows<kE>(count, L * xe, static_cast<const char*>(at_elem(x0, m.xt, ox)), gx * xe, static_cast<char*>(at_elem(y0, m.yt, oy)),
                        static_cast<const char*>(at_elem(x0, m.xt, px)));
      }
      kE->fence();
    });
    return Status::ok();
  }
  // Conversions too: each block converted into L1, then streamed (a plain store reads the
  // output line first: f32 -> u8 of 4096x8192 went 5.2 -> 4.3 ms at 1 thread).
  const bool stream_cast = direct && !same && xsL == 1 && stream_output(total * ye);
  // Short rows of one dtype (a transformer's [8, 32, 32] -> [32, 8, 32]: 256 rows of 128 bytes)
  // copy inline: a memmove call and the per-row dtype lookups cost more than the bytes.
  const bool short_copy = direct && same && xsL == 1 && !stream && L * ye <= 256;
  parallel_for(h, 0, units, std::max<i64>(1, kGrain / seg_len), [&](i64 u0, i64 u1) {
    if (short_copy) {
      const auto* xb = static_cast<const unsigned char*>(x0);
      auto* yb = static_cast<unsigned char*>(y0);
      const std::size_t bytes = static_cast<std::size_t>(L * ye);
      RowCursor cur(n, u0);
      for (i64 u = u0; u < u1; ++u) {
        if (u != u0) cur.next();
        const unsigned char* s = xb + cur.offset[0] * xe;
        unsigned char* d = yb + cur.offset[1] * ye;
        std::size_t b = 0;
        for (; b + 16 <= bytes; b += 16) {
          unsigned char v[16];
          std::memcpy(v, s + b, 16);
          std::memcpy(d + b, v, 16);
        }
        for (; b < bytes; ++b) d[b] = s[b];
      }
      return;
    }
    auto tmp = std::make_unique_for_overwrite<unsigned char[]>(static_cast<std::size_t>(kBlock * 8 * 2 + kBlock * 4));
    unsigned char* ta = tmp.get();
    unsigned char* tb = ta + kBlock * 8;
    auto* stage = reinterpret_cast<float*>(tb + kBlock * 8);
    RowCursor cur(n, u0 / segs);
    for (i64 u = u0; u < u1; ++u) {
      if (u != u0 && u % segs == 0) cur.next();
      const i64 j0 = (u % segs) * kSegment, j1 = std::min(L, j0 + kSegment);
      const i64 xo = cur.offset[0] + j0 * xsL, yo = cur.offset[1] + j0 * ysL;
      const void* xs = at_elem(x0, m.xt, xo);
      void* ys = at_elem(y0, m.yt, yo);
      const i64 len = j1 - j0;
      if (direct && xsL == 0) {
        convert_row(*kK, m.xt, xs, m.yt, ys, 1, stage);
        replicate(ys, len, ye);
      } else if (stream) {
        kE->stream(ys, xs, len * ye);
      } else if (stream_cast) {
        for (i64 j = 0; j < len; j += kBlock) {
          const i64 nb = std::min(kBlock, len - j);
          convert_row(*kK, m.xt, at_elem(xs, m.xt, j), m.yt, tb, nb, stage);
          kE->stream(at_elem(ys, m.yt, j), tb, nb * ye);
        }
      } else if (direct) {
        convert_row(*kK, m.xt, xs, m.yt, ys, len, stage);
      } else {
        for (i64 j = 0; j < len; j += kBlock) {
          const i64 nb = std::min(kBlock, len - j);
          const void* src = at_elem(xs, m.xt, j * xsL);
          if (xsL != 1) {
            gather(src, xsL, nb, xe, ta);
            src = ta;
          }
          void* dst = ysL == 1 ? at_elem(ys, m.yt, j) : static_cast<void*>(tb);
          convert_row(*kK, m.xt, src, m.yt, dst, nb, stage);
          if (ysL != 1) scatter(tb, nb, ye, at_elem(ys, m.yt, j * ysL), ysL);
        }
      }
    }
    if (stream || stream_cast) kE->fence();
  });
  return Status::ok();
}

// The reference: every index of the box in order, one element at a time.
Status move_ref(Handle&, const Move& m) {
  const i64 total = m.numel();
  std::array<i64, kMaxNestRank> idx{};
  for (i64 e = 0; e < total; ++e) {
    i64 xo = 0, yo = 0;
    for (int i = 0; i < m.rank; ++i) {
      const auto k = static_cast<std::size_t>(i);
      xo += idx[k] * m.xs[k];
      yo += idx[k] * m.ys[k];
    }
    convert_element(m.xt, at_elem(m.x, m.xt, xo), m.yt, at_elem(m.y, m.yt, yo));
    for (int i = m.rank - 1; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      if (++idx[k] < m.dims[k]) break;
      idx[k] = 0;
    }
  }
  return Status::ok();
}

template <Isa kNeeds>
Status move_accepts(const Move&) {
  return isa_allows(kNeeds);
}

constexpr Impl<Move> kMoveImpls[] = {
    {"move_avx512", &move_accepts<Isa::kAvx512>, &move_run<&mk::kAvx512, &ek::kAvx512>},
    {"move_avx2", &move_accepts<Isa::kAvx2>, &move_run<&mk::kAvx2, &ek::kAvx2>},
    {"move_generic", &move_accepts<Isa::kGeneric>, &move_run<&mk::kGeneric, &ek::kGeneric>},
    {"move_ref", accepts_all<Move>, &move_ref},
};

}  // namespace

Move Move::of(const TensorDesc& xd, const void* xp, const TensorDesc& yd, void* yp) {
  Move m;
  m.xt = xd.dtype;
  m.yt = yd.dtype;
  m.x = xp;
  m.y = yp;
  for (int i = 0; i < yd.rank(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    m.add(yd.dims[k], xd.dims[k] == 1 ? 0 : xd.strides[k], yd.strides[k]);
  }
  return m;
}

Move& Move::add(i64 dim, i64 x_stride, i64 y_stride) {
  const auto k = static_cast<std::size_t>(rank++);
  dims[k] = dim;
  xs[k] = x_stride;
  ys[k] = y_stride;
  return *this;
}

i64 Move::numel() const {
  i64 n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[static_cast<std::size_t>(i)];
  return n;
}

Status run_move(Handle& h, const Move& m) { return run_first_accepting(h, "move", kMoveImpls, m); }

void move_reference(const Move& m) {
  Handle h;
  (void)move_ref(h, m);
}

void convert_element(DType from, const void* s, DType to, void* d) {
  if (from == to) {  // bits as they are (NaN payloads, bool bytes)
    std::memcpy(d, s, dtype_size(from));
    return;
  }
  switch (from) {
    case DType::kBool: store_as(get<std::uint8_t>(s) != 0, to, d); break;
    case DType::kI8: store_as(get<std::int8_t>(s), to, d); break;
    case DType::kU8: store_as(get<std::uint8_t>(s), to, d); break;
    case DType::kI32: store_as(get<std::int32_t>(s), to, d); break;
    case DType::kI64: store_as(get<std::int64_t>(s), to, d); break;
    case DType::kF16: store_as(f16_bits_to_f32(get<std::uint16_t>(s)), to, d); break;
    case DType::kBF16: store_as(bf16_bits_to_f32(get<std::uint16_t>(s)), to, d); break;
    case DType::kF32: store_as(get<float>(s), to, d); break;
    case DType::kF64: store_as(get<double>(s), to, d); break;
    case DType::kI16: store_as(get<std::int16_t>(s), to, d); break;
    case DType::kU16: store_as(get<std::uint16_t>(s), to, d); break;
    case DType::kU32: store_as(get<std::uint32_t>(s), to, d); break;
    case DType::kU64: store_as(get<std::uint64_t>(s), to, d); break;
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ: store_as(f8_bits_to_f32(get<std::uint8_t>(s), *float8_of(from)), to, d); break;
    case DType::kI4:
    case DType::kI2: store_as(get<std::int8_t>(s), to, d); break;
    case DType::kU4:
    case DType::kU2: store_as(get<std::uint8_t>(s), to, d); break;
    case DType::kF4E2M1: store_as(f4e2m1_bits_to_f32(get<std::uint8_t>(s)), to, d); break;
    case DType::kF8E8M0: store_as(e8m0_bits_to_f32(get<std::uint8_t>(s)), to, d); break;
    default: break;
  }
}

}  // namespace tessera::dnn::detail
