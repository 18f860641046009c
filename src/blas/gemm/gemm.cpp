// gemm for s, d, c, z and the batched variants. Real types run the packed engine directly;
// complex types run it as a real gemm of twice the size (the "1m" method: each complex a
// becomes the 2x2 real block [re -im; im re] in packed A, each complex b the pair [re; im]
// in packed B), so every complex gemm uses the same tuned real microkernels.
#include <new>

#include "../common.hpp"
#include "engine.hpp"
#include "blocking_key.hpp"
#include "gemm_common.hpp"

namespace tessera::blas {
namespace {

template <typename R>
const kernels::GemmUkr<R, R, R>& real_ukr() {
  const kernels::GemmUkr<R, R, R>* u;
  if constexpr (std::is_same_v<R, float>) u = engine::select_ukr(kernels::kGemmF32);
  else u = engine::select_ukr(kernels::kGemmF64);
  TESSERA_ASSERT(u != nullptr, "the generic gemm kernel is always usable");
  return *u;
}

template <typename R>
engine::Blocking real_blocking(const kernels::GemmUkr<R, R, R>& u) {
  return engine::blocking_for(u.name, u.mr, u.nr, u.ku, sizeof(R), sizeof(R));
}

// Problems up to this many multiply-adds skip packing when A's columns are contiguous. The
// choice depends on the shape only (never on the thread count), so results stay identical
// for any thread count.
constexpr std::int64_t kSmallGemmMaxWork = std::int64_t{1} << 21;
constexpr std::int64_t kSmallGemmMaxRows = 64;

template <typename S, std::size_t N>
const S* first_usable(const S (&list)[N]) {
  for (const S& s : list)
    if (cpu_info().usable(s.need)) return &s;
  return nullptr;
}

template <typename R>
const kernels::GemmSmall<R>* small_kernel() {
  if constexpr (std::is_same_v<R, float>) return first_usable(kernels::kGemmSmallF32);
  else return first_usable(kernels::kGemmSmallF64);
}

template <typename R>
Status real_gemm(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                 R alpha, const R* a, std::int64_t lda, const R* b, std::int64_t ldb, R beta,
                 R* c, std::int64_t ldc) {
  // Problems with few rows or few columns of C also skip packing: packing the long operand
  // would cost about as much as the arithmetic, while the short one stays in cache.
  const bool small = m > 0 && n > 0 && k > 0 && alpha != R(0) &&
                     (m * n * k <= kSmallGemmMaxWork || m <= kSmallGemmMaxRows ||
                      (n <= kSmallGemmMaxRows && k <= 2048));
  if (small && ta == Op::kNoTrans && engine::small_path_enabled()) {
    if (const auto* s = small_kernel<R>()) {
      const bool nb = tb == Op::kNoTrans;
      const std::int64_t rsb = nb ? 1 : ldb, csb = nb ? ldb : 1;
      // Threads take whole tiles (row blocks when C is tall, column blocks otherwise), so each
      // element is computed the same way for any thread count; at least about half a million
      // multiply-adds per thread.
      const bool tall = m > n;
      const std::int64_t unit = tall ? s->mb : s->nb, extent = tall ? m : n;
      const std::int64_t blocks = engine::ceil_div(extent, unit);
      const std::int64_t per_block = unit * k * (tall ? n : m);
      const std::int64_t grain = std::max<std::int64_t>(1, ((1 << 19) + per_block - 1) / per_block);
      auto run = [&](std::int64_t q0, std::int64_t q1) {
        const std::int64_t e0 = q0 * unit, e1 = std::min(extent, q1 * unit);
        if (tall)
          s->fn(e1 - e0, n, k, alpha, a + e0, lda, b, rsb, csb, beta, c + e0, ldc);
        else
          s->fn(m, e1 - e0, k, alpha, a, lda, b + e0 * csb, rsb, csb, beta, c + e0 * ldc, ldc);
      };
      // One chunk: call directly (no std::function, no pool) — this is the tiny-gemm hot path.
      if (blocks <= grain) run(0, blocks);
      else detail::parallel_for(h, 0, blocks, grain, run);
      return Status::ok();
    }
  }
  const auto& u = real_ukr<R>();
  const engine::Identity id;
  const bool na = ta == Op::kNoTrans, nb = tb == Op::kNoTrans;
  const auto av = engine::make_view(a, na ? 1 : lda, na ? lda : 1, id);  // op(A)(i, p)
  const auto bv = engine::make_view(b, nb ? 1 : ldb, nb ? ldb : 1, id);  // op(B)(p, j)
  return engine::run(
      h, u, real_blocking(u), m, n, k,
      [&](R* dst, std::int64_t i0, std::int64_t p0, std::int64_t rows, std::int64_t kc) {
        engine::pack_block_a(dst, u.mr, u.ku, av, i0, p0, rows, kc);
      },
      [&](R* dst, std::int64_t p0, std::int64_t j0, std::int64_t kc, std::int64_t cols) {
        engine::pack_block_b(dst, u.nr, u.ku, bv, p0, j0, kc, cols);
      },
      alpha, beta, c, ldc);
}

// Real view of op(A) for the 1m method: row ir, column pr of the 2m x 2k real matrix.
template <typename R>
struct OneMA {
  const std::complex<R>* ptr;
  std::int64_t crs, ccs;  // complex strides of op(A)
  bool conj;
  std::int64_t rs, cs;    // real-view strides, for the packer's choice of loop order
  R operator()(std::int64_t ir, std::int64_t pr) const {
    std::complex<R> v = ptr[(ir >> 1) * crs + (pr >> 1) * ccs];
    const R re = v.real(), im = conj ? -v.imag() : v.imag();
    if ((ir & 1) == 0) return (pr & 1) == 0 ? re : -im;
    return (pr & 1) == 0 ? im : re;
  }
};

// Real view of alpha*op(B): row pr of the 2k x n real matrix, column j.
template <typename R>
struct OneMB {
  const std::complex<R>* ptr;
  std::int64_t crs, ccs;
  bool conj;
  std::complex<R> alpha;
  std::int64_t rs, cs;
  R operator()(std::int64_t pr, std::int64_t j) const {
    std::complex<R> v = ptr[(pr >> 1) * crs + j * ccs];
    if (conj) v = std::conj(v);
    v *= alpha;
    return (pr & 1) == 0 ? v.real() : v.imag();
  }
};

template <typename R>
Status complex_gemm(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                    std::complex<R> alpha, const std::complex<R>* a, std::int64_t lda,
                    const std::complex<R>* b, std::int64_t ldb, std::complex<R> beta,
                    std::complex<R>* c, std::int64_t ldc) {
  using C = std::complex<R>;
  if (m == 0 || n == 0) return Status::ok();
  if (k == 0 || alpha == C(0)) {
    engine::scale_c(m, n, beta, c, ldc);
    return Status::ok();
  }
  R kbeta = 1;
  if (beta == C(0)) kbeta = 0;
  else if (beta != C(1)) engine::scale_c(m, n, beta, c, ldc);

  const auto& u = real_ukr<R>();
  const bool na = ta == Op::kNoTrans, nb = tb == Op::kNoTrans;
  const std::int64_t ars = na ? 1 : lda, acs = na ? lda : 1;
  const std::int64_t brs = nb ? 1 : ldb, bcs = nb ? ldb : 1;
  const OneMA<R> av{a, ars, acs, ta == Op::kConjTrans, na ? 1 : 2 * lda, na ? 2 * lda : 1};
  const OneMB<R> bv{b, brs, bcs, tb == Op::kConjTrans, alpha, nb ? 1 : 2 * ldb, nb ? 2 * ldb : 1};
  return engine::run(
      h, u, real_blocking(u), 2 * m, n, 2 * k,
      [&](R* dst, std::int64_t i0, std::int64_t p0, std::int64_t rows, std::int64_t kc) {
        engine::pack_block_a(dst, u.mr, u.ku, av, i0, p0, rows, kc);
      },
      [&](R* dst, std::int64_t p0, std::int64_t j0, std::int64_t kc, std::int64_t cols) {
        engine::pack_block_b(dst, u.nr, u.ku, bv, p0, j0, kc, cols);
      },
      R(1), kbeta, reinterpret_cast<R*>(c), 2 * ldc);
}

template <typename T>
Status gemm_dispatch(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                     T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
                      T beta, T* c, std::int64_t ldc) {
  // A single row or column of C is a matrix-vector product: gemv reads the matrix once,
  // vectorised along its contiguous direction, where a tile kernel would waste most lanes.
  // (Conjugation without transposition has no gemv form; those calls stay here.)
  if (k > 0 && alpha != T(0)) {
    if (m == 1 && ta != Op::kConjTrans && tb != Op::kConjTrans && n > 1) {
      const std::int64_t incx = ta == Op::kNoTrans ? lda : 1;  // row 0 of op(A)
      return tb == Op::kNoTrans ? gemv<T>(h, Op::kTrans, k, n, alpha, b, ldb, a, incx, beta, c, ldc)
                                : gemv<T>(h, Op::kNoTrans, n, k, alpha, b, ldb, a, incx, beta, c, ldc);
    }
    if (n == 1 && tb != Op::kConjTrans) {
      const std::int64_t incx = tb == Op::kNoTrans ? 1 : ldb;  // column 0 of op(B)
      return ta == Op::kNoTrans ? gemv<T>(h, Op::kNoTrans, m, k, alpha, a, lda, b, incx, beta, c, 1)
                                : gemv<T>(h, ta, k, m, alpha, a, lda, b, incx, beta, c, 1);
    }
  }
  if constexpr (is_complex_v<T>)
    return complex_gemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    return real_gemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <typename T>
std::string scalar_str(T v) {
  if constexpr (is_complex_v<T>) return detail::fmt_scalar(v.real()) + "," + detail::fmt_scalar(v.imag());
  else return detail::fmt_scalar(v);
}

}  // namespace

template <typename T>
Status gemm(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
            const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
            std::int64_t ldc) {
  const std::string fn = detail::fn_name<T>("gemm");
  TESSERA_RETURN_IF_ERROR(detail::check_gemm_args(fn, ta, tb, m, n, k, a, lda, b, ldb, c, ldc));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  TESSERA_VLOG(kBench) << detail::gemm_bench_line(detail::dtype_name<T>(), ta, tb, m, n, k, lda,
                                                  ldb, ldc, scalar_str(alpha), scalar_str(beta),
                                                  0, detail::max_threads(h));
  return detail::guard_oom(fn, [&] {
    return gemm_dispatch(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}

template <typename T>
Status gemm_strided_batched(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n,
                            std::int64_t k, T alpha, const T* a, std::int64_t lda,
                            std::int64_t stride_a, const T* b, std::int64_t ldb,
                            std::int64_t stride_b, T beta, T* c, std::int64_t ldc,
                            std::int64_t stride_c, std::int64_t batch) {
  const std::string fn = detail::fn_name<T>("gemm_strided_batched");
  TESSERA_RETURN_IF_ERROR(detail::check_batch(fn, batch));
  TESSERA_RETURN_IF_ERROR(detail::check_gemm_args(fn, ta, tb, m, n, k, a, lda, b, ldb, c, ldc));
  TESSERA_RETURN_IF_ERROR(detail::check_strides(fn, m, n, ldc, stride_c, batch));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  TESSERA_VLOG(kBench) << detail::gemm_bench_line(detail::dtype_name<T>(), ta, tb, m, n, k, lda,
                                                  ldb, ldc, scalar_str(alpha), scalar_str(beta),
                                                  batch, detail::max_threads(h));
  return detail::guard_oom(fn, [&] {
    return detail::run_batch(h, batch, m, n, k, [&](Handle& hh, std::int64_t i) {
      return gemm_dispatch(hh, ta, tb, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b,
                            ldb, beta, c + i * stride_c, ldc);
    });
  });
}

template <typename T>
Status gemm_batched(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                    T alpha, const T* const a[], std::int64_t lda, const T* const b[],
                    std::int64_t ldb, T beta, T* const c[], std::int64_t ldc,
                    std::int64_t batch) {
  const std::string fn = detail::fn_name<T>("gemm_batched");
  TESSERA_RETURN_IF_ERROR(detail::check_batch(fn, batch));
  TESSERA_RETURN_IF_ERROR(detail::check_op(fn, "transa", ta));
  TESSERA_RETURN_IF_ERROR(detail::check_op(fn, "transb", tb));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, batch > 0));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "b", b, batch > 0));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "c", c, batch > 0));
  for (std::int64_t i = 0; i < batch; ++i)
    TESSERA_RETURN_IF_ERROR(detail::check_gemm_args(fn + " [" + std::to_string(i) + "]", ta, tb,
                                                    m, n, k, a[i], lda, b[i], ldb, c[i], ldc));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  TESSERA_VLOG(kBench) << detail::gemm_bench_line(detail::dtype_name<T>(), ta, tb, m, n, k, lda,
                                                  ldb, ldc, scalar_str(alpha), scalar_str(beta),
                                                  batch, detail::max_threads(h));
  return detail::guard_oom(fn, [&] {
    return detail::run_batch(h, batch, m, n, k, [&](Handle& hh, std::int64_t i) {
      return gemm_dispatch(hh, ta, tb, m, n, k, alpha, a[i], lda, b[i], ldb, beta, c[i], ldc);
    });
  });
}

