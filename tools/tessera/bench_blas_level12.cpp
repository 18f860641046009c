// The plans of the level-1 and level-2 ops of `tessera bench blas`: the buffers, the tessera
// call, each anchor's CBLAS call, the bytes a call moves and the tolerance of the cross-check.
#include "bench_blas_plan.hpp"

namespace tessera::cli::blas_bench {
namespace {

// ---- Level 2 -----------------------------------------------------------------------------

template <typename T>
struct GemvPlan {
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    const bool nt = c.transa == Op::kNoTrans;
    const std::int64_t xlen = nt ? c.n : c.m, ylen = nt ? c.m : c.n;
    const std::size_t sa = matrix_elems(c.lda, c.m, c.n), sx = vector_elems(xlen, c.incx),
                      sy = vector_elems(ylen, c.incy);
    Rng rng;
    T* a = p.alloc<T>(sa, "A");
    T* x = p.alloc<T>(sx, "x");
    T* y = p.alloc<T>(sy, "y");
    fill(rng, a, sa);
    fill(rng, x, sx);
    fill(rng, y, sy);
    p.outputs.add(y, sy);
    p.work = static_cast<double>(sizeof(T)) *
             (static_cast<double>(c.m) * static_cast<double>(c.n) + static_cast<double>(xlen) +
              2.0 * static_cast<double>(ylen));
    p.bandwidth = true;
    p.tolerance = tolerance(eps<T>(), xlen);
    p.restore_each_call = std::abs(c.beta) > 1;
    const T alpha = scalar_as<T>(c.alpha), beta = scalar_as<T>(c.beta);
    const Op trans = c.transa;
    const std::int64_t m = c.m, n = c.n, lda = c.lda, incx = c.incx, incy = c.incy;
    blas::Handle* hp = &h;
    p.tessera = [=] {
      return blas::gemv<T>(*hp, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
    };
    using Fn = void (*)(int, int, int, int, ScalarArg<T>, const T*, int, const T*, int,
                        ScalarArg<T>, T*, int);
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, "cblas_" + letter<T>() + "gemv", fits_int({m, n, lda, incx, incy}),
                     [=](Fn f) {
                       return std::function<void()>([=] {
                         f(kColMajor, cblas_op(trans), int(m), int(n), pass(alpha), a, int(lda), x,
                           int(incx), pass(beta), y, int(incy));
                       });
                     });
  }
};

template <typename T, bool kConj>
struct GerPlan {  // ger (geru), gerc
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    const std::size_t sa = matrix_elems(c.lda, c.m, c.n), sx = vector_elems(c.m, c.incx),
                      sy = vector_elems(c.n, c.incy);
    Rng rng;
    T* a = p.alloc<T>(sa, "A");
    T* x = p.alloc<T>(sx, "x");
    T* y = p.alloc<T>(sy, "y");
    fill(rng, a, sa);
    fill(rng, x, sx);
    fill(rng, y, sy);
    p.outputs.add(a, sa);
    p.work = static_cast<double>(sizeof(T)) *
             (2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) +
              static_cast<double>(c.m + c.n));
    p.bandwidth = true;
    p.tolerance = tolerance(eps<T>(), 1);
    const T alpha = scalar_as<T>(c.alpha);
    const std::int64_t m = c.m, n = c.n, lda = c.lda, incx = c.incx, incy = c.incy;
    blas::Handle* hp = &h;
    p.tessera = [=] {
      if constexpr (kConj)
        return blas::gerc<T>(*hp, m, n, alpha, x, incx, y, incy, a, lda);
      else
        return blas::geru<T>(*hp, m, n, alpha, x, incx, y, incy, a, lda);
    };
    using Fn = void (*)(int, int, int, ScalarArg<T>, const T*, int, const T*, int, T*, int);
    const std::string symbol = "cblas_" + letter<T>() +
                               (!blas::is_complex_v<T> ? "ger"
                                : kConj                ? "gerc"
                                                       : "geru");
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, symbol, fits_int({m, n, lda, incx, incy}), [=](Fn f) {
        return std::function<void()>([=] {
          f(kColMajor, int(m), int(n), pass(alpha), x, int(incx), y, int(incy), a, int(lda));
        });
      });
  }
};
template <typename T>
using GeruPlan = GerPlan<T, false>;
template <typename T>
using GercPlan = GerPlan<T, true>;

