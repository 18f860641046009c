// gemv and ger (geru/gerc): argument checks, the replay line, packing of strided vectors, then
// the kernels of kernels/level2 with rows (gemv N) or columns (gemv T/C, ger) split over
// threads. Increments must be non-zero (as reference BLAS requires); negative ones walk the
// vector from its far end. Quick returns follow reference BLAS: nothing is touched when m or n
// is 0, or when alpha == 0 and beta == 1. beta == 0 overwrites y without reading it.
#include "kernels/level2/ops.hpp"

namespace tessera::blas {
namespace {

using detail::cmul;
using detail::vec_index;
using std::int64_t;

template <typename T>
Status check_gemv(const std::string& fn, Op trans, int64_t m, int64_t n, const T* a, int64_t lda,
                  const T* x, int64_t incx, const T* y, int64_t incy) {
  TESSERA_RETURN_IF_ERROR(detail::check_op(fn, "trans", trans));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "m", m));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "n", n));
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "lda", lda, "m", m));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incx", incx));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incy", incy));
  const bool work = m > 0 && n > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, work));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", x, work));
  return detail::check_ptr(fn, "y", y, work);
}

// y = alpha * A x + beta * y: y scaled by beta, then y += A (alpha x), alpha folded into x as
// reference BLAS does.
template <typename T>
Status gemv_notrans(Handle& h, const detail::Level2Ops<T>& ops, int64_t m, int64_t n, T alpha,
                    const T* a, int64_t lda, const T* x, int64_t incx, T beta, T* y, int64_t incy) {
  const bool pack_x = incx != 1 || alpha != T(1), pack_y = incy != 1;
  const int64_t nx = pack_x ? detail::padded<T>(n) : 0;
  TESSERA_ASSIGN_OR_RETURN(T * buf, detail::scratch<T>(h, nx + (pack_y ? m : 0)));
  const T* xa = x;
  if (pack_x) {
    for (int64_t j = 0; j < n; ++j) buf[j] = cmul(alpha, x[vec_index(j, n, incx)]);
    xa = buf;
  }
  T* yc = y;
  if (pack_y) {
    yc = buf + nx;
    for (int64_t i = 0; i < m; ++i) yc[i] = y[vec_index(i, m, incy)];
  }
  const int64_t grain = (std::max<int64_t>(64, detail::kMatrixGrain / n) + 63) / 64 * 64;
  detail::parallel_for(h, 0, m, grain, [&](int64_t r0, int64_t r1) {
    if (beta != T(1))
      for (int64_t i = r0; i < r1; ++i) yc[i] = beta == T(0) ? T(0) : cmul(beta, yc[i]);
    ops.gemv_n(r1 - r0, n, a + r0, lda, xa, yc + r0);
  });
  if (pack_y)
    for (int64_t i = 0; i < m; ++i) y[vec_index(i, m, incy)] = yc[i];
  return Status::ok();
}

// y = alpha * op(A)^T x + beta * y with r = op(A)^T x computed per column, then
// y_j = beta y_j + alpha r_j.
template <typename T>
Status gemv_trans(Handle& h, const detail::Level2Ops<T>& ops, bool conj, int64_t m, int64_t n,
                  T alpha, const T* a, int64_t lda, const T* x, int64_t incx, T beta, T* y,
                  int64_t incy) {
  const bool pack_x = incx != 1;
  const int64_t nx = pack_x ? detail::padded<T>(m) : 0;
  TESSERA_ASSIGN_OR_RETURN(T * buf, detail::scratch<T>(h, nx + n));
  const T* xc = x;
  if (pack_x) {
    for (int64_t i = 0; i < m; ++i) buf[i] = x[vec_index(i, m, incx)];
    xc = buf;
  }
  T* r = buf + nx;
  const int64_t groups = (n + 3) / 4;
  const int64_t grain = std::max<int64_t>(1, detail::kMatrixGrain / (4 * m));
  detail::parallel_for(h, 0, groups, grain, [&](int64_t g0, int64_t g1) {
    const int64_t j0 = 4 * g0, j1 = std::min(n, 4 * g1);
    ops.gemv_t(m, j1 - j0, a + j0 * lda, lda, xc, conj, r + j0);
    for (int64_t j = j0; j < j1; ++j) {
      T& yj = y[vec_index(j, n, incy)];
      yj = beta == T(0) ? cmul(alpha, r[j]) : cmul(beta, yj) + cmul(alpha, r[j]);
    }
  });
  return Status::ok();
}

