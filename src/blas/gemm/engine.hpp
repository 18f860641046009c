// The GEMM engine, BLIS style: five loops around packing.
//
//   for jc in N step NC:                 B panel (KC x NC) lives in L3
//     for pc in K step KC:               pack B[pc:+KC, jc:+NC] into NR-wide micro-panels
//       for ic in M step MC:   (tasks)   pack A[ic:+MC, pc:+KC] into MR-tall micro-panels (L2)
//         for jr in NC step NR:          B micro-panel stays in L1
//           for ir in MC step MR:        microkernel on one MR x NR tile of C
//
// Threads split the ic loop (and the jr loop when M is small) into tasks; the pc loop is never
// split, so each element of C is accumulated in the same order for any thread count and the
// tile grid (multiples of MR and NR from the origin) does not move: results are bitwise
// identical for any thread count.
//
// The engine is generic over the packed element types; callers supply packing functors, which
// is how conjugation, transposition, type widening (bf16/f16 -> f32) and the complex "1m"
// embedding (complex gemm as a real gemm of twice the size) are expressed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "../common.hpp"
#include "../kernels/gemm/kernels.hpp"
#include "tessera/core/cpu.hpp"

namespace tessera::blas::engine {

struct Blocking {
  std::int64_t mc = 0, kc = 0, nc = 0;
  const char* source = "heuristic";  // or "tuned" when read from the tuning database
};

inline std::int64_t round_up(std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; }
inline std::int64_t ceil_div(std::int64_t v, std::int64_t m) { return (v + m - 1) / m; }

// Blocking from the cache sizes: the B micro-panel (KC x NR) fills about half of L1, the A
// block (MC x KC) about half of L2, the B panel (KC x NC) a slice of L3.
Blocking heuristic_blocking(int mr, int nr, int ku, std::size_t a_bytes, std::size_t b_bytes);
// The blocking for a kernel: the tuning database's entry for this machine when there is one
// (written by `tessera tune blas`), else the heuristic. Cached per kernel name.
Blocking blocking_for(const char* kernel_name, int mr, int nr, int ku, std::size_t a_bytes,
                      std::size_t b_bytes);
// Overrides (tests and the tuner): a blocking used for every kernel until cleared.
void set_blocking_override(const Blocking* blocking);

// Tests turn the small-matrix (no packing) path off to exercise the packed engine on small
// shapes too. On by default.
void set_small_path_enabled(bool enabled);
bool small_path_enabled();

// The first kernel of an ordered list whose CPU features are usable.
template <typename U, std::size_t N>
const U* select_ukr(const U (&list)[N]) {
  const CpuInfo& cpu = cpu_info();
  for (const U& u : list) {
    bool ok = true;
    for (int i = 0; i < u.need_count; ++i) ok = ok && cpu.usable(u.need[i]);
    if (ok) return &u;
    TESSERA_VLOG(kDispatch) << "blas: " << u.name << " refused: needs "
                            << cpu_feature_name(u.need[0])
                            << (u.need_count > 1 ? " and " : "")
                            << (u.need_count > 1 ? cpu_feature_name(u.need[1]) : "")
                            << " (isa cap " << isa_name(cpu.isa()) << ")";
  }
  return nullptr;
}

// Per-thread scratch for packed A blocks, 64-byte aligned, grown on demand.
void* thread_scratch(std::size_t bytes);

// Wrap-around multiply-add for integers (two's complement), ordinary arithmetic otherwise.
template <typename TC>
inline TC merge(TC t, TC beta, TC c) {
  if constexpr (std::is_integral_v<TC>) {
    if (beta == 0) return t;
    return static_cast<TC>(static_cast<std::uint32_t>(t) +
                           static_cast<std::uint32_t>(beta) * static_cast<std::uint32_t>(c));
  } else {
    return beta == TC(0) ? t : t + beta * c;
  }
}

// C = beta*C for an m x n column-major matrix (beta == 0 writes zeros, never reads C).
template <typename TC>
void scale_c(std::int64_t m, std::int64_t n, TC beta, TC* c, std::int64_t ldc) {
  if (beta == TC(1)) return;
  for (std::int64_t j = 0; j < n; ++j) {
    TC* cj = c + j * ldc;
    if (beta == TC(0)) {
      std::fill(cj, cj + m, TC(0));
    } else {
      for (std::int64_t i = 0; i < m; ++i) cj[i] = merge<TC>(TC(0), beta, cj[i]);
    }
  }
}

// PackA(TA* dst, i0, p0, rows, kc): rows [i0, i0+rows) and k range [p0, p0+kc) into
// ceil(rows / MR) consecutive micro-panels of MR x round_up(kc, KU), zero-padded.
// PackB(TB* dst, p0, j0, kc, cols): columns [j0, j0+cols) into ceil(cols / NR) micro-panels.
template <typename TA, typename TB, typename TC, typename PackA, typename PackB>
Status run(Handle& h, const kernels::GemmUkr<TA, TB, TC>& u, const Blocking& blk,
           std::int64_t m, std::int64_t n, std::int64_t k, const PackA& pack_a,
           const PackB& pack_b, TC alpha, TC beta, TC* c, std::int64_t ldc) {
  if (m == 0 || n == 0) return Status::ok();
  if (k == 0 || alpha == TC(0)) {
    scale_c(m, n, beta, c, ldc);
    return Status::ok();
  }
  const std::int64_t mr = u.mr, nr = u.nr, ku = u.ku;
  constexpr std::int64_t kMaxTile = 32 * 16;  // the edge-tile buffer below
  TESSERA_ASSERT(mr * nr <= kMaxTile, "gemm microkernel tile larger than the edge buffer");
  // K blocks of equal size (a short last block would pay the C update for little work). The
  // split depends on k and the blocking only, never on the thread count.
  const std::int64_t kc_max = round_up(ceil_div(k, ceil_div(k, blk.kc)), ku);
  const std::int64_t nc_max = std::min(blk.nc, round_up(n, nr));
  // Threads only where each gets enough work to repay the fork/join (about 1 MFLOP each).
  const std::int64_t work = m * n * std::max<std::int64_t>(k, 1) / (1 << 20);
  const int threads = static_cast<int>(
      std::clamp<std::int64_t>(work, 1, detail::max_threads(h)));
  auto par = [&](std::int64_t b0, std::int64_t b1, std::int64_t grain, const auto& fn) {
    if (threads == 1 || b1 - b0 <= 1) fn(b0, b1);
    else detail::parallel_for(h, b0, b1, std::max(grain, ceil_div(b1 - b0, threads)), fn);
  };

  // Tasks: split M into blocks (a multiple of the thread count when M is large enough, which
  // also balances the load), else split the NR panels of the B block.
  const std::int64_t m_panels = ceil_div(m, mr);
  std::int64_t mb = ceil_div(m, blk.mc);
  if (threads > 1 && m_panels >= 4 * threads) mb = round_up(mb, threads);
  mb = std::min(mb, m_panels);
  const std::int64_t mc = round_up(ceil_div(m, mb), mr);
  mb = ceil_div(m, mc);

  const std::size_t b_panel_elems = static_cast<std::size_t>(round_up(kc_max, ku) * nr);
  const std::size_t b_bytes =
      b_panel_elems * static_cast<std::size_t>(ceil_div(nc_max, nr)) * sizeof(TB);
  TESSERA_ASSIGN_OR_RETURN(void* b_mem, detail::workspace(h, b_bytes));
  TB* bp = static_cast<TB*>(b_mem);
  const std::size_t a_panel_elems = static_cast<std::size_t>(round_up(kc_max, ku) * mr);

  for (std::int64_t jc = 0; jc < n; jc += blk.nc) {
    const std::int64_t ncur = std::min(blk.nc, n - jc);
    const std::int64_t n_panels = ceil_div(ncur, nr);
    const std::int64_t nsplit =
        mb >= threads ? 1 : std::min<std::int64_t>(n_panels, ceil_div(threads, mb));
    for (std::int64_t pc = 0; pc < k; pc += kc_max) {
      const std::int64_t kcur = std::min(kc_max, k - pc);
      const std::int64_t kpad = round_up(kcur, ku);
      const TC beta_pc = pc == 0 ? beta : TC(1);
      par(0, n_panels, 4, [&](std::int64_t q0, std::int64_t q1) {
        pack_b(bp + q0 * kpad * nr, pc, jc + q0 * nr, kcur, std::min(q1 * nr, ncur) - q0 * nr);
      });
      par(0, mb * nsplit, 1, [&](std::int64_t t0, std::int64_t t1) {
        TA* ap = static_cast<TA*>(
            thread_scratch(a_panel_elems * static_cast<std::size_t>(ceil_div(mc, mr)) * sizeof(TA)));
        std::int64_t packed_block = -1;
        alignas(64) TC tmp[kMaxTile];
        for (std::int64_t t = t0; t < t1; ++t) {
          const std::int64_t ib = t / nsplit, js = t % nsplit;
          const std::int64_t i0 = ib * mc, mcur = std::min(mc, m - i0);
          const std::int64_t a_panels = ceil_div(mcur, mr);
          if (packed_block != ib) {
            pack_a(ap, i0, pc, mcur, kcur);
            packed_block = ib;
          }
          const std::int64_t q0 = n_panels * js / nsplit, q1 = n_panels * (js + 1) / nsplit;
          for (std::int64_t q = q0; q < q1; ++q) {
            const std::int64_t j0 = jc + q * nr, nrem = std::min(nr, ncur - q * nr);
            const TB* bq = bp + q * kpad * nr;
            for (std::int64_t ip = 0; ip < a_panels; ++ip) {
              const std::int64_t r0 = i0 + ip * mr, mrem = std::min(mr, mcur - ip * mr);
              TC* ct = c + r0 + j0 * ldc;
              if (mrem == mr && nrem == nr) {
                u.fn(kpad, ap + ip * kpad * mr, bq, ct, ldc, alpha, beta_pc);
              } else {
                u.fn(kpad, ap + ip * kpad * mr, bq, tmp, mr, alpha, TC(0));
                for (std::int64_t j = 0; j < nrem; ++j)
                  for (std::int64_t r = 0; r < mrem; ++r)
                    ct[r + j * ldc] = merge<TC>(tmp[r + j * mr], beta_pc, ct[r + j * ldc]);
              }
            }
          }
        }
      });
    }
  }
  return Status::ok();
}

// ---- packing helpers --------------------------------------------------------------------

// A strided matrix view with an element transform (conjugation, widening): element (i, p) is
// f(ptr[i * rs + p * cs]).
template <typename TSrc, typename F>
struct View {
  static constexpr bool kDirect = true;  // element (i, p) is f(ptr[i * rs + p * cs])
  const TSrc* ptr;
  std::int64_t rs, cs;
  F f;
  auto operator()(std::int64_t i, std::int64_t p) const { return f(ptr[i * rs + p * cs]); }
};
struct Identity {
  template <typename T>
  T operator()(T v) const { return v; }
};

// d[j] = f(s[j]) for j < n: one run of a packed micro-panel row. Runs of a plain copy as long as
// a register block (the common widths, known at compile time) are fixed-size copies the
// compiler turns into a few vector moves: the element loop with its run-time count made the
// packing of B a quarter of a 64 x 64 x 3136 GEMM (a weight gradient's shape).
template <typename T, typename S, typename F>
inline void pack_run(T* d, const S* s, std::int64_t n, const F& f) {
  if constexpr (std::is_same_v<T, S> && std::is_same_v<F, Identity>) {
    auto fixed = [&]<int N>() {
      if (n != N) return false;
      std::memcpy(d, s, N * sizeof(T));
      return true;
    };
    if (fixed.template operator()<4>() || fixed.template operator()<6>() ||
        fixed.template operator()<8>() || fixed.template operator()<12>() ||
        fixed.template operator()<16>() || fixed.template operator()<24>() ||
        fixed.template operator()<32>())
      return;
  }
  for (std::int64_t j = 0; j < n; ++j) d[j] = static_cast<T>(f(s[j]));
}

// Copies a `width` x kc block whose columns (length kc) are `lds` apart into rows of `ldd`:
// dst[p * ldd + j] = src[j * lds + p]. 4x4 SSE transposes (SSE2 is part of x86-64) where the
// block allows, scalar at the edges: about 3.5x faster than strided scalar stores.
inline void transpose_copy(float* dst, std::int64_t ldd, const float* src, std::int64_t lds,
                           std::int64_t width, std::int64_t kc) {
  std::int64_t j = 0;
#if defined(__SSE2__)
  for (; j + 4 <= width; j += 4) {
    const float* s0 = src + j * lds;
    std::int64_t p = 0;
    for (; p + 4 <= kc; p += 4) {
      __m128 r0 = _mm_loadu_ps(s0 + p), r1 = _mm_loadu_ps(s0 + lds + p);
      __m128 r2 = _mm_loadu_ps(s0 + 2 * lds + p), r3 = _mm_loadu_ps(s0 + 3 * lds + p);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(dst + p * ldd + j, r0);
      _mm_storeu_ps(dst + (p + 1) * ldd + j, r1);
      _mm_storeu_ps(dst + (p + 2) * ldd + j, r2);
      _mm_storeu_ps(dst + (p + 3) * ldd + j, r3);
    }
    for (; p < kc; ++p)
      for (std::int64_t u = 0; u < 4; ++u) dst[p * ldd + j + u] = s0[u * lds + p];
  }
#endif
  for (; j < width; ++j)
    for (std::int64_t p = 0; p < kc; ++p) dst[p * ldd + j] = src[j * lds + p];
}

template <typename TSrc, typename F>
View<TSrc, F> make_view(const TSrc* ptr, std::int64_t rs, std::int64_t cs, F f) {
  return {ptr, rs, cs, f};
}

// Packs rows [i0, i0+rows) x k range [p0, p0+kc) of `a` into ceil(rows / mr) micro-panels of
// mr x round_up(kc, ku) (layout in kernels.hpp: element (r, p) of a panel at
// (p - p % ku) * mr + r * ku + p % ku), zero padding the rest. Reads along the contiguous
// direction of the source, a whole column of the block at a time where columns are contiguous
// (one pass over each source page instead of one per micro-panel).
template <typename TA, typename V>
void pack_block_a(TA* dst, std::int64_t mr, std::int64_t ku, const V& a, std::int64_t i0,
                  std::int64_t p0, std::int64_t rows, std::int64_t kc) {
  const std::int64_t kpad = round_up(kc, ku), panels = ceil_div(rows, mr);
  const std::int64_t last = rows - (panels - 1) * mr;
  if (last < mr || kpad != kc) {
    TA* lp = dst + (panels - 1) * kpad * mr;
    if (kpad != kc) std::memset(static_cast<void*>(dst), 0, sizeof(TA) * mr * kpad * panels);
    else std::memset(static_cast<void*>(lp), 0, sizeof(TA) * mr * kpad);
  }
  if constexpr (requires { V::kDirect; }) {
    if (ku > 1 && a.rs == 1 && kc % ku == 0) {  // interleave ku contiguous columns
      for (std::int64_t pb = 0; pb < kc; pb += ku)
        for (std::int64_t ip = 0; ip < panels; ++ip) {
          TA* d = dst + ip * kpad * mr + pb * mr;
          const std::int64_t n = ip + 1 < panels ? mr : last;
          const auto* s = a.ptr + i0 + ip * mr + (p0 + pb) * a.cs;
          for (std::int64_t r = 0; r < n; ++r)
            for (std::int64_t u = 0; u < ku; ++u) d[r * ku + u] = static_cast<TA>(a.f(s[r + u * a.cs]));
        }
      return;
    }
    if (ku == 1 && a.rs == 1) {
      for (std::int64_t p = 0; p < kc; ++p) {
        const auto* src = a.ptr + i0 + (p0 + p) * a.cs;
        for (std::int64_t ip = 0; ip < panels; ++ip) {
          TA* d = dst + ip * kpad * mr + p * mr;
          pack_run(d, src + ip * mr, ip + 1 < panels ? mr : last, a.f);
        }
      }
      return;
    }
    if (ku == 1 && a.cs == 1) {  // rows contiguous: a transposing copy
      if constexpr (std::is_same_v<TA, float> && std::is_same_v<decltype(a.ptr), const float*> &&
                    std::is_same_v<std::remove_cvref_t<decltype(a.f)>, Identity>) {
        for (std::int64_t ip = 0; ip < panels; ++ip)
          transpose_copy(dst + ip * kpad * mr, mr, a.ptr + (i0 + ip * mr) * a.rs + p0, a.rs,
                         ip + 1 < panels ? mr : last, kc);
        return;
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        const auto* src = a.ptr + (i0 + r) * a.rs + p0;
        TA* d = dst + (r / mr) * kpad * mr + r % mr;
        for (std::int64_t p = 0; p < kc; ++p) d[p * mr] = static_cast<TA>(a.f(src[p]));
      }
      return;
    }
  }
  for (std::int64_t ip = 0; ip < panels; ++ip) {
    TA* d0 = dst + ip * kpad * mr;
    const std::int64_t base = i0 + ip * mr, n = ip + 1 < panels ? mr : last;
    if (a.rs == 1 || a.cs != 1) {
      for (std::int64_t pb = 0; pb < kc; pb += ku)
        for (std::int64_t u = 0; u < ku && pb + u < kc; ++u) {
          TA* d = d0 + pb * mr + u;
          for (std::int64_t r = 0; r < n; ++r) d[r * ku] = static_cast<TA>(a(base + r, p0 + pb + u));
        }
    } else {
      for (std::int64_t r = 0; r < n; ++r)
        for (std::int64_t pb = 0; pb < kc; pb += ku)
          for (std::int64_t u = 0; u < ku && pb + u < kc; ++u)
            d0[pb * mr + r * ku + u] = static_cast<TA>(a(base + r, p0 + pb + u));
    }
  }
}

// Packs k range [p0, p0+kc) x columns [j0, j0+cols) of `b` (b(p, j)) into ceil(cols / nr)
// micro-panels of round_up(kc, ku) x nr: element (p, j) at (p - p % ku) * nr + j * ku + p % ku.
template <typename TB, typename V>
void pack_block_b(TB* dst, std::int64_t nr, std::int64_t ku, const V& b, std::int64_t p0,
                  std::int64_t j0, std::int64_t kc, std::int64_t cols) {
  const std::int64_t kpad = round_up(kc, ku), panels = ceil_div(cols, nr);
  const std::int64_t last = cols - (panels - 1) * nr;
  if (last < nr || kpad != kc) {
    TB* lp = dst + (panels - 1) * kpad * nr;
    if (kpad != kc) std::memset(static_cast<void*>(dst), 0, sizeof(TB) * nr * kpad * panels);
    else std::memset(static_cast<void*>(lp), 0, sizeof(TB) * nr * kpad);
  }
  if constexpr (requires { V::kDirect; }) {
    if (ku > 1 && b.rs == 1 && kc % ku == 0) {  // ku consecutive k of a column stay together
      for (std::int64_t j = 0; j < cols; ++j) {
        const auto* src = b.ptr + p0 + (j0 + j) * b.cs;
        TB* d = dst + (j / nr) * kpad * nr + (j % nr) * ku;
        for (std::int64_t pb = 0; pb < kc; pb += ku)
          for (std::int64_t u = 0; u < ku; ++u) d[pb * nr + u] = static_cast<TB>(b.f(src[pb + u]));
      }
      return;
    }
    if (ku == 1 && b.cs == 1) {  // rows of op(B) contiguous: one pass per k
      for (std::int64_t p = 0; p < kc; ++p) {
        const auto* src = b.ptr + (p0 + p) * b.rs + j0;
        for (std::int64_t q = 0; q < panels; ++q) {
          TB* d = dst + q * kpad * nr + p * nr;
          pack_run(d, src + q * nr, q + 1 < panels ? nr : last, b.f);
        }
      }
      return;
    }
    if (ku == 1 && b.rs == 1) {  // columns contiguous: a transposing copy
      if constexpr (std::is_same_v<TB, float> && std::is_same_v<decltype(b.ptr), const float*> &&
                    std::is_same_v<std::remove_cvref_t<decltype(b.f)>, Identity>) {
        for (std::int64_t q = 0; q < panels; ++q)
          transpose_copy(dst + q * kpad * nr, nr, b.ptr + p0 + (j0 + q * nr) * b.cs, b.cs,
                         q + 1 < panels ? nr : last, kc);
        return;
      }
      for (std::int64_t j = 0; j < cols; ++j) {
        const auto* src = b.ptr + p0 + (j0 + j) * b.cs;
        TB* d = dst + (j / nr) * kpad * nr + j % nr;
        for (std::int64_t p = 0; p < kc; ++p) d[p * nr] = static_cast<TB>(b.f(src[p]));
      }
      return;
    }
  }
  for (std::int64_t q = 0; q < panels; ++q) {
    TB* d0 = dst + q * kpad * nr;
    const std::int64_t base = j0 + q * nr, n = q + 1 < panels ? nr : last;
    if (b.rs == 1 || b.cs != 1) {  // k contiguous within a column: walk p fastest
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t pb = 0; pb < kc; pb += ku)
          for (std::int64_t u = 0; u < ku && pb + u < kc; ++u)
            d0[pb * nr + j * ku + u] = static_cast<TB>(b(p0 + pb + u, base + j));
    } else {
      for (std::int64_t pb = 0; pb < kc; pb += ku)
        for (std::int64_t u = 0; u < ku && pb + u < kc; ++u) {
          TB* d = d0 + pb * nr + u;
          for (std::int64_t j = 0; j < n; ++j) d[j * ku] = static_cast<TB>(b(p0 + pb + u, base + j));
        }
    }
  }
}

}  // namespace tessera::blas::engine