template <typename T, bool kHermitian>
struct SymvPlan {  // symv, hemv
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    const std::size_t sa = matrix_elems(c.lda, c.n, c.n), sx = vector_elems(c.n, c.incx),
                      sy = vector_elems(c.n, c.incy);
    Rng rng;
    T* a = p.alloc<T>(sa, "A");
    T* x = p.alloc<T>(sx, "x");
    T* y = p.alloc<T>(sy, "y");
    fill_triangular(rng, a, c.n, std::max(c.lda, c.n), kHermitian);
    fill(rng, x, sx);
    fill(rng, y, sy);
    p.outputs.add(y, sy);
    const double n = static_cast<double>(c.n);
    p.work = static_cast<double>(sizeof(T)) * (n * (n + 1) / 2 + 3 * n);
    p.bandwidth = true;
    p.tolerance = tolerance(eps<T>(), c.n);
    p.restore_each_call = std::abs(c.beta) > 1;
    const T alpha = scalar_as<T>(c.alpha), beta = scalar_as<T>(c.beta);
    const Uplo uplo = c.uplo;
    const std::int64_t nn = c.n, lda = c.lda, incx = c.incx, incy = c.incy;
    blas::Handle* hp = &h;
    p.tessera = [=] {
      if constexpr (kHermitian)
        return blas::hemv<T>(*hp, uplo, nn, alpha, a, lda, x, incx, beta, y, incy);
      else
        return blas::symv<T>(*hp, uplo, nn, alpha, a, lda, x, incx, beta, y, incy);
    };
    if (blas::is_complex_v<T> && !kHermitian)
      return no_anchor(p, anchors, "no complex symv in CBLAS");
    using Fn =
        void (*)(int, int, int, ScalarArg<T>, const T*, int, const T*, int, ScalarArg<T>, T*, int);
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, "cblas_" + letter<T>() + (kHermitian ? "hemv" : "symv"),
                     fits_int({nn, lda, incx, incy}), [=](Fn f) {
                       return std::function<void()>([=] {
                         f(kColMajor, cblas_uplo(uplo), int(nn), pass(alpha), a, int(lda), x,
                           int(incx), pass(beta), y, int(incy));
                       });
                     });
  }
};
template <typename T>
using SymvOnlyPlan = SymvPlan<T, false>;
template <typename T>
using HemvPlan = SymvPlan<T, true>;

template <typename T, bool kSolve>
struct TriangularVectorPlan {  // trsv, trmv
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    const std::size_t sa = matrix_elems(c.lda, c.n, c.n), sx = vector_elems(c.n, c.incx);
    Rng rng;
    T* a = p.alloc<T>(sa, "A");
    T* x = p.alloc<T>(sx, "x");
    fill_triangular(rng, a, c.n, std::max(c.lda, c.n));
    fill(rng, x, sx);
    p.outputs.add(x, sx);
    const double n = static_cast<double>(c.n);
    p.work = static_cast<double>(sizeof(T)) * (n * (n + 1) / 2 + 2 * n);
    p.bandwidth = true;
    p.tolerance = tolerance(eps<T>(), c.n);
    p.restore_each_call = true;
    const Uplo uplo = c.uplo;
    const Op trans = c.transa;
    const Diag diag = c.diag;
    const std::int64_t nn = c.n, lda = c.lda, incx = c.incx;
    blas::Handle* hp = &h;
    p.tessera = [=] {
      if constexpr (kSolve)
        return blas::trsv<T>(*hp, uplo, trans, diag, nn, a, lda, x, incx);
      else
        return blas::trmv<T>(*hp, uplo, trans, diag, nn, a, lda, x, incx);
    };
    using Fn = void (*)(int, int, int, int, int, const T*, int, T*, int);
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, "cblas_" + letter<T>() + (kSolve ? "trsv" : "trmv"),
                     fits_int({nn, lda, incx}), [=](Fn f) {
                       return std::function<void()>([=] {
                         f(kColMajor, cblas_uplo(uplo), cblas_op(trans), cblas_diag(diag), int(nn),
                           a, int(lda), x, int(incx));
                       });
                     });
  }
};
template <typename T>
using TrsvPlan = TriangularVectorPlan<T, true>;
template <typename T>
using TrmvPlan = TriangularVectorPlan<T, false>;

