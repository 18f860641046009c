// The plans of the level-3 ops of `tessera bench blas`: gemm (and its strided-batched and
// low-precision forms), trsm, trmm, syrk, trtri. Each builds the buffers, the tessera call, each
// anchor's CBLAS (or LAPACK) call, the work per call and the tolerance of the cross-check.
#include "bench_blas_plan.hpp"

namespace tessera::cli::blas_bench {
namespace {

template <typename T>
struct GemmPlan {
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    const bool na = c.transa == Op::kNoTrans, nb = c.transb == Op::kNoTrans;
    const std::size_t sa = matrix_elems(c.lda, na ? c.m : c.k, na ? c.k : c.m);
    const std::size_t sb = matrix_elems(c.ldb, nb ? c.k : c.n, nb ? c.n : c.k);
    const std::size_t sc = matrix_elems(c.ldc, c.m, c.n);
    const std::int64_t count = c.batch < 0 ? 1 : c.batch;
    const std::size_t mats = static_cast<std::size_t>(std::max<std::int64_t>(count, 1));
    Rng rng;
    T* a = p.alloc<T>(checked_mul(sa, mats), "A");
    T* b = p.alloc<T>(checked_mul(sb, mats), "B");
    T* cm = p.alloc<T>(checked_mul(sc, mats), "C");
    fill(rng, a, sa * mats);
    fill(rng, b, sb * mats);
    fill(rng, cm, sc * mats);
    p.outputs.add(cm, sc * mats);
    p.work = flops_per_fma<T>() * static_cast<double>(c.m) * static_cast<double>(c.n) *
             static_cast<double>(c.k) * static_cast<double>(count);
    p.peak_kind = peak_kind<T>();
    p.tolerance = tolerance(eps<T>(), c.k);
    p.restore_each_call = std::abs(c.beta) > 1;
    const T alpha = scalar_as<T>(c.alpha), beta = scalar_as<T>(c.beta);
    const Op ta = c.transa, tb = c.transb;
    const std::int64_t m = c.m, n = c.n, k = c.k, lda = c.lda, ldb = c.ldb, ldc = c.ldc;
    blas::Handle* hp = &h;
    if (c.batch < 0) {
      p.tessera = [=] {
        return blas::gemm<T>(*hp, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc);
      };
    } else {
      const auto ia = static_cast<std::int64_t>(sa), ib = static_cast<std::int64_t>(sb),
                 ic = static_cast<std::int64_t>(sc);
      p.tessera = [=] {
        return blas::gemm_strided_batched<T>(*hp, ta, tb, m, n, k, alpha, a, lda, ia, b, ldb, ib,
                                             beta, cm, ldc, ic, count);
      };
    }
    using Fn = void (*)(int, int, int, int, int, int, ScalarArg<T>, const T*, int, const T*, int,
                        ScalarArg<T>, T*, int);
    const bool fits = fits_int({m, n, k, lda, ldb, ldc});
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, "cblas_" + letter<T>() + "gemm", fits, [=](Fn f) {
        return std::function<void()>([=] {
          for (std::int64_t i = 0; i < count; ++i)
            f(kColMajor, cblas_op(ta), cblas_op(tb), int(m), int(n), int(k), pass(alpha),
              a + i * sa, int(lda), b + i * sb, int(ldb), pass(beta), cm + i * sc, int(ldc));
        });
      });
  }
};

