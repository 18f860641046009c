// The reductions' implementations (reduce_impl::run, behind api.cpp's entry points): the first
// of the ordered list that accepts the call, the reference last.
//
// The fast implementations split x's dims into kept and reduced ones, each side a loop nest
// (eltwise/nest.hpp), and pick one of two walks:
//   rows    each output reduces its elements in the reduced nest's order, cut into chunks of
//           at most kChunk along the nest's rows; chunk results combine in order. A single
//           run of reduced elements (the nest merged to one dim) is cut into units of one
//           chunk each, so one big reduction still spreads over threads.
//   columns the kept innermost dim is contiguous in x (and not reduced): blocks of outputs
//           accumulate one reduced index after another, in the reference's order.
// Both orders depend only on the shapes, never on the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "../activation/kernels.hpp"
#include "../eltwise/nest.hpp"
#include "../eltwise/ref.hpp"
#include "../softmax/kernels.hpp"
#include "kernels.hpp"
#include "reduce.hpp"

namespace tessera::dnn {
namespace {

namespace rk = red_kernels;
namespace ak = act_kernels;
namespace sk = softmax_kernels;
using i64 = std::int64_t;

constexpr i64 kChunk = 16384;
static_assert(kChunk <= rk::kMaxPartialRow);
// Outputs per column block, at most: long runs of each reduced row (f64 accumulators: 128 KiB,
// in L2; narrower blocks restarted the hardware prefetchers on every run).
constexpr i64 kColBlock = 16384;
static_assert(rk::kMaxPartialCols % rk::kColGroup == 0);
constexpr i64 kGrain = 65536;  // elements per thread chunk, at least

struct RedCall {
  ReduceOp op;
  std::vector<int> axes;  // normalised
  const TensorDesc& x;
  const void* xp;
  const TensorDesc& y;
  void* yp;
};

int type_index(DType t) {
  switch (t) {
    case DType::kI8: return rk::kI8;
    case DType::kU8: return rk::kU8;
    case DType::kI32: return rk::kI32;
    case DType::kI64: return rk::kI64;
    case DType::kF16:
    case DType::kBF16:
    case DType::kF32: return rk::kF32;
    case DType::kF64: return rk::kF64;
    default: return -1;
  }
}
bool is_float_type(int ti) { return ti == rk::kF32 || ti == rk::kF64; }
// The kernels for elements of type t (type index ti): those that read 16-bit floats
// directly, or ti's.
int kernel_type(DType t, int ti) {
  return t == DType::kF16 ? rk::kF16 : t == DType::kBF16 ? rk::kBF16 : ti;
}
std::size_t elem_bytes(int ti) {
  switch (ti) {
    case rk::kI8:
    case rk::kU8: return 1;
    case rk::kI32:
    case rk::kF32: return 4;
    default: return 8;
  }
}

int acc_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::kProd: return rk::kProd;
    case ReduceOp::kMax:
    case ReduceOp::kLogSumExp: return rk::kMax;  // (its first pass)
    case ReduceOp::kMin: return rk::kMin;
    case ReduceOp::kL1: return rk::kSumAbs;
    case ReduceOp::kL2:
    case ReduceOp::kSumSquare: return rk::kSumSquare;
    default: return rk::kSum;
  }
}

// A partial result: f64 for float types, i64 for integers.
struct Part {
  double d = 0.0;
  i64 i = 0;
};
Part combine(int acc, bool fl, Part a, Part b) {
  if (acc == rk::kMax || acc == rk::kMin) {
    if (fl) {
      if (a.d != a.d) return a;
      if (b.d != b.d) return b;
      return (acc == rk::kMax ? a.d < b.d : b.d < a.d) ? b : a;
    }
    return (acc == rk::kMax ? a.i < b.i : b.i < a.i) ? b : a;
  }
  if (acc == rk::kProd) {
    if (fl) return {a.d * b.d, 0};
    return {0, static_cast<i64>(static_cast<std::uint64_t>(a.i) * static_cast<std::uint64_t>(b.i))};
  }
  if (fl) return {a.d + b.d, 0};
  return {0, static_cast<i64>(static_cast<std::uint64_t>(a.i) + static_cast<std::uint64_t>(b.i))};
}

// Stores the final value of output element `off`.
void finish(ReduceOp op, const TensorDesc& y, void* yp, i64 off, Part p, i64 count) {
  const DType t = y.dtype;
  if (is_floating(t)) {
    double v = p.d;
    switch (op) {
      case ReduceOp::kMean: v = v / static_cast<double>(count); break;
      case ReduceOp::kL2: v = std::sqrt(v); break;
      case ReduceOp::kLogSum: v = std::log(v); break;
      default: break;
    }
    if (t == DType::kF64) static_cast<double*>(yp)[off] = v;
    else detail::store_f32(yp, t, off, static_cast<float>(v));
    return;
  }
  i64 v = p.i;
  if (op == ReduceOp::kMean) v = count == 0 ? 0 : v / count;
  switch (t) {
    case DType::kI8: static_cast<std::int8_t*>(yp)[off] = static_cast<std::int8_t>(v); break;
    case DType::kU8: static_cast<std::uint8_t*>(yp)[off] = static_cast<std::uint8_t>(v); break;
    case DType::kI32: static_cast<std::int32_t*>(yp)[off] = static_cast<std::int32_t>(v); break;
    default: static_cast<std::int64_t*>(yp)[off] = v; break;
  }
}