// ---- Level 1 -----------------------------------------------------------------------------

// The buffers of a level-1 op: x (and y), random, with the bytes per element.
template <typename T>
struct Vectors {
  T* x = nullptr;
  T* y = nullptr;
  std::size_t sx = 0, sy = 0;
  Vectors(const BlasCase& c, Plan& p, bool with_y) {
    Rng rng;
    sx = vector_elems(c.n, c.incx);
    x = p.alloc<T>(sx, "x");
    fill(rng, x, sx);
    if (with_y) {
      sy = vector_elems(c.n, c.incy);
      y = p.alloc<T>(sy, "y");
      fill(rng, y, sy);
    }
  }
};

double vector_bytes(const BlasCase& c, std::size_t elem, int passes) {
  return static_cast<double>(elem) * static_cast<double>(c.n) * passes;
}

template <typename T>
struct AxpyPlan {
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    Vectors<T> v(c, p, true);
    p.outputs.add(v.y, v.sy);
    p.work = vector_bytes(c, sizeof(T), 3);
    p.bandwidth = true;
    p.tolerance = tolerance(eps<T>(), 1);
    const auto alpha = scalar_as<blas::scalar_t<T>>(c.alpha);
    const std::int64_t n = c.n, incx = c.incx, incy = c.incy;
    const T* x = v.x;
    T* y = v.y;
    blas::Handle* hp = &h;
    p.tessera = [=] { return blas::axpy<T>(*hp, n, alpha, x, incx, y, incy); };
    if constexpr (is_half_v<T>) {
      no_anchor(p, anchors, "no half-precision axpy in CBLAS");
    } else {
      using Fn = void (*)(int, ScalarArg<T>, const T*, int, T*, int);
      for (const Anchor& an : anchors)
        add_anchor<Fn>(p, an, "cblas_" + letter<T>() + "axpy", fits_int({n, incx, incy}),
                       [=](Fn f) {
                         return std::function<void()>(
                             [=] { f(int(n), pass(alpha), x, int(incx), y, int(incy)); });
                       });
    }
  }
};

template <typename T, bool kConj>
struct DotPlan {  // dot (dotu for complex), dotc
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    using R = std::conditional_t<kConj, T, blas::scalar_t<T>>;
    Vectors<T> v(c, p, true);
    R* out = p.alloc<R>(1, "the result");
    *out = R{};
    p.outputs.add(out, 1);
    p.work = vector_bytes(c, sizeof(T), 2);
    p.bandwidth = true;
    p.tolerance = tolerance(eps<R>(), c.n);
    const std::int64_t n = c.n, incx = c.incx, incy = c.incy;
    const T* x = v.x;
    const T* y = v.y;
    blas::Handle* hp = &h;
    p.tessera = [=] {
      if constexpr (kConj)
        return blas::dotc<T>(*hp, n, x, incx, y, incy, out);
      else
        return blas::dot<T>(*hp, n, x, incx, y, incy, out);
    };
    const bool fits = fits_int({n, incx, incy});
    if constexpr (std::is_same_v<T, f16>) {
      no_anchor(p, anchors, "no f16 dot in CBLAS");
    } else if constexpr (std::is_same_v<T, bf16>) {
      using Fn = float (*)(int, const bf16*, int, const bf16*, int);
      for (const Anchor& an : anchors)
        add_anchor<Fn>(p, an, "cblas_sbdot", fits, [=](Fn f) {
          return std::function<void()>([=] { *out = f(int(n), x, int(incx), y, int(incy)); });
        });
    } else if constexpr (blas::is_complex_v<T>) {
      using Fn = void (*)(int, const T*, int, const T*, int, T*);
      for (const Anchor& an : anchors)
        add_anchor<Fn>(
            p, an, "cblas_" + letter<T>() + (kConj ? "dotc_sub" : "dotu_sub"), fits, [=](Fn f) {
              return std::function<void()>([=] { f(int(n), x, int(incx), y, int(incy), out); });
            });
    } else {
      using Fn = T (*)(int, const T*, int, const T*, int);
      for (const Anchor& an : anchors)
        add_anchor<Fn>(p, an, "cblas_" + letter<T>() + "dot", fits, [=](Fn f) {
          return std::function<void()>([=] { *out = f(int(n), x, int(incx), y, int(incy)); });
        });
    }
  }
};
template <typename T>
using DotuPlan = DotPlan<T, false>;
template <typename T>
using DotcPlan = DotPlan<T, true>;

