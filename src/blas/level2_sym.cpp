// symv and hemv: y = alpha*A*x + beta*y with only one triangle of A stored.
//
// Each stored element is read once: column j of the triangle adds A(i,j) x_j to row i and
// A(i,j) x_i (conjugated for hemv) to row j. The columns are cut into up to kMaxParts parts of
// about equal area, fixed by n alone; part k accumulates into its own vector p_k, the parts
// run in parallel, and t = p_0 + p_1 + ... is summed in order, so the result does not depend
// on the thread count. Then y = beta*y + alpha*t (beta == 0: y is not read).
#include <cmath>

#include "kernels/level2/ops.hpp"

namespace tessera::blas {
namespace {

using detail::cmul;
using detail::conj_if;
using detail::vec_index;
using std::int64_t;

constexpr int64_t kMaxParts = 8;
constexpr int64_t kColumnsPerPart = 256;  // a part is at least this many columns
constexpr int64_t kGroup = 8;             // columns per panel call; part bounds are multiples

// Column boundaries of the parts: multiples of kGroup (so column groups do not depend on the
// parts), equal
// shares of the triangle's area.
std::vector<int64_t> part_bounds(int64_t n, bool upper) {
  const int64_t parts = std::clamp<int64_t>(n / kColumnsPerPart, 1, kMaxParts);
  std::vector<int64_t> b(static_cast<std::size_t>(parts) + 1, n);
  b[0] = 0;
  for (int64_t k = 1; k < parts; ++k) {
    const double f = static_cast<double>(k) / static_cast<double>(parts);
    // Upper: area of columns [0, c) ~ c^2; lower: ~ n^2 - (n - c)^2.
    const double c = upper ? n * std::sqrt(f) : n * (1 - std::sqrt(1 - f));
    b[static_cast<std::size_t>(k)] = std::clamp<int64_t>(std::llround(c / kGroup) * kGroup,
                                                         b[static_cast<std::size_t>(k) - 1], n);
  }
  return b;
}

// p += (the contributions of columns [c0, c1) of the stored triangle) applied to x.
template <typename T, bool Herm>
void sym_columns(const detail::Level2Ops<T>& ops, bool upper, int64_t n, const T* a, int64_t lda,
                 const T* x, int64_t c0, int64_t c1, T* p) {
  auto at = [&](int64_t i, int64_t j) { return a[i + j * lda]; };
  auto diag = [&](int64_t j) {
    if constexpr (Herm)
      return T(at(j, j).real());
    else
      return at(j, j);
  };
  for (int64_t j0 = c0; j0 < c1; j0 += kGroup) {
    const int64_t nc = std::min<int64_t>(kGroup, c1 - j0), j1 = j0 + nc;
    T dots[kGroup] = {};
    // The rectangle off the group's diagonal block, then the block's triangle.
    if (upper) {
      if (j0 > 0) ops.sym_panel(j0, nc, a + j0 * lda, lda, x + j0, x, Herm, p, dots);
      for (int64_t j = j0; j < j1; ++j) {
        T s = dots[j - j0];
        for (int64_t i = j0; i < j; ++i) {
          p[i] += cmul(at(i, j), x[j]);
          s += cmul(conj_if(at(i, j), Herm), x[i]);
        }
        p[j] += cmul(diag(j), x[j]) + s;
      }
    } else {
      if (j1 < n)
        ops.sym_panel(n - j1, nc, a + j1 + j0 * lda, lda, x + j0, x + j1, Herm, p + j1, dots);
      for (int64_t j = j0; j < j1; ++j) {
        T s = dots[j - j0];
        for (int64_t i = j + 1; i < j1; ++i) {
          p[i] += cmul(at(i, j), x[j]);
          s += cmul(conj_if(at(i, j), Herm), x[i]);
        }
        p[j] += cmul(diag(j), x[j]) + s;
      }
    }
  }
}

template <typename T, bool Herm>
Status sym_routine(Handle& h, const char* name, Uplo uplo, int64_t n, T alpha, const T* a,
                   int64_t lda, const T* x, int64_t incx, T beta, T* y, int64_t incy) {
  const std::string fn = detail::fn_name<T>(name);
  TESSERA_RETURN_IF_ERROR(detail::check_uplo(fn, uplo));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "n", n));
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "lda", lda, "n", n));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incx", incx));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incy", incy));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, n > 0));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", x, n > 0));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "y", y, n > 0));
  detail::log_bench<T>(
      h, name, {.n = n, .uplo = detail::uplo_flag(uplo), .incx = incx, .incy = incy, .lda = lda});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  if (n == 0 || (alpha == T(0) && beta == T(1))) return Status::ok();
  if (alpha == T(0)) {
    detail::scale_vector(n, beta, y, incy);
    return Status::ok();
  }
  const bool upper = uplo == Uplo::kUpper;
  const std::vector<int64_t> bounds = part_bounds(n, upper);
  const int64_t parts = static_cast<int64_t>(bounds.size()) - 1;
  // The part vectors are staggered (1 KiB + 256 B apart, mod 4 KiB) so that they, x and a
  // page-aligned A do not all fall into the same cache sets.
  constexpr int64_t kSkew = 256 / static_cast<int64_t>(sizeof(T));
  const int64_t stride = detail::padded<T>(n) + kSkew;
  const bool pack_x = incx != 1;
  TESSERA_ASSIGN_OR_RETURN(T * space,
                           detail::scratch<T>(h, 4 * kSkew + stride * (parts + (pack_x ? 1 : 0))));
  T* buf = space + 4 * kSkew;
  const T* xc = x;
  if (pack_x) {
    T* xp = buf + parts * stride;
    for (int64_t i = 0; i < n; ++i) xp[i] = x[vec_index(i, n, incx)];
    xc = xp;
  }
  std::fill(buf, buf + parts * stride, T(0));
  const detail::Level2Ops<T> ops(fn);
  detail::parallel_for(h, 0, parts, 1, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
      sym_columns<T, Herm>(ops, upper, n, a, lda, xc, bounds[static_cast<std::size_t>(k)],
                           bounds[static_cast<std::size_t>(k) + 1], buf + k * stride);
  });
  detail::for_elements(h, n, [&](int64_t i0, int64_t i1) {
    // t = ((p_0 + p_1) + p_2) + ..., one part at a time so each pass streams two vectors.
    T* t = buf;
    for (int64_t k = 1; k < parts; ++k) {
      const T* pk = buf + k * stride;
      for (int64_t i = i0; i < i1; ++i) t[i] += pk[i];
    }
    for (int64_t i = i0; i < i1; ++i) {
      T& yi = y[vec_index(i, n, incy)];
      yi = beta == T(0) ? cmul(alpha, t[i]) : cmul(beta, yi) + cmul(alpha, t[i]);
    }
  });
  return Status::ok();
}

}  // namespace