template <typename T, bool Conj>
Status ger_routine(Handle& h, const char* name, int64_t m, int64_t n, T alpha, const T* x,
                   int64_t incx, const T* y, int64_t incy, T* a, int64_t lda) {
  const std::string fn = detail::fn_name<T>(name);
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "m", m));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "n", n));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incx", incx));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incy", incy));
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "lda", lda, "m", m));
  const bool work = m > 0 && n > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", x, work));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "y", y, work));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, work));
  detail::log_bench<T>(h, is_complex_v<T> ? name : "ger",
                       {.n = n, .m = m, .incx = incx, .incy = incy, .lda = lda});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  if (!work || alpha == T(0)) return Status::ok();
  // A(:, j) += x * (alpha * y_j), with y_j conjugated for gerc: reference BLAS's order.
  const bool pack_x = incx != 1;
  const int64_t nx = pack_x ? detail::padded<T>(m) : 0;
  TESSERA_ASSIGN_OR_RETURN(T * buf, detail::scratch<T>(h, nx + n));
  const T* xc = x;
  if (pack_x) {
    for (int64_t i = 0; i < m; ++i) buf[i] = x[vec_index(i, m, incx)];
    xc = buf;
  }
  T* ya = buf + nx;
  for (int64_t j = 0; j < n; ++j)
    ya[j] = cmul(alpha, detail::conj_if(y[vec_index(j, n, incy)], Conj));
  const detail::Level2Ops<T> ops(fn);
  const int64_t grain = std::max<int64_t>(1, detail::kMatrixGrain / m);
  detail::parallel_for(h, 0, n, grain, [&](int64_t j0, int64_t j1) {
    ops.ger(m, j1 - j0, xc, ya + j0, a + j0 * lda, lda);
  });
  return Status::ok();
}

}  // namespace

template <typename T>
Status gemv(Handle& h, Op trans, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* x,
            int64_t incx, T beta, T* y, int64_t incy) {
  const std::string fn = detail::fn_name<T>("gemv");
  TESSERA_RETURN_IF_ERROR(check_gemv(fn, trans, m, n, a, lda, x, incx, y, incy));
  detail::log_bench<T>(
      h, "gemv",
      {.n = n, .m = m, .trans = detail::trans_flag(trans), .incx = incx, .incy = incy, .lda = lda});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) return Status::ok();
  const bool notrans = trans == Op::kNoTrans;
  if (alpha == T(0)) {
    detail::scale_vector(notrans ? m : n, beta, y, incy);
    return Status::ok();
  }
  const detail::Level2Ops<T> ops(fn);
  if (notrans) return gemv_notrans(h, ops, m, n, alpha, a, lda, x, incx, beta, y, incy);
  return gemv_trans(h, ops, trans == Op::kConjTrans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

template <typename T>
Status geru(Handle& h, int64_t m, int64_t n, T alpha, const T* x, int64_t incx, const T* y,
            int64_t incy, T* a, int64_t lda) {
  return ger_routine<T, false>(h, "geru", m, n, alpha, x, incx, y, incy, a, lda);
}

template <typename T>
Status gerc(Handle& h, int64_t m, int64_t n, T alpha, const T* x, int64_t incx, const T* y,
            int64_t incy, T* a, int64_t lda) {
  return ger_routine<T, true>(h, "gerc", m, n, alpha, x, incx, y, incy, a, lda);
}

#define TESSERA_LEVEL2_GEMV(T)                                                                    \
  template Status gemv<T>(Handle&, Op, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, \
                          T, T*, int64_t);                                                        \
  template Status geru<T>(Handle&, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T*, \
                          int64_t);                                                               \
  template Status gerc<T>(Handle&, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T*, \
                          int64_t);
TESSERA_LEVEL2_GEMV(float)
TESSERA_LEVEL2_GEMV(double)
TESSERA_LEVEL2_GEMV(cfloat)
TESSERA_LEVEL2_GEMV(cdouble)
#undef TESSERA_LEVEL2_GEMV

}  // namespace tessera::blas
