// trmv (x = op(A) x) and trsv (x = op(A)^-1 x) for a triangular n x n A.
//
// Blocked by kBlock columns: the small triangles on the diagonal follow reference BLAS's
// loops (one column at a time on the gemv kernels), everything off the diagonal is one gemv
// panel per block, so A is read once at gemv speed. One thread: every block depends on the one
// before, and handing each block's panel to the pool costs more than it saves at these sizes
// (OpenBLAS's trsv is single-threaded too). trsv does not test for singularity (reference
// BLAS does not either): a zero on a non-unit diagonal gives infinities or NaNs.
#include "kernels/level2/ops.hpp"

namespace tessera::blas {
namespace {

using detail::cmul;
using detail::conj_if;
using detail::vec_index;
using std::int64_t;

constexpr int64_t kBlock = 128;

// The diagonal block A[k0:k1, k0:k1] applied to (trmv) or solved against (trsv) x[k0:k1], in
// reference BLAS's order; the column updates and dot products run on the gemv kernels (one
// column at a time).
template <typename T, bool Solve>
void diagonal_block(const detail::Level2Ops<T>& ops, bool upper, bool trans, bool conj, bool unit,
                    const T* a, int64_t lda, T* x, int64_t b) {
  auto diag = [&](int64_t j) { return conj_if(a[j + j * lda], conj); };
  if (!trans) {
    // Column by column: x_j's multiple of column j goes into the other rows.
    for (int64_t s = 0; s < b; ++s) {
      const int64_t j = upper == Solve ? b - 1 - s : s;
      const int64_t i0 = upper ? 0 : j + 1, len = upper ? j : b - j - 1;
      if constexpr (Solve) {
        if (!unit) x[j] = x[j] / diag(j);
        const T t = -x[j];
        if (len > 0) ops.gemv_n(len, 1, a + i0 + j * lda, lda, &t, x + i0);
      } else {
        const T t = x[j];
        if (len > 0) ops.gemv_n(len, 1, a + i0 + j * lda, lda, &t, x + i0);
        if (!unit) x[j] = cmul(x[j], diag(j));
      }
    }
  } else {
    // Row j of op(A) is column j of A: a dot product with the rest of x.
    for (int64_t s = 0; s < b; ++s) {
      const int64_t j = upper == Solve ? s : b - 1 - s;
      const int64_t i0 = upper ? 0 : j + 1, len = upper ? j : b - j - 1;
      T r{};
      if (len > 0) ops.gemv_t(len, 1, a + i0 + j * lda, lda, x + i0, conj, &r);
      if constexpr (Solve) {
        x[j] = unit ? x[j] - r : (x[j] - r) / diag(j);
      } else {
        x[j] = (unit ? x[j] : cmul(x[j], diag(j))) + r;
      }
    }
  }
}

// x = op(A) x or op(A)^-1 x on a contiguous x; `tmp` holds kBlock elements.
template <typename T, bool Solve>
void triangular(const detail::Level2Ops<T>& ops, bool upper, Op trans, bool unit, int64_t n,
                const T* a, int64_t lda, T* x, T* tmp) {
  const bool t = trans != Op::kNoTrans, conj = trans == Op::kConjTrans;
  const int64_t nblocks = (n + kBlock - 1) / kBlock;
  // Which way the blocks go: the diagonal block's inputs must still (trmv) or already (trsv)
  // hold their final values. Walking "up" means from the last block to the first.
  const bool backwards = Solve ? (upper != t) : (upper == t);
  for (int64_t s = 0; s < nblocks; ++s) {
    const int64_t k = backwards ? nblocks - 1 - s : s;
    const int64_t k0 = k * kBlock, k1 = std::min(n, k0 + kBlock), b = k1 - k0;
    // The off-diagonal part of block column k: rows [0, k0) if upper, [k1, n) if lower.
    const int64_t r0 = upper ? 0 : k1, rows = upper ? k0 : n - k1;
    const T* panel = a + r0 + k0 * lda;
    const T* diag = a + k0 + k0 * lda;
    if (!t) {
      // x[rows] += (or -=) panel x[k0:k1]; trmv before the diagonal block changes x[k0:k1],
      // trsv after it has solved them.
      if constexpr (Solve)
        diagonal_block<T, true>(ops, upper, false, false, unit, diag, lda, x + k0, b);
      if (rows > 0) {
        for (int64_t i = 0; i < b; ++i) tmp[i] = Solve ? -x[k0 + i] : x[k0 + i];
        ops.gemv_n(rows, b, panel, lda, tmp, x + r0);
      }
      if constexpr (!Solve)
        diagonal_block<T, false>(ops, upper, false, false, unit, diag, lda, x + k0, b);
    } else {
      // x[k0:k1] gets panel^T x[rows]: trmv after its diagonal block, trsv before.
      if constexpr (!Solve)
        diagonal_block<T, false>(ops, upper, true, conj, unit, diag, lda, x + k0, b);
      if (rows > 0) {
        ops.gemv_t(rows, b, panel, lda, x + r0, conj, tmp);
        for (int64_t i = 0; i < b; ++i) x[k0 + i] += Solve ? -tmp[i] : tmp[i];
      }
      if constexpr (Solve)
        diagonal_block<T, true>(ops, upper, true, conj, unit, diag, lda, x + k0, b);
    }
  }
}

template <typename T, bool Solve>
Status tri_routine(Handle& h, const char* name, Uplo uplo, Op trans, Diag diag, int64_t n,
                   const T* a, int64_t lda, T* x, int64_t incx) {
  const std::string fn = detail::fn_name<T>(name);
  TESSERA_RETURN_IF_ERROR(detail::check_uplo(fn, uplo));
  TESSERA_RETURN_IF_ERROR(detail::check_op(fn, "trans", trans));
  TESSERA_RETURN_IF_ERROR(detail::check_diag(fn, diag));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "n", n));
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "lda", lda, "n", n));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incx", incx));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, n > 0));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", x, n > 0));
  detail::log_bench<T>(h, name,
                       {.n = n,
                        .trans = detail::trans_flag(trans),
                        .uplo = detail::uplo_flag(uplo),
                        .diag = detail::diag_flag(diag),
                        .incx = incx,
                        .lda = lda});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  if (n == 0) return Status::ok();
  const bool pack = incx != 1;
  const int64_t nt = detail::padded<T>(kBlock);
  TESSERA_ASSIGN_OR_RETURN(T * buf, detail::scratch<T>(h, nt + (pack ? n : 0)));
  T* xc = x;
  if (pack) {
    xc = buf + nt;
    for (int64_t i = 0; i < n; ++i) xc[i] = x[vec_index(i, n, incx)];
  }
  const detail::Level2Ops<T> ops(fn);
  triangular<T, Solve>(ops, uplo == Uplo::kUpper, trans, diag == Diag::kUnit, n, a, lda, xc, buf);
  if (pack)
    for (int64_t i = 0; i < n; ++i) x[vec_index(i, n, incx)] = xc[i];
  return Status::ok();
}

}  // namespace

template <typename T>
Status trmv(Handle& h, Uplo uplo, Op trans, Diag diag, int64_t n, const T* a, int64_t lda, T* x,
            int64_t incx) {
  return tri_routine<T, false>(h, "trmv", uplo, trans, diag, n, a, lda, x, incx);
}

template <typename T>
Status trsv(Handle& h, Uplo uplo, Op trans, Diag diag, int64_t n, const T* a, int64_t lda, T* x,
            int64_t incx) {
  return tri_routine<T, true>(h, "trsv", uplo, trans, diag, n, a, lda, x, incx);
}

#define TESSERA_LEVEL2_TRI(T)                                                                \
  template Status trmv<T>(Handle&, Uplo, Op, Diag, int64_t, const T*, int64_t, T*, int64_t); \
  template Status trsv<T>(Handle&, Uplo, Op, Diag, int64_t, const T*, int64_t, T*, int64_t);
TESSERA_LEVEL2_TRI(float)
TESSERA_LEVEL2_TRI(double)
TESSERA_LEVEL2_TRI(cfloat)
TESSERA_LEVEL2_TRI(cdouble)
#undef TESSERA_LEVEL2_TRI

}  // namespace tessera::blas