enum class Reduction { kNrm2, kAsum };

template <typename T, Reduction kWhat>
struct NormPlan {  // nrm2, asum
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    using R = blas::real_t<T>;
    Vectors<T> v(c, p, false);
    R* out = p.alloc<R>(1, "the result");
    *out = R{};
    p.outputs.add(out, 1);
    p.work = vector_bytes(c, sizeof(T), 1);
    p.bandwidth = true;
    p.tolerance = tolerance(eps<T>(), c.n);
    const std::int64_t n = c.n, incx = c.incx;
    const T* x = v.x;
    blas::Handle* hp = &h;
    p.tessera = [=] {
      if constexpr (kWhat == Reduction::kNrm2)
        return blas::nrm2<T>(*hp, n, x, incx, out);
      else
        return blas::asum<T>(*hp, n, x, incx, out);
    };
    // snrm2, dnrm2, scnrm2, dznrm2; sasum, dasum, scasum, dzasum.
    std::string prefix = letter<T>();
    if constexpr (std::is_same_v<T, cfloat>) prefix = "sc";
    if constexpr (std::is_same_v<T, cdouble>) prefix = "dz";
    using Fn = R (*)(int, const T*, int);
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, "cblas_" + prefix + (kWhat == Reduction::kNrm2 ? "nrm2" : "asum"),
                     fits_int({n, incx}), [=](Fn f) {
                       return std::function<void()>([=] { *out = f(int(n), x, int(incx)); });
                     });
  }
};
template <typename T>
using Nrm2Plan = NormPlan<T, Reduction::kNrm2>;
template <typename T>
using AsumPlan = NormPlan<T, Reduction::kAsum>;

template <typename T>
struct ScalPlan {
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    Vectors<T> v(c, p, false);
    p.outputs.add(v.x, v.sx);
    p.work = vector_bytes(c, sizeof(T), 2);
    p.bandwidth = true;
    p.tolerance = tolerance(eps<T>(), 1);
    p.restore_each_call = true;  // repeated scaling would end in subnormals or overflow
    const auto alpha = scalar_as<blas::scalar_t<T>>(c.alpha);
    const std::int64_t n = c.n, incx = c.incx;
    T* x = v.x;
    blas::Handle* hp = &h;
    p.tessera = [=] { return blas::scal<T>(*hp, n, alpha, x, incx); };
    if constexpr (is_half_v<T>) {
      no_anchor(p, anchors, "no half-precision scal in CBLAS");
    } else {
      using Fn = void (*)(int, ScalarArg<T>, T*, int);
      for (const Anchor& an : anchors)
        add_anchor<Fn>(p, an, "cblas_" + letter<T>() + "scal", fits_int({n, incx}), [=](Fn f) {
          return std::function<void()>([=] { f(int(n), pass(alpha), x, int(incx)); });
        });
    }
  }
};