// finish() for cnt float results d[q] at off + q * ys: f32 and f64 outputs of ops without a
// final step straight in a loop (a row of 56 f32 reduced in about 20 cycles spent a third of
// its time more in finish() called per output).
template <typename S>  // double, or float (f32 max/min accumulators)
void finish_rows(ReduceOp op, const TensorDesc& y, void* yp, i64 off, i64 ys, const S* d, i64 cnt, i64 count) {
  const bool plain = op != ReduceOp::kMean && op != ReduceOp::kL2 && op != ReduceOp::kLogSum;
  if (plain && y.dtype == DType::kF32) {
    float* out = static_cast<float*>(yp) + off;
    for (i64 q = 0; q < cnt; ++q) out[q * ys] = static_cast<float>(d[q]);
  } else if (plain && y.dtype == DType::kF64) {
    double* out = static_cast<double*>(yp) + off;
    for (i64 q = 0; q < cnt; ++q) out[q * ys] = static_cast<double>(d[q]);
  } else {
    for (i64 q = 0; q < cnt; ++q) finish(op, y, yp, off + q * ys, {static_cast<double>(d[q]), 0}, count);
  }
}

// The kept and reduced nests of a call, and the output's element offsets.
struct Plan {
  detail::Nest kept;     // operands: x, y
  detail::Nest reduced;  // operand: x
  i64 n_out = 1, n_red = 1;
};
Plan plan_of(const RedCall& c) {
  TensorDesc xk, yk, xr;
  std::vector<bool> red(static_cast<std::size_t>(c.x.rank()), false);
  for (int a : c.axes) red[static_cast<std::size_t>(a)] = true;
  const bool keep = c.y.rank() == c.x.rank();
  int yi = 0;
  for (int i = 0; i < c.x.rank(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (red[k]) {
      xr.dims.push_back(c.x.dims[k]);
      xr.strides.push_back(c.x.strides[k]);
      if (keep) ++yi;
      continue;
    }
    xk.dims.push_back(c.x.dims[k]);
    xk.strides.push_back(c.x.strides[k]);
    yk.dims.push_back(c.x.dims[k]);
    yk.strides.push_back(c.y.strides[static_cast<std::size_t>(yi++)]);
  }
  Plan p;
  const TensorDesc* ko[2] = {&xk, &yk};
  const TensorDesc* ro[1] = {&xr};
  p.kept = detail::make_nest(xk.dims, ko);
  p.reduced = detail::make_nest(xr.dims, ro);
  p.n_out = xk.numel();
  p.n_red = xr.numel();
  return p;
}

// Runs fn(block pointer, n, kernel type kt) over x's elements [off, off + n*stride) in
// blocks of at most kChunk, contiguous (strided runs gathered): in the element type (halves
// too, when kt reads them) or in the compute type (halves converted).
template <typename F>
void for_blocks(const void* xp, DType t, int ti, int kt, i64 off, i64 stride, i64 n, void* tmp, F&& fn) {
  const std::size_t b = dtype_size(t);
  for (i64 j = 0; j < n; j += kChunk) {
    const i64 m = std::min(kChunk, n - j);
    const i64 at = off + j * stride;
    if (detail::is_half(t) && kt == ti) {
      float* f = static_cast<float*>(tmp);
      const auto* u = static_cast<const std::uint16_t*>(xp) + at;
      if (stride == 1 && t == DType::kF16) convert_f16_to_f32(reinterpret_cast<const f16*>(u), f, static_cast<std::size_t>(m));
      else if (stride == 1) convert_bf16_to_f32(reinterpret_cast<const bf16*>(u), f, static_cast<std::size_t>(m));
      else for (i64 i = 0; i < m; ++i) f[i] = detail::load_f32(u, t, i * stride);
      fn(static_cast<const void*>(f), m, ti);
    } else if (stride == 1) {
      fn(static_cast<const void*>(static_cast<const char*>(xp) + at * static_cast<i64>(b)), m, kt);
    } else {
      const char* s = static_cast<const char*>(xp) + at * static_cast<i64>(b);
      for (i64 i = 0; i < m; ++i) std::memcpy(static_cast<char*>(tmp) + i * static_cast<i64>(b), s + i * stride * static_cast<i64>(b), b);
      fn(static_cast<const void*>(tmp), m, kt);
    }
  }
}

template <const rk::Kernels* kK, const ak::Kernels* kA, const sk::Kernels* kS>
struct Engine {
  const RedCall& c;
  const Plan& p;
  int ti;
  bool fl;

  // exp(v - m) over a block (f32 or f64 compute type) into out.
  void exp_shift(const void* v, i64 n, double m, void* out) const {
    if (ti == rk::kF32) {
      kA->exp_rows(n, 1, n, static_cast<const float*>(v), &m, static_cast<float*>(out));
    } else {
      const double* f = static_cast<const double*>(v);
      double* o = static_cast<double*>(out);
      for (i64 i = 0; i < n; ++i) o[i] = std::exp(f[i] - m);
    }
  }

  // The reduction (acc kind) of output `o`'s reduced elements [chunk pieces of a rank-1 nest
  // or all of them], with x at base offset `xoff`. For log_sum_exp's second pass `shift` is
  // the max subtracted before exp.
  Part row_part(int acc, i64 xoff, i64 piece, bool all, double shift, void* tmp, void* tmp2) const {
    const detail::Nest& r = p.reduced;
    Part part;
    bool first = true;
    const bool exp_pass = shift == shift && c.op == ReduceOp::kLogSumExp && acc == rk::kSum;
    const int kt = exp_pass ? ti : kernel_type(c.x.dtype, ti);  // exp_shift takes f32
    auto take = [&](const void* blk, i64 n, int bt) {
      Part q;
      if (exp_pass) {
        exp_shift(blk, n, shift, tmp2);
        blk = tmp2;
      }
      kK->row[acc][bt](n, blk, &q.d, &q.i);
      part = first ? q : combine(acc, fl, part, q);
      first = false;
    };
    const i64 L = r.inner(), s = r.inner_stride(0);
    if (!all) {  // one chunk of the single run
      const i64 j = piece * kChunk;
      for_blocks(c.xp, c.x.dtype, ti, kt, xoff + j * s, s, std::min(kChunk, L - j), tmp, take);
      return part;
    }
    detail::RowCursor cur(r, 0);
    for (i64 row = 0, rows = r.rows(); row < rows; ++row, cur.next())
      for_blocks(c.xp, c.x.dtype, ti, kt, xoff + cur.offset[0], s, L, tmp, take);
    return part;
  }

  // Outputs whose reduced elements lie in several rows (a per-channel sum of NCHW over N, H
  // and W): a unit takes a run of outputs and walks the reduced rows outermost, each output's
  // piece of a row in turn, so x is read in long runs (one output at a time jumped between
  // its rows: 12.5 KiB runs 800 KiB apart, 0.24-0.27 of a copy). Each output combines its
  // blocks in the order row_part does: the same bits.
  void interleaved(int acc) const {
    const detail::Nest& r = p.reduced;
    const i64 L = p.kept.inner(), xs = p.kept.inner_stride(0), ys = p.kept.inner_stride(1);
    const i64 rl = r.inner(), rs = r.inner_stride(0), threads = detail::max_threads(*handle);
    const i64 per = std::max<i64>(1, (p.n_out + 4 * threads - 1) / (4 * threads));  // outputs per unit
    const int kt = kernel_type(c.x.dtype, ti);
    detail::parallel_for(*handle, 0, (p.n_out + per - 1) / per, 1, [&](i64 u0, i64 u1) {
      auto tmp = std::make_unique_for_overwrite<double[]>(kChunk);
      std::vector<i64> xo(static_cast<std::size_t>(per)), yo(static_cast<std::size_t>(per));
      std::vector<Part> parts(static_cast<std::size_t>(per));
      for (i64 u = u0; u < u1; ++u) {
        const i64 o0 = u * per, no = std::min(per, p.n_out - o0);
        detail::RowCursor kc(p.kept, o0 / L);
        for (i64 o = o0; o < o0 + no; ++o) {
          if (o != o0 && o % L == 0) kc.next();
          xo[static_cast<std::size_t>(o - o0)] = kc.offset[0] + o % L * xs;
          yo[static_cast<std::size_t>(o - o0)] = kc.offset[1] + o % L * ys;
        }
        detail::RowCursor rc(r, 0);
        for (i64 row = 0, rows = r.rows(); row < rows; ++row, rc.next())
          for (i64 k = 0; k < no; ++k) {
            Part& part = parts[static_cast<std::size_t>(k)];
            bool first = row == 0;
            for_blocks(c.xp, c.x.dtype, ti, kt, xo[static_cast<std::size_t>(k)] + rc.offset[0], rs, rl, tmp.get(), [&](const void* blk, i64 n, int bt) {
              Part q;
              kK->row[acc][bt](n, blk, &q.d, &q.i);
              part = first ? q : combine(acc, fl, part, q);
              first = false;
            });
          }
        for (i64 k = 0; k < no; ++k) finish(c.op, c.y, c.yp, yo[static_cast<std::size_t>(k)], parts[static_cast<std::size_t>(k)], p.n_red);
      }
    });
  }

  void rows() const {
    const detail::Nest& r = p.reduced;
    const bool single = r.rank == 1;
    const i64 pieces = single ? (p.n_red + kChunk - 1) / kChunk : 1;
    const int acc = acc_of(c.op);
    const bool lse = c.op == ReduceOp::kLogSumExp;
    const i64 units = p.n_out * pieces;
    const i64 grain = std::max<i64>(1, kGrain / std::max<i64>(1, std::min(p.n_red, kChunk)));
    std::vector<Part> parts(static_cast<std::size_t>(pieces > 1 ? units : 0));
    std::vector<double> maxes(static_cast<std::size_t>(lse ? p.n_out : 0));
    const double kNoShift = std::numeric_limits<double>::quiet_NaN();
    // One pass over all units: part(o, xoff, piece, tmp, tmp2) is a unit's part, the parts of
    // an output combined with accumulator `a` and handed to out(o, yoff, part).
    auto pass = [&](int a, auto&& part, auto&& out) {
      // Output o is element o % L of kept row o / L.
      const i64 L = p.kept.inner(), xs = p.kept.inner_stride(0), ys = p.kept.inner_stride(1);
      detail::parallel_for(*handle, 0, units, grain, [&](i64 u0, i64 u1) {
        auto tmp = std::make_unique_for_overwrite<double[]>(2 * kChunk);
        detail::RowCursor cur(p.kept, u0 / pieces / L);
        for (i64 u = u0; u < u1; ++u) {
          const i64 o = u / pieces, j = o % L;
          if (u != u0 && u % pieces == 0 && j == 0) cur.next();
          const Part q = part(o, cur.offset[0] + j * xs, u % pieces, tmp.get(), tmp.get() + kChunk);
          if (pieces > 1) parts[static_cast<std::size_t>(u)] = q;
          else out(o, cur.offset[1] + j * ys, q);
        }
      });
      if (pieces > 1) {
        detail::RowCursor cur(p.kept, 0);
        for (i64 o = 0; o < p.n_out; ++o) {
          if (o != 0 && o % L == 0) cur.next();
          Part q = parts[static_cast<std::size_t>(o * pieces)];
          for (i64 k = 1; k < pieces; ++k) q = combine(a, fl, q, parts[static_cast<std::size_t>(o * pieces + k)]);
          out(o, cur.offset[1] + (o % L) * ys, q);
        }
      }
    };
    // A unit's part with accumulator a, x shifted by shift(o) before exp (log_sum_exp's sums).
    auto part_of = [&](int a, auto&& shift) {
      return [&, a](i64 o, i64 xoff, i64 piece, void* t, void* t2) { return row_part(a, xoff, piece, !single, shift(o), t, t2); };
    };
    const auto no_shift = [&](i64) { return kNoShift; };
    if (!lse && !single) {
      interleaved(acc);
      return;
    }
    const int kt = kernel_type(c.x.dtype, ti);
    if (!lse && pieces == 1 && r.inner_stride(0) == 1 && !(detail::is_half(c.x.dtype) && kt == ti)) {
      // Whole contiguous rows (a last axis of up to kChunk): the row kernel straight on x and
      // its result straight to y, what pass() and row_part() do for them. Through them, a
      // row of 56 f32 spent more time in the walk than in the kernel (a Part written as two
      // halves and read back whole stalled each row).
      const i64 L = p.kept.inner(), xs = p.kept.inner_stride(0), ys = p.kept.inner_stride(1);
      const auto b = static_cast<i64>(dtype_size(c.x.dtype));
      const rk::RowsFn many = kK->rows[acc][kt];
      detail::parallel_for(*handle, 0, p.n_out, grain, [&](i64 o0, i64 o1) {
        detail::RowCursor cur(p.kept, o0 / L);
        constexpr i64 kBatch = 64;
        double d[kBatch];
        for (i64 o = o0; o < o1;) {
          const i64 j = o % L;
          if (o != o0 && j == 0) cur.next();
          const char* x = static_cast<const char*>(c.xp) + (cur.offset[0] + j * xs) * b;
          if (many) {  // the outputs of this kept row in batches, rows xs apart
            const i64 cnt = std::min({kBatch, o1 - o, L - j});
            many(p.n_red, cnt, xs, x, d);
            finish_rows(c.op, c.y, c.yp, cur.offset[1] + j * ys, ys, d, cnt, p.n_red);
            o += cnt;
            continue;
          }
          i64 iv = 0;
          kK->row[acc][kt](p.n_red, x, d, &iv);
          finish(c.op, c.y, c.yp, cur.offset[1] + j * ys, {d[0], iv}, p.n_red);
          ++o;
        }
      });
      return;
    }
    if (!lse) {
      pass(acc, part_of(acc, no_shift), [&](i64, i64 yoff, Part q) { finish(c.op, c.y, c.yp, yoff, q, p.n_red); });
      return;
    }
    if (single && pieces == 1 && r.inner_stride(0) == 1 && (ti == rk::kF32 || ti == rk::kF64) && kt == ti &&
        kK->rows[rk::kMax][ti] && kK->rows[rk::kSum][ti]) {
      lse_rows();
      return;
    }
    // Infinite or NaN maxima give themselves (+inf, NaN) or -inf (all -inf) directly.
    auto lse_out = [&](i64 o, i64 yoff, Part q) {
      const double m = maxes[static_cast<std::size_t>(o)];
      finish(ReduceOp::kSum, c.y, c.yp, yoff, {std::isfinite(m) ? m + std::log(q.d) : m, 0}, p.n_red);
    };
    if (pieces == 1) {
      // One output per unit: its sum of e^(x - max) right after its max, while its elements
      // are still in the caches (two passes over all outputs read x from memory twice:
      // [4096, 8192] f32 over axis 1 ran at 0.19 of a copy). The same operations per output.
      pass(rk::kSum, [&](i64 o, i64 xoff, i64 piece, void* t, void* t2) {
        const double m = row_part(rk::kMax, xoff, piece, !single, kNoShift, t, t2).d;
        maxes[static_cast<std::size_t>(o)] = m;
        return row_part(rk::kSum, xoff, piece, !single, m, t, t2);
      }, lse_out);
      return;
    }
    pass(rk::kMax, part_of(rk::kMax, no_shift), [&](i64 o, i64, Part q) { maxes[static_cast<std::size_t>(o)] = q.d; });
    pass(rk::kSum, part_of(rk::kSum, [&](i64 o) { return maxes[static_cast<std::size_t>(o)]; }), lse_out);
  }

  // log_sum_exp over whole contiguous f32/f64 rows (a last axis of up to kChunk), without
  // row_part's walk (a row of 56 f32 took 130 ns through it). f32: the softmax table's fused
  // rows (max, exponentials, sums and logs in one pass over each batch). f64: batches of rows,
  // their maxima, then their e^(x - max) into one buffer, then their sums two rows at a time
  // (row_part's operations, so its bits).
  void lse_rows() const {
    const i64 n = p.n_red, L = p.kept.inner(), xs = p.kept.inner_stride(0), ys = p.kept.inner_stride(1);
    constexpr i64 kBatchRows = 64, kBatchValues = 8192;
    const bool f32 = ti == rk::kF32;
    const i64 batch = f32 ? kBatchRows : std::clamp<i64>(kBatchValues / n, 1, kBatchRows);
    const i64 grain = std::max<i64>(1, kGrain / n);
    detail::parallel_for(*handle, 0, p.n_out, grain, [&](i64 o0, i64 o1) {
      auto buf = std::make_unique_for_overwrite<double[]>(static_cast<std::size_t>(f32 ? 0 : batch * n));
      double m[kBatchRows], sum[kBatchRows];
      detail::RowCursor cur(p.kept, o0 / L);
      for (i64 o = o0; o < o1;) {
        const i64 j = o % L;
        if (o != o0 && j == 0) cur.next();
        const i64 cnt = std::min({batch, o1 - o, L - j});  // rows of this kept row, xs apart
        const i64 at = cur.offset[0] + j * xs;
        if (f32) {  // the softmax table's rows: max, exponentials, sum and log in one pass
          kS->lse_rows(cnt, n, xs, static_cast<const float*>(c.xp) + at, sum);
          finish_rows(ReduceOp::kSum, c.y, c.yp, cur.offset[1] + j * ys, ys, sum, cnt, p.n_red);
          o += cnt;
          continue;
        }
        kK->rows[rk::kMax][ti](n, cnt, xs, static_cast<const char*>(c.xp) + at * static_cast<i64>(dtype_size(c.x.dtype)), m);
        const double* x = static_cast<const double*>(c.xp) + at;
        for (i64 q = 0; q < cnt; ++q)
          for (i64 i = 0; i < n; ++i) buf[q * n + i] = std::exp(x[q * xs + i] - m[q]);
        kK->rows[rk::kSum][ti](n, cnt, n, buf.get(), sum);
        for (i64 q = 0; q < cnt; ++q)  // (infinite or NaN maxima give themselves or -inf)
          sum[q] = std::isfinite(m[q]) ? m[q] + std::log(sum[q]) : m[q];
        finish_rows(ReduceOp::kSum, c.y, c.yp, cur.offset[1] + j * ys, ys, sum, cnt, p.n_red);
        o += cnt;
      }
    });
  }

  // log_sum_exp of f32 over one reduced axis (stride rs, at least the kept run L): the softmax
  // table's columns on [n_red, rs] blocks of up to kLseCols outputs, each block prefetching
  // the next one's rows. Per output the same operations whatever the blocks: the same bits.
  void lse_columns() const {
    constexpr i64 kLseCols = 512;
    const detail::Nest& k = p.kept;
    const i64 L = k.inner(), rows = k.rows(), rs = p.reduced.inner_stride(0), ys = k.inner_stride(1);
    const i64 width = std::min(L, kLseCols), blocks = (L + width - 1) / width;
    const float* x = static_cast<const float*>(c.xp);
    const i64 grain = std::max<i64>(1, kGrain / (width * p.n_red));
    detail::parallel_for(*handle, 0, rows * blocks, grain, [&](i64 u0, i64 u1) {
      double out[kLseCols];
      detail::RowCursor cur(k, u0 / blocks);
      for (i64 u = u0; u < u1; ++u) {
        const i64 row = u / blocks, j0 = (u % blocks) * width, n = std::min(width, L - j0);
        if (u != u0 && j0 == 0) cur.next();
        const float* next = nullptr;  // the next unit's block
        if (u + 1 < u1 && j0 + width < L) {
          next = x + cur.offset[0] + j0 + width;
        } else if (u + 1 < u1) {
          const detail::RowCursor ahead(k, row + 1);
          next = x + ahead.offset[0];
        }
        kS->lse_cols(p.n_red, rs, n, x + cur.offset[0] + j0, next, out);
        finish_rows(ReduceOp::kSum, c.y, c.yp, cur.offset[1] + j0 * ys, ys, out, n, p.n_red);
      }
    });
  }

  void columns() const {
    if (c.op == ReduceOp::kLogSumExp && c.x.dtype == DType::kF32 && p.reduced.rank == 1) {
      lse_columns();
      return;
    }
    const detail::Nest& k = p.kept;
    const detail::Nest& r = p.reduced;
    const i64 L = k.inner(), rows = k.rows();
    // Wide blocks read each reduced row in long contiguous runs; narrower ones while there
    // are too few to share among threads (each output's order is the same either way).
    i64 width = std::min(L, kColBlock);
    while (width > 256 && rows * ((L + width - 1) / width) < detail::max_threads(*handle)) width = (width + 1) / 2;
    const i64 blocks = (L + width - 1) / width;
    const int acc = acc_of(c.op);
    const bool lse = c.op == ReduceOp::kLogSumExp;
    const bool ext = c.op == ReduceOp::kMax || c.op == ReduceOp::kMin;
    const i64 ys = k.inner_stride(1);
    const i64 grain = std::max<i64>(1, kGrain / std::max<i64>(1, width * p.n_red));
    // The kernels read 16-bit floats directly, except in log_sum_exp (staged as f32).
    const int kt = lse ? ti : kernel_type(c.x.dtype, ti);
    const bool narrow = rk::narrow_partials(acc, kt);
    // Blocks of at most kPrefetchRow bytes ask for the elements two groups of reduced indices
    // ahead: runs this short (a [64,64,56,56] reduction over axis 2 reads 224-byte pieces)
    // leave the hardware prefetchers behind (1 thread 0.55-0.61 -> 0.70-0.84 of the copy, Zen 3).
    constexpr i64 kPrefetchRow = 1024, kPrefetchGroups = 2;
    detail::parallel_for(*handle, 0, rows * blocks, grain, [&](i64 u0, i64 u1) {
      // acc, max (lse), kColGroup slots (staged x blocks; log_sum_exp's exponentials)
      auto mem = std::make_unique_for_overwrite<double[]>(static_cast<std::size_t>((2 + rk::kColGroup) * width));
      double* a = mem.get();
      double* mx = mem.get() + width;
      detail::RowCursor cur(k, u0 / blocks);
      for (i64 u = u0; u < u1; ++u) {
        if (u != u0 && u % blocks == 0) cur.next();
        const i64 j0 = (u % blocks) * width, n = std::min(width, L - j0);
        const i64 xoff = cur.offset[0] + j0;
        // Every reduced index in order: fn(block of n elements in the compute type).
        // The n outputs' elements at reduced offset `at`, in the compute type.
        auto block_at = [&](i64 at, int slot = 0) -> const void* {
          if (kt != ti || !detail::is_half(c.x.dtype))
            return static_cast<const char*>(c.xp) + (xoff + at) * static_cast<i64>(dtype_size(c.x.dtype));
          void* xb = mem.get() + (2 + slot) * width;
          const auto* h16 = static_cast<const std::uint16_t*>(c.xp) + xoff + at;
          if (c.x.dtype == DType::kF16) convert_f16_to_f32(reinterpret_cast<const f16*>(h16), static_cast<float*>(xb), static_cast<std::size_t>(n));
          else convert_bf16_to_f32(reinterpret_cast<const bf16*>(h16), static_cast<float*>(xb), static_cast<std::size_t>(n));
          return xb;
        };
        // Every reduced index in order, kColGroup at a time (fewer at the end): fn(blocks, count).
        auto each_group = [&](auto&& fn) {
          const void* g[rk::kColGroup];
          int cnt = 0;
          detail::RowCursor rc(r, 0);
          const i64 rl = r.inner(), rs = r.inner_stride(0);
          const auto eb = static_cast<i64>(dtype_size(c.x.dtype));
          const bool ahead = n * eb <= kPrefetchRow;
          for (i64 row = 0, nr = r.rows(); row < nr; ++row, rc.next())
            for (i64 e = 0; e < rl; ++e) {
              g[cnt] = block_at(rc.offset[0] + e * rs, cnt);
              if (ahead) {  // (past the run's end: the next block's rows, or a harmless hint)
                const auto q = reinterpret_cast<std::uintptr_t>(c.xp) +
                               static_cast<std::uintptr_t>((xoff + rc.offset[0] + (e + kPrefetchGroups * rk::kColGroup) * rs) * eb);
                for (i64 b = 0; b < n * eb; b += 64) __builtin_prefetch(reinterpret_cast<const void*>(q + static_cast<std::uintptr_t>(b)));
              }
              if (++cnt == rk::kColGroup) {
                fn(g, cnt);
                cnt = 0;
              }
            }
          if (cnt > 0) fn(g, cnt);
        };
        // Sums in 32-bit partials (rk::narrow_partials) over kMaxPartialCols reduced indices
        // at a time, folded into 64-bit totals in mx (f64, or i64 for integers).
        auto fold = [&] {
          if (fl) {
            const float* part = reinterpret_cast<const float*>(a);
            for (i64 j = 0; j < n; ++j) mx[j] += part[j];
          } else {
            const auto* part = reinterpret_cast<const std::int32_t*>(a);
            i64* tot = reinterpret_cast<i64*>(mx);
            for (i64 j = 0; j < n; ++j) tot[j] += part[j];
          }
          std::fill(reinterpret_cast<std::uint32_t*>(a), reinterpret_cast<std::uint32_t*>(a) + n, 0u);
        };
        // cnt blocks into dst: the group kernel for a whole group, else one at a time.
        auto into = [&](int k_acc, const void* const* g, int cnt, void* dst) {
          if (cnt == rk::kColGroup) kK->colg[k_acc][kt](n, g, dst);
          else
            for (int q = 0; q < cnt; ++q) kK->col[k_acc][kt](n, g[q], dst);
        };
        auto combine = [&](int k_acc, void* dst) {
          i64 seen = 0;
          each_group([&](const void* const* g, int cnt) {
            into(k_acc, g, cnt, dst);
            seen += cnt;
            if (narrow && seen % rk::kMaxPartialCols == 0) fold();
          });
          if (narrow && seen % rk::kMaxPartialCols != 0) fold();
        };
        auto first_into = [&](void* dst) {  // the first reduced index's elements (offset 0), in the compute type
          const void* b0 = block_at(0);
          if (kt == rk::kF16) convert_f16_to_f32(static_cast<const f16*>(b0), static_cast<float*>(dst), static_cast<std::size_t>(n));
          else if (kt == rk::kBF16) convert_bf16_to_f32(static_cast<const bf16*>(b0), static_cast<float*>(dst), static_cast<std::size_t>(n));
          else std::memcpy(dst, b0, static_cast<std::size_t>(n) * elem_bytes(ti));
        };
        if (ext || lse) {  // extreme elements in the element type
          first_into(lse ? static_cast<void*>(mx) : static_cast<void*>(a));
          combine(acc, lse ? static_cast<void*>(mx) : static_cast<void*>(a));
        }
        if (!ext) {
          if (narrow) {  // 32-bit zeros (f32 and integer), 64-bit zeros
            std::fill(reinterpret_cast<std::uint32_t*>(a), reinterpret_cast<std::uint32_t*>(a) + n, 0u);
            std::fill(reinterpret_cast<i64*>(mx), reinterpret_cast<i64*>(mx) + n, 0);
          } else if (fl) std::fill(a, a + n, acc == rk::kProd ? 1.0 : 0.0);
          else std::fill(reinterpret_cast<i64*>(a), reinterpret_cast<i64*>(a) + n, acc == rk::kProd ? 1 : 0);
          if (!lse) {
            combine(acc, a);
          } else {  // sum of e^(x - max), kColGroup reduced indices at a time
            // (each into its own slot, then one group kernel: the order of as many col
            // calls, so the same bits; one at a time the sums' traffic dominated)
            each_group([&](const void* const* g, int cnt) {
              const void* e[rk::kColGroup];
              for (int q = 0; q < cnt; ++q) {
                void* slot = mem.get() + (2 + q) * width;  // (a half's staged block may be g[q] itself)
                e[q] = slot;
                // (columns whose max is not finite give that max whatever their sum, so their
                // NaN or infinite exponentials may stand: no select, and the loop vectorises)
                if (ti == rk::kF32) {
                  kA->exp_sub(n, static_cast<const float*>(g[q]), reinterpret_cast<const float*>(mx), static_cast<float*>(slot));
                } else {
                  const double* f = static_cast<const double*>(g[q]);
                  double* o = static_cast<double*>(slot);
                  for (i64 j = 0; j < n; ++j) o[j] = std::exp(f[j] - mx[j]);
                }
              }
              into(rk::kSum, e, cnt, a);  // (kt is ti for log_sum_exp)
            });
          }
        }
        // Float results straight through finish_rows (per output, finish() took a quarter of
        // a [64,64,56,56] reduction over axis 2): f64 accumulators, or f32 max/min ones.
        if (!lse && !narrow && (ext ? ti == rk::kF32 || ti == rk::kF64 : fl)) {
          if (ti == rk::kF32 && ext) finish_rows(c.op, c.y, c.yp, cur.offset[1] + j0 * ys, ys, reinterpret_cast<const float*>(a), n, p.n_red);
          else finish_rows(c.op, c.y, c.yp, cur.offset[1] + j0 * ys, ys, a, n, p.n_red);
          continue;
        }
        for (i64 j = 0; j < n; ++j) {
          Part q;
          const i64 yoff = cur.offset[1] + (j0 + j) * ys;
          if (lse) {
            const double m = ti == rk::kF32 ? reinterpret_cast<const float*>(mx)[j] : mx[j];
            finish(ReduceOp::kSum, c.y, c.yp, yoff, {std::isfinite(m) ? m + std::log(a[j]) : m, 0}, p.n_red);
            continue;
          }
          if (narrow) {
            if (fl) q.d = mx[j];
            else q.i = reinterpret_cast<const i64*>(mx)[j];
          } else if (ext) {
            if (ti == rk::kF32) q.d = reinterpret_cast<const float*>(a)[j];
            else if (ti == rk::kF64) q.d = a[j];
            else {
              switch (ti) {
                case rk::kI8: q.i = reinterpret_cast<const std::int8_t*>(a)[j]; break;
                case rk::kU8: q.i = reinterpret_cast<const std::uint8_t*>(a)[j]; break;
                case rk::kI32: q.i = reinterpret_cast<const std::int32_t*>(a)[j]; break;
                default: q.i = reinterpret_cast<const i64*>(a)[j]; break;
              }
            }
          } else if (fl) {
            q.d = a[j];
          } else {
            q.i = reinterpret_cast<const i64*>(a)[j];
          }
          finish(c.op, c.y, c.yp, yoff, q, p.n_red);
        }
      }
    });
  }

  Handle* handle = nullptr;
};

// The result of reducing zero elements.
void fill_empty(const RedCall& c) {
  const bool fl = is_floating(c.y.dtype);
  const double inf = std::numeric_limits<double>::infinity();
  double v = 0.0;
  i64 iv = 0;
  switch (c.op) {
    case ReduceOp::kProd: v = 1.0, iv = 1; break;
    case ReduceOp::kMean: v = std::numeric_limits<double>::quiet_NaN(); break;
    case ReduceOp::kMax: v = -inf; break;
    case ReduceOp::kMin: v = inf; break;
    case ReduceOp::kLogSum:
    case ReduceOp::kLogSumExp: v = -inf; break;
    default: break;
  }
  if (!fl && (c.op == ReduceOp::kMax || c.op == ReduceOp::kMin)) {
    const bool mx = c.op == ReduceOp::kMax;
    switch (c.y.dtype) {
      case DType::kI8: iv = mx ? INT8_MIN : INT8_MAX; break;
      case DType::kU8: iv = mx ? 0 : UINT8_MAX; break;
      case DType::kI32: iv = mx ? INT32_MIN : INT32_MAX; break;
      default: iv = mx ? INT64_MIN : INT64_MAX; break;
    }
  }
  const detail::Nest n = [&] {
    const TensorDesc* o[1] = {&c.y};
    return detail::make_nest(c.y.dims, o);
  }();
  if (c.y.numel() == 0) return;
  detail::RowCursor cur(n, 0);
  for (i64 row = 0; row < n.rows(); ++row, cur.next())
    for (i64 j = 0; j < n.inner(); ++j)
      finish(ReduceOp::kSum, c.y, c.yp, cur.offset[0] + j * n.inner_stride(0), {v, iv}, 0);
}

template <Isa kNeeds>
Status red_accepts(const RedCall&) {
  return detail::isa_allows(kNeeds);
}

template <const rk::Kernels* kK, const ak::Kernels* kA, const sk::Kernels* kS>
Status red_run(Handle& h, const RedCall& c) {
  if (c.y.numel() == 0) return Status::ok();
  const Plan p = plan_of(c);
  if (p.n_red == 0) {
    fill_empty(c);
    return Status::ok();
  }
  const int ti = type_index(c.x.dtype);
  Engine<kK, kA, kS> e{c, p, ti, is_float_type(ti)};
  e.handle = &h;
  // Columns when the kept innermost dim runs contiguously in x below every reduced stride.
  bool col = p.kept.inner_stride(0) == 1 && p.kept.inner() >= 16 && p.n_out > 1;
  for (int i = 0; col && i < p.reduced.rank; ++i)
    col = p.reduced.strides[0][static_cast<std::size_t>(i)] >= p.kept.inner();
  if (col && p.reduced.inner_stride(0) == 1 && p.n_red > 1) col = false;
  if (col) e.columns();
  else e.rows();
  return Status::ok();
}

Status red_ref_run(Handle&, const RedCall& c) {
  ref::reduce(c.op, c.axes, c.x, c.xp, c.y, c.yp);
  return Status::ok();
}

constexpr detail::Impl<RedCall> kRedImpls[] = {
    {"reduce_avx512", &red_accepts<Isa::kAvx512>, &red_run<&rk::kAvx512, &ak::kAvx512, &sk::kAvx512>},
    {"reduce_avx2", &red_accepts<Isa::kAvx2>, &red_run<&rk::kAvx2, &ak::kAvx2, &sk::kAvx2>},
    {"reduce_generic", &red_accepts<Isa::kGeneric>, &red_run<&rk::kGeneric, &ak::kGeneric, &sk::kGeneric>},
    {"reduce_ref", detail::accepts_all<RedCall>, &red_ref_run},
};

}  // namespace

namespace reduce_impl {

bool takes_dtype(ReduceOp op, DType t) {
  const int ti = type_index(t);
  const bool int_ok = op != ReduceOp::kL2 && op != ReduceOp::kLogSum && op != ReduceOp::kLogSumExp;
  return ti >= 0 && (is_float_type(ti) || int_ok);
}

Status run(Handle& h, ReduceOp op, const std::vector<int>& axes, const TensorDesc& x, const void* xp,
           const TensorDesc& y, void* yp) {
  return detail::run_first_accepting(h, "reduce", kRedImpls, RedCall{op, axes, x, xp, y, yp});
}

}  // namespace reduce_impl
}  // namespace tessera::dnn