// bf16 x bf16 -> f32, f16 x f16 -> f32 and u8 x s8 -> s32, with tessera's f32 gemm on the
// same values as the baseline they are measured against.
template <typename TA, typename TB, typename TC>
struct MixedGemmPlan {
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    constexpr bool kInt = std::is_same_v<TC, std::int32_t>;
    const bool na = c.transa == Op::kNoTrans, nb = c.transb == Op::kNoTrans;
    const std::size_t sa = matrix_elems(c.lda, na ? c.m : c.k, na ? c.k : c.m);
    const std::size_t sb = matrix_elems(c.ldb, nb ? c.k : c.n, nb ? c.n : c.k);
    const std::size_t sc = matrix_elems(c.ldc, c.m, c.n);
    Rng rng;
    TA* a = p.alloc<TA>(sa, "A");
    TB* b = p.alloc<TB>(sb, "B");
    TC* cm = p.alloc<TC>(sc, "C");
    fill(rng, a, sa);
    fill(rng, b, sb);
    if constexpr (kInt) {
      for (std::size_t i = 0; i < sc; ++i) cm[i] = random_value<std::int8_t>(rng);
    } else {
      fill(rng, cm, sc);
    }
    p.outputs.add(cm, sc);
    p.work = 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
    p.peak_kind = std::is_same_v<TA, bf16> ? "bf16" : kInt ? "int8" : "f32";
    p.tolerance = tolerance(eps<float>(), c.k);
    p.restore_each_call = std::abs(c.beta) > 1;
    const Op ta = c.transa, tb = c.transb;
    const std::int64_t m = c.m, n = c.n, k = c.k, lda = c.lda, ldb = c.ldb, ldc = c.ldc;
    using S = std::conditional_t<kInt, std::int32_t, float>;
    const S alpha = static_cast<S>(c.alpha.real()), beta = static_cast<S>(c.beta.real());
    blas::Handle* hp = &h;
    p.tessera = [=]() -> Status {
      if constexpr (std::is_same_v<TA, bf16>)
        return blas::gemm_bf16(*hp, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc);
      else if constexpr (std::is_same_v<TA, f16>)
        return blas::gemm_f16(*hp, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc);
      else
        return blas::gemm_u8s8s32(*hp, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc);
    };

    // The baseline: f32 copies of the same values.
    float* af = p.alloc<float>(sa, "A (f32)");
    float* bf = p.alloc<float>(sb, "B (f32)");
    float* cf = p.alloc<float>(sc, "C (f32)");
    for (std::size_t i = 0; i < sa; ++i) af[i] = static_cast<float>(widen(a[i]).real());
    for (std::size_t i = 0; i < sb; ++i) bf[i] = static_cast<float>(widen(b[i]).real());
    for (std::size_t i = 0; i < sc; ++i) cf[i] = static_cast<float>(widen(cm[i]).real());
    p.baseline_outputs.add(cf, sc);
    const auto falpha = static_cast<float>(alpha), fbeta = static_cast<float>(beta);
    p.baseline = [=] {
      return blas::gemm<float>(*hp, ta, tb, m, n, k, falpha, af, lda, bf, ldb, fbeta, cf, ldc);
    };
    const Outputs* outs = &p.outputs;
    p.baseline_error = [outs, cf, sc] {
      return mixed_error(static_cast<const TC*>(outs->reference(0)), cf, sc);
    };

    if constexpr (std::is_same_v<TA, bf16>) {
      using Fn = void (*)(int, int, int, int, int, int, float, const bf16*, int, const bf16*, int,
                          float, float*, int);
      const bool fits = fits_int({m, n, k, lda, ldb, ldc});
      for (const Anchor& an : anchors)
        add_anchor<Fn>(p, an, "cblas_sbgemm", fits, [=](Fn f) {
          return std::function<void()>([=] {
            f(kColMajor, cblas_op(ta), cblas_op(tb), int(m), int(n), int(k), alpha, a, int(lda), b,
              int(ldb), beta, cm, int(ldc));
          });
        });
    } else {
      no_anchor(p, anchors, kInt ? "no integer gemm in CBLAS" : "no f16 gemm in CBLAS");
    }
  }
};