template <typename T>
struct ScalRealPlan {  // complex x scaled by a real alpha (csscal, zdscal)
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    using R = blas::real_t<T>;
    Vectors<T> v(c, p, false);
    p.outputs.add(v.x, v.sx);
    p.work = vector_bytes(c, sizeof(T), 2);
    p.bandwidth = true;
    p.tolerance = tolerance(eps<T>(), 1);
    p.restore_each_call = true;
    const R alpha = static_cast<R>(c.alpha.real());
    const std::int64_t n = c.n, incx = c.incx;
    T* x = v.x;
    blas::Handle* hp = &h;
    p.tessera = [=] { return blas::scal_real<T>(*hp, n, alpha, x, incx); };
    using Fn = void (*)(int, R, T*, int);
    for (const Anchor& an : anchors)
      add_anchor<Fn>(
          p, an, std::is_same_v<T, cfloat> ? "cblas_csscal" : "cblas_zdscal", fits_int({n, incx}),
          [=](Fn f) { return std::function<void()>([=] { f(int(n), alpha, x, int(incx)); }); });
  }
};

// A plane rotation by a fixed angle (c = 0.6, s = 0.8): the replay lines carry no c and s,
// and the speed does not depend on them. Repeated rotations keep the values bounded.
template <typename T>
struct RotPlan {
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    using R = blas::real_t<T>;
    Vectors<T> v(c, p, true);
    p.outputs.add(v.x, v.sx);
    p.outputs.add(v.y, v.sy);
    p.work = vector_bytes(c, sizeof(T), 4);
    p.bandwidth = true;
    p.tolerance = tolerance(eps<T>(), 2);
    const R cs = static_cast<R>(0.6), sn = static_cast<R>(0.8);
    const std::int64_t n = c.n, incx = c.incx, incy = c.incy;
    T* x = v.x;
    T* y = v.y;
    blas::Handle* hp = &h;
    p.tessera = [=] { return blas::rot<T>(*hp, n, x, incx, y, incy, cs, sn); };
    // srot, drot; OpenBLAS also has csrot and zdrot (not in standard CBLAS).
    std::string symbol = "cblas_" + letter<T>() + "rot";
    if constexpr (std::is_same_v<T, cfloat>) symbol = "cblas_csrot";
    if constexpr (std::is_same_v<T, cdouble>) symbol = "cblas_zdrot";
    using Fn = void (*)(int, T*, int, T*, int, R, R);
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, symbol, fits_int({n, incx, incy}), [=](Fn f) {
        return std::function<void()>([=] { f(int(n), x, int(incx), y, int(incy), cs, sn); });
      });
  }
};

template <typename T, bool kSwap>
struct MovePlan {  // copy, swap
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    Vectors<T> v(c, p, true);
    if (kSwap) p.outputs.add(v.x, v.sx);
    p.outputs.add(v.y, v.sy);
    p.work = vector_bytes(c, sizeof(T), kSwap ? 4 : 2);
    p.bandwidth = true;
    p.tolerance = 0;
    const std::int64_t n = c.n, incx = c.incx, incy = c.incy;
    T* x = v.x;
    T* y = v.y;
    blas::Handle* hp = &h;
    p.tessera = [=] {
      if constexpr (kSwap)
        return blas::swap<T>(*hp, n, x, incx, y, incy);
      else
        return blas::copy<T>(*hp, n, x, incx, y, incy);
    };
    using Fn = void (*)(int, std::conditional_t<kSwap, T*, const T*>, int, T*, int);
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, "cblas_" + letter<T>() + (kSwap ? "swap" : "copy"),
                     fits_int({n, incx, incy}), [=](Fn f) {
                       return std::function<void()>([=] { f(int(n), x, int(incx), y, int(incy)); });
                     });
  }
};
template <typename T>
using CopyPlan = MovePlan<T, false>;
template <typename T>
using SwapPlan = MovePlan<T, true>;

template <typename T, bool kMax>
struct IamaxPlan {  // iamax, iamin
  static void build(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors,
                    Plan& p) {
    Vectors<T> v(c, p, false);
    std::int64_t* out = p.alloc<std::int64_t>(1, "the result");
    *out = -1;
    p.outputs.add(out, 1);
    p.work = vector_bytes(c, sizeof(T), 1);
    p.bandwidth = true;
    p.tolerance = 0;
    const std::int64_t n = c.n, incx = c.incx;
    const T* x = v.x;
    blas::Handle* hp = &h;
    p.tessera = [=] {
      if constexpr (kMax)
        return blas::iamax<T>(*hp, n, x, incx, out);
      else
        return blas::iamin<T>(*hp, n, x, incx, out);
    };
    using Fn = std::size_t (*)(int, const T*, int);  // CBLAS_INDEX, 0-based
    for (const Anchor& an : anchors)
      add_anchor<Fn>(p, an, "cblas_i" + letter<T>() + (kMax ? "amax" : "amin"), fits_int({n, incx}),
                     [=](Fn f) {
                       return std::function<void()>(
                           [=] { *out = static_cast<std::int64_t>(f(int(n), x, int(incx))); });
                     });
  }
};
template <typename T>
using IamaxOnlyPlan = IamaxPlan<T, true>;
template <typename T>
using IaminPlan = IamaxPlan<T, false>;

}  // namespace

