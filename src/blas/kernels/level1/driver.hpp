// Shared by the level-1 and level-2 drivers (src/blas/level1*.cpp, level2*.cpp): the replay
// line for TESSERA_LOG=bench, fixed-block reductions and complex arithmetic in plain reals.
#pragma once

#include <sstream>
#include <vector>

#include "../../common.hpp"

namespace tessera::blas::detail {

// The optional parts of a replay line; unset fields are left out.
struct BenchArgs {
  std::int64_t n = 0;
  std::int64_t m = -1;
  const char* trans = nullptr;
  const char* uplo = nullptr;
  const char* diag = nullptr;
  std::int64_t incx = 0, incy = 0, lda = 0;
};

inline const char* uplo_flag(Uplo u) {
  return u == Uplo::kUpper ? "u" : "l";
}
inline const char* diag_flag(Diag d) {
  return d == Diag::kUnit ? "u" : "n";
}
inline const char* trans_flag(Op op) {
  return op == Op::kNoTrans ? "n" : op == Op::kTrans ? "t" : "c";
}

// "tessera bench blas <op> --dtype D --n N [--m M] [--trans t] [--uplo u] [--diag d]
//  [--incx I] [--incy I] [--lda L] --threads T"
template <typename T>
void log_bench(const Handle& h, const char* op, const BenchArgs& a) {
  if (!log::enabled(log::Category::kBench)) return;
  std::ostringstream s;
  s << "tessera bench blas " << op << " --dtype " << dtype_name<T>() << " --n " << a.n;
  if (a.m >= 0) s << " --m " << a.m;
  if (a.trans) s << " --trans " << a.trans;
  if (a.uplo) s << " --uplo " << a.uplo;
  if (a.diag) s << " --diag " << a.diag;
  if (a.incx != 0) s << " --incx " << a.incx;
  if (a.incy != 0) s << " --incy " << a.incy;
  if (a.lda != 0) s << " --lda " << a.lda;
  s << " --threads " << max_threads(h);
  TESSERA_VLOG(kBench) << s.str();
}

// Elements per block of a reduction. Fixed (never derived from the thread count), and block
// results are combined in order, so a reduction gives the same bits for any thread count.
inline constexpr std::int64_t kReduceBlock = 16384;
// Below this many elements per thread an elementwise loop stays on one thread.
inline constexpr std::int64_t kElementGrain = 32768;

// map(begin, end) -> P for each block of kReduceBlock elements, then combine(acc, p) in order.
template <typename P, typename Map, typename Combine>
P reduce_blocks(const Handle& h, std::int64_t n, P acc, const Map& map, const Combine& combine) {
  const std::int64_t nblocks = (n + kReduceBlock - 1) / kReduceBlock;
  if (nblocks <= 1) return n > 0 ? combine(acc, map(0, n)) : acc;
  std::vector<P> partial(static_cast<std::size_t>(nblocks));
  parallel_for(h, 0, nblocks, kElementGrain / kReduceBlock, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b)
      partial[static_cast<std::size_t>(b)] =
          map(b * kReduceBlock, std::min(n, (b + 1) * kReduceBlock));
  });
  for (const P& p : partial) acc = combine(acc, p);
  return acc;
}

// fn(begin, end) over [0, n) on up to max_threads(h) threads, chunks of >= kElementGrain.
template <typename Fn>
void for_elements(const Handle& h, std::int64_t n, const Fn& fn) {
  if (n <= kElementGrain) {
    if (n > 0) fn(std::int64_t{0}, n);
    return;
  }
  parallel_for(h, 0, n, kElementGrain, fn);
}

// Complex products written out in reals (no library fallback for infinities), the formulas
// reference BLAS uses.
template <typename T>
T cmul(T a, T b) {
  if constexpr (is_complex_v<T>)
    return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
  else
    return a * b;
}
template <typename T>
T conj_if(T v, bool conj) {
  if constexpr (is_complex_v<T>)
    return conj ? T(v.real(), -v.imag()) : v;
  else
    return v;
}

}  // namespace tessera::blas::detail