template <typename T, bool kSolve>
struct TriangularMatrixPlan {  // trsm, trmm
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    const std::int64_t ka = c.side == Side::kLeft ? c.m : c.n;
    Rng rng;
    T* a = p.alloc<T>(matrix_elems(c.lda, ka, ka), "A");
    const std::size_t sb = matrix_elems(c.ldb, c.m, c.n);
    T* b = p.alloc<T>(sb, "B");
    fill_triangular(rng, a, ka, std::max(c.lda, ka));
    fill(rng, b, sb);
    p.outputs.add(b, sb);
    p.work = flops_per_fma<T>() / 2 * static_cast<double>(c.m) * static_cast<double>(c.n) *
             static_cast<double>(ka);
    p.peak_kind = peak_kind<T>();
    p.tolerance = tolerance(eps<T>(), ka);
    p.restore_each_call = true;
    const T alpha = scalar_as<T>(c.alpha);
    const Side side = c.side;
    const Uplo uplo = c.uplo;
    const Op trans = c.transa;
    const Diag diag = c.diag;
    const std::int64_t m = c.m, n = c.n, lda = c.lda, ldb = c.ldb;
    blas::Handle* hp = &h;
    p.tessera = [=] {
      if constexpr (kSolve)
        return blas::trsm<T>(*hp, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
      else
        return blas::trmm<T>(*hp, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
    };
    using Fn = void (*)(int, int, int, int, int, int, int, ScalarArg<T>, const T*, int, T*, int);
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, "cblas_" + letter<T>() + (kSolve ? "trsm" : "trmm"),
                     fits_int({m, n, lda, ldb}), [=](Fn f) {
                       return std::function<void()>([=] {
                         f(kColMajor, cblas_side(side), cblas_uplo(uplo), cblas_op(trans),
                           cblas_diag(diag), int(m), int(n), pass(alpha), a, int(lda), b, int(ldb));
                       });
                     });
  }
};
template <typename T>
using TrsmPlan = TriangularMatrixPlan<T, true>;
template <typename T>
using TrmmPlan = TriangularMatrixPlan<T, false>;

template <typename T>
struct SyrkPlan {
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    const bool nt = c.transa == Op::kNoTrans;
    const std::size_t sa = matrix_elems(c.lda, nt ? c.n : c.k, nt ? c.k : c.n);
    const std::size_t sc = matrix_elems(c.ldc, c.n, c.n);
    Rng rng;
    T* a = p.alloc<T>(sa, "A");
    T* cm = p.alloc<T>(sc, "C");
    fill(rng, a, sa);
    fill(rng, cm, sc);
    p.outputs.add(cm, sc);
    p.work = flops_per_fma<T>() / 2 * static_cast<double>(c.n) * static_cast<double>(c.n + 1) *
             static_cast<double>(c.k);
    p.peak_kind = peak_kind<T>();
    p.tolerance = tolerance(eps<T>(), c.k);
    p.restore_each_call = std::abs(c.beta) > 1;
    const T alpha = scalar_as<T>(c.alpha), beta = scalar_as<T>(c.beta);
    const Uplo uplo = c.uplo;
    const Op trans = c.transa;
    const std::int64_t n = c.n, k = c.k, lda = c.lda, ldc = c.ldc;
    blas::Handle* hp = &h;
    p.tessera = [=] { return blas::syrk<T>(*hp, uplo, trans, n, k, alpha, a, lda, beta, cm, ldc); };
    using Fn =
        void (*)(int, int, int, int, int, ScalarArg<T>, const T*, int, ScalarArg<T>, T*, int);
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, "cblas_" + letter<T>() + "syrk", fits_int({n, k, lda, ldc}), [=](Fn f) {
        return std::function<void()>([=] {
          f(kColMajor, cblas_uplo(uplo), cblas_op(trans), int(n), int(k), pass(alpha), a, int(lda),
            pass(beta), cm, int(ldc));
        });
      });
  }
};