namespace detail {
template <typename T>
Status gemm_unchecked(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                      T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
                      T beta, T* c, std::int64_t ldc) {
  return guard_oom(fn_name<T>("gemm"), [&] {
    return gemm_dispatch(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}
}  // namespace detail

std::string describe_gemm(const char* dtype, std::int64_t, std::int64_t, std::int64_t) {
  const std::string d = dtype;
  auto show = [](const auto& u, engine::Blocking b) {
    return std::string(u.name) + " " + engine::blocking_params(b) + " (" + b.source + ")";
  };
  if (d == "f32" || d == "c64") return show(real_ukr<float>(), real_blocking(real_ukr<float>()));
  if (d == "f64" || d == "c128") return show(real_ukr<double>(), real_blocking(real_ukr<double>()));
  return describe_lowp_gemm(d);
}

#define TESSERA_INSTANTIATE(T)                                                                \
  template Status gemm<T>(Handle&, Op, Op, std::int64_t, std::int64_t, std::int64_t, T,        \
                          const T*, std::int64_t, const T*, std::int64_t, T, T*, std::int64_t); \
  template Status gemm_strided_batched<T>(Handle&, Op, Op, std::int64_t, std::int64_t,         \
                                          std::int64_t, T, const T*, std::int64_t,             \
                                          std::int64_t, const T*, std::int64_t, std::int64_t,  \
                                          T, T*, std::int64_t, std::int64_t, std::int64_t);    \
  template Status gemm_batched<T>(Handle&, Op, Op, std::int64_t, std::int64_t, std::int64_t,   \
                                  T, const T* const[], std::int64_t, const T* const[],         \
                                  std::int64_t, T, T* const[], std::int64_t, std::int64_t);  \
  template Status detail::gemm_unchecked<T>(Handle&, Op, Op, std::int64_t, std::int64_t,       \
                                            std::int64_t, T, const T*, std::int64_t, const T*, \
                                            std::int64_t, T, T*, std::int64_t);
TESSERA_INSTANTIATE(float)
TESSERA_INSTANTIATE(double)
TESSERA_INSTANTIATE(cfloat)
TESSERA_INSTANTIATE(cdouble)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::blas