std::vector<OpInfo> level12_ops() {
  constexpr unsigned kWithHalf = kStandardTypes | kHalfTypes;
  return {
      op<kStandardTypes, GemvPlan>(
          "gemv", 2,
          kUseM | kUseN | kUseTrans1 | kUseLda | kUseIncx | kUseIncy | kUseAlpha | kUseBeta,
          "y = alpha*op(A)*x + beta*y"),
      op<kStandardTypes, GeruPlan>("ger", 2,
                                   kUseM | kUseN | kUseLda | kUseIncx | kUseIncy | kUseAlpha,
                                   "A += alpha*x*y^T (geru for complex)"),
      op<kStandardTypes, GeruPlan>("geru", 2,
                                   kUseM | kUseN | kUseLda | kUseIncx | kUseIncy | kUseAlpha,
                                   "A += alpha*x*y^T (the same as ger)"),
      op<kComplexTypes, GercPlan>(
          "gerc", 2, kUseM | kUseN | kUseLda | kUseIncx | kUseIncy | kUseAlpha, "A += alpha*x*y^H"),
      op<kStandardTypes, SymvOnlyPlan>("symv", 2, kTri | kUseIncx | kUseIncy | kUseAlpha | kUseBeta,
                                       "y = alpha*A*x + beta*y, A symmetric"),
      op<kComplexTypes, HemvPlan>("hemv", 2, kTri | kUseIncx | kUseIncy | kUseAlpha | kUseBeta,
                                  "y = alpha*A*x + beta*y, A Hermitian"),
      op<kStandardTypes, TrsvPlan>("trsv", 2, kTri | kUseTrans1 | kUseDiag | kUseIncx,
                                   "x = op(A)^-1*x, A triangular"),
      op<kStandardTypes, TrmvPlan>("trmv", 2, kTri | kUseTrans1 | kUseDiag | kUseIncx,
                                   "x = op(A)*x, A triangular"),
      op<kWithHalf, AxpyPlan>("axpy", 1, kTwoVec | kUseAlpha, "y += alpha*x"),
      op<kWithHalf, DotuPlan>("dot", 1, kTwoVec, "sum x*y (dotu for complex)"),
      op<kComplexTypes, DotcPlan>("dotc", 1, kTwoVec, "sum conj(x)*y"),
      op<kStandardTypes, Nrm2Plan>("nrm2", 1, kVec, "Euclidean norm of x"),
      op<kStandardTypes, AsumPlan>("asum", 1, kVec, "sum |re(x)| + |im(x)|"),
      op<kWithHalf, ScalPlan>("scal", 1, kVec | kUseAlpha, "x = alpha*x"),
      op<kComplexTypes, ScalRealPlan>("scal_real", 1, kVec | kUseAlpha,
                                      "x = alpha*x, alpha real (csscal, zdscal)"),
      op<kStandardTypes, RotPlan>("rot", 1, kTwoVec, "plane rotation, c = 0.6, s = 0.8"),
      op<kStandardTypes, CopyPlan>("copy", 1, kTwoVec, "y = x"),
      op<kStandardTypes, SwapPlan>("swap", 1, kTwoVec, "x <-> y"),
      op<kStandardTypes, IamaxOnlyPlan>("iamax", 1, kVec, "index of the largest |x| (0-based)"),
      op<kStandardTypes, IaminPlan>("iamin", 1, kVec, "index of the smallest |x| (0-based)"),
  };
}

}  // namespace tessera::cli::blas_bench