// trtri, and with a batch count trtri_strided_batched, or trtri_batched (an array of pointers)
// when kPointers.
template <typename T, bool kPointers>
struct TrtriPlan {
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    const std::size_t sa = matrix_elems(c.lda, c.n, c.n);
    const std::int64_t count = c.batch < 0 ? 1 : c.batch;
    const std::size_t mats = static_cast<std::size_t>(std::max<std::int64_t>(count, 1));
    Rng rng;
    T* a = p.alloc<T>(checked_mul(sa, mats), "A");
    for (std::size_t i = 0; i < mats; ++i)
      fill_triangular(rng, a + i * sa, c.n, std::max(c.lda, c.n));
    p.outputs.add(a, sa * mats);
    p.work = flops_per_fma<T>() / 2 * static_cast<double>(c.n) * static_cast<double>(c.n) *
             static_cast<double>(c.n) / 3 * static_cast<double>(count);
    p.peak_kind = peak_kind<T>();
    p.tolerance = tolerance(eps<T>(), c.n);
    p.restore_each_call = true;
    const Uplo uplo = c.uplo;
    const Diag diag = c.diag;
    const std::int64_t n = c.n, lda = c.lda, batch = c.batch;
    blas::Handle* hp = &h;
    if (kPointers) {
      T** ptrs = p.alloc<T*>(mats, "the matrix pointers");
      for (std::size_t i = 0; i < mats; ++i) ptrs[i] = a + i * sa;
      p.tessera = [=] { return blas::trtri_batched<T>(*hp, uplo, diag, n, ptrs, lda, batch); };
    } else if (batch < 0) {
      p.tessera = [=] { return blas::trtri<T>(*hp, uplo, diag, n, a, lda); };
    } else {
      p.tessera = [=] {
        return blas::trtri_strided_batched<T>(*hp, uplo, diag, n, a, lda,
                                              static_cast<std::int64_t>(sa), batch);
      };
    }
    // LAPACK's Fortran interface: arguments by reference, then the hidden string lengths.
    using Fn = void (*)(const char*, const char*, const int*, T*, const int*, int*, std::size_t,
                        std::size_t);
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, letter<T>() + "trtri_", fits_int({n, lda}), [=](Fn f) {
        return std::function<void()>([=] {
          const char u = uplo == Uplo::kUpper ? 'U' : 'L', d = diag == Diag::kUnit ? 'U' : 'N';
          const int nn = int(n), ld = int(lda);
          int info = 0;
          for (std::int64_t i = 0; i < count; ++i) f(&u, &d, &nn, a + i * sa, &ld, &info, 1, 1);
        });
      });
  }
};
template <typename T>
using TrtriStridedPlan = TrtriPlan<T, false>;
template <typename T>
using TrtriPointersPlan = TrtriPlan<T, true>;

void make_gemm(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors, Plan& p) {
  switch (c.dtype) {
    case DType::kBf16:
      return MixedGemmPlan<bf16, bf16, float>::build(c, h, anchors, p);
    case DType::kF16:
      return MixedGemmPlan<f16, f16, float>::build(c, h, anchors, p);
    case DType::kInt8:
      return MixedGemmPlan<std::uint8_t, std::int8_t, std::int32_t>::build(c, h, anchors, p);
    default:
      return make<kStandardTypes, GemmPlan>(c, h, anchors, p);
  }
}

}  // namespace

std::vector<OpInfo> level3_ops() {
  constexpr unsigned kAll = kStandardTypes | kHalfTypes | bit(DType::kInt8);
  return {
      {"gemm", 3,
       kUseM | kUseN | kUseK | kUseTrans2 | kUseLda | kUseLdb | kUseLdc | kUseAlpha | kUseBeta |
           kUseBatch,
       kAll, "C = alpha*op(A)*op(B) + beta*C; --batch B: strided batched", make_gemm},
      op<kStandardTypes, TrsmPlan>("trsm", 3,
                                   kUseM | kUseN | kUseSide | kUseUplo | kUseTrans1 | kUseDiag |
                                       kUseLda | kUseLdb | kUseAlpha,
                                   "B = alpha*op(A)^-1*B (or B*op(A)^-1), A triangular"),
      op<kStandardTypes, TrmmPlan>("trmm", 3,
                                   kUseM | kUseN | kUseSide | kUseUplo | kUseTrans1 | kUseDiag |
                                       kUseLda | kUseLdb | kUseAlpha,
                                   "B = alpha*op(A)*B (or B*op(A)), A triangular"),
      op<kStandardTypes, SyrkPlan>("syrk", 3,
                                   kUseN | kSquare | kUseK | kUseUplo | kUseTrans1 | kUseLda |
                                       kUseLdc | kUseAlpha | kUseBeta,
                                   "C = alpha*A*A^T + beta*C (or A^T*A), C symmetric"),
      op<kStandardTypes, TrtriStridedPlan>("trtri", 3, kTri | kUseDiag | kUseBatch,
                                           "A = A^-1, A triangular; --batch B: strided batched"),
      op<kStandardTypes, TrtriStridedPlan>("trtri_strided_batched", 3, kTri | kUseDiag | kUseBatch,
                                           "trtri of --batch matrices (default 1) at a stride"),
      op<kStandardTypes, TrtriPointersPlan>("trtri_batched", 3, kTri | kUseDiag | kUseBatch,
                                            "trtri of --batch matrices given by pointers"),
  };
}

}  // namespace tessera::cli::blas_bench