template <typename T>
Status symv(Handle& h, Uplo uplo, int64_t n, T alpha, const T* a, int64_t lda, const T* x,
            int64_t incx, T beta, T* y, int64_t incy) {
  return sym_routine<T, false>(h, "symv", uplo, n, alpha, a, lda, x, incx, beta, y, incy);
}

template <typename T>
Status hemv(Handle& h, Uplo uplo, int64_t n, T alpha, const T* a, int64_t lda, const T* x,
            int64_t incx, T beta, T* y, int64_t incy) {
  return sym_routine<T, true>(h, "hemv", uplo, n, alpha, a, lda, x, incx, beta, y, incy);
}

#define TESSERA_LEVEL2_SYMV(T)                                                                    \
  template Status symv<T>(Handle&, Uplo, int64_t, T, const T*, int64_t, const T*, int64_t, T, T*, \
                          int64_t);
TESSERA_LEVEL2_SYMV(float)
TESSERA_LEVEL2_SYMV(double)
TESSERA_LEVEL2_SYMV(cfloat)
TESSERA_LEVEL2_SYMV(cdouble)
#undef TESSERA_LEVEL2_SYMV
template Status hemv<cfloat>(Handle&, Uplo, int64_t, cfloat, const cfloat*, int64_t, const cfloat*,
                             int64_t, cfloat, cfloat*, int64_t);
template Status hemv<cdouble>(Handle&, Uplo, int64_t, cdouble, const cdouble*, int64_t,
                              const cdouble*, int64_t, cdouble, cdouble*, int64_t);

}  // namespace tessera::blas
