// Level-1 BLAS: argument checks, the replay line, then the contiguous kernels of
// kernels/level1 (chosen per call from the ordered ISA list) or plain loops for strided
// vectors. Reductions go through detail::reduce_blocks: fixed blocks combined in order, so
// results are bitwise identical for any thread count.
//
// Increments follow reference BLAS (LAPACK 3.10+): a negative increment walks the vector from
// its far end (element i is x[(n-1-i)*|inc|]). As there, asum, iamax, iamin, scal and
// scal_real treat incx < 0 as "nothing to do" (result 0, x untouched); nrm2 walks from the far
// end. A zero increment on a vector the routine writes (y of axpy/copy, both vectors of
// swap/rot, x of scal) is kInvalidArgument; on a read-only vector (x of axpy/copy/dot/dotc/
// nrm2, y of dot/dotc) it repeats element 0, exactly as the reference loops do, and asum/
// iamax/iamin return 0 as reference BLAS does for incx <= 0.
#include <cmath>
#include <cstring>
#include <functional>

#include <tessera/core/cpu.hpp>

#include "kernels/level1/driver.hpp"
#include "kernels/level1/kernels.hpp"

namespace tessera::blas {
namespace {

using detail::vec_index;
using std::int64_t;

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

template <typename T>
const kernels::RealLevel1<T>& real_kernels(const kernels::Level1Kernels& k) {
  if constexpr (std::is_same_v<T, float>)
    return k.f32;
  else
    return k.f64;
}
template <typename R>
const kernels::ComplexLevel1<R>& complex_kernels(const kernels::Level1Kernels& k) {
  if constexpr (std::is_same_v<R, float>)
    return k.c64;
  else
    return k.c128;
}
template <typename T>
const kernels::HalfLevel1& half_kernels(const kernels::Level1Kernels& k) {
  if constexpr (std::is_same_v<T, f16>)
    return k.f16;
  else
    return k.bf16;
}

// A complex vector's storage as reals; element i starts at reals(x) + 2 * i.
template <typename T>
auto reals(T* x) {
  using R = real_t<std::remove_const_t<T>>;
  if constexpr (std::is_const_v<T>)
    return reinterpret_cast<const R*>(x);
  else
    return reinterpret_cast<R*>(x);
}
template <typename T>
auto bits(T* x) {
  if constexpr (std::is_const_v<T>)
    return reinterpret_cast<const std::uint16_t*>(x);
  else
    return reinterpret_cast<std::uint16_t*>(x);
}

template <typename T>
float widen(T v) {
  return static_cast<float>(v);
}

// |re| + |im| for complex (reference BLAS's cabs1), |x| for real.
template <typename T>
real_t<T> abs1(T v) {
  if constexpr (is_complex_v<T>)
    return std::fabs(v.real()) + std::fabs(v.imag());
  else
    return std::fabs(v);
}

Status check_n(const std::string& fn, int64_t n) {
  return detail::check_size(fn, "n", n);
}

// ---- iamax / iamin -------------------------------------------------------------------------

// The index reference BLAS returns: the running extreme starts at element 0 and moves only on
// a strict improvement, so NaNs never win, except that a NaN in element 0 is never replaced.
// incx > 0 here.
template <typename T, bool Largest>
int64_t find_index(const Handle& h, const std::string& fn, int64_t n, const T* x, int64_t incx) {
  using R = real_t<T>;
  struct Best {
    int64_t index = -1;
    R value = 0;
  };
  auto better = [](R a, R b) { return Largest ? a > b : a < b; };
  if (std::isnan(abs1(x[0]))) return 0;
  const bool contiguous = !is_complex_v<T> && incx == 1;
  const kernels::RealLevel1<R>* k = nullptr;
  if constexpr (!is_complex_v<T>)
    if (contiguous) k = &real_kernels<R>(kernels::level1_kernels(fn));
  auto map = [&](int64_t b, int64_t e) {
    Best best;
    if constexpr (!is_complex_v<T>) {
      if (contiguous) {
        const int64_t i =
            Largest ? k->iamax(e - b, x + b, &best.value) : k->iamin(e - b, x + b, &best.value);
        if (i >= 0) best.index = b + i;
        return best;
      }
    }
    for (int64_t i = b; i < e; ++i) {
      const R v = abs1(x[i * incx]);
      if (std::isnan(v)) continue;
      if (best.index < 0 || better(v, best.value)) best = {i, v};
    }
    return best;
  };
  auto combine = [&](Best acc, Best p) {
    return p.index >= 0 && (acc.index < 0 || better(p.value, acc.value)) ? p : acc;
  };
  const Best best = detail::reduce_blocks(h, n, Best{}, map, combine);
  return best.index < 0 ? 0 : best.index;
}

template <typename T, bool Largest>
Status index_routine(Handle& h, const char* name, int64_t n, const T* x, int64_t incx,
                     int64_t* result) {
  const std::string fn = detail::fn_name<T>(name);
  TESSERA_RETURN_IF_ERROR(check_n(fn, n));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", x, n > 0 && incx > 0));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "result", result, true));
  detail::log_bench<T>(h, name, {.n = n, .incx = incx});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  *result = n > 0 && incx > 0 ? find_index<T, Largest>(h, fn, n, x, incx) : 0;
  return Status::ok();
}

// ---- nrm2 ----------------------------------------------------------------------------------

// Blue's scaled sum of squares for double (the accumulators of LAPACK 3.10's dnrm2): values
// above kBig are summed scaled down, values below kSmall scaled up, the rest as they are.
struct BlueSums {
  double big = 0, mid = 0, small = 0;
  BlueSums& operator+=(const BlueSums& o) {
    big += o.big;
    mid += o.mid;
    small += o.small;
    return *this;
  }
  void add(double v) {
    const double a = std::fabs(v);
    if (a > kBig) {
      big += (a * kScaleBig) * (a * kScaleBig);
    } else if (a < kSmall) {
      small += (a * kScaleSmall) * (a * kScaleSmall);
    } else {
      mid += a * a;
    }
  }
  double finish() const {
    if (big > 0) {
      const double b = mid > 0 || std::isnan(mid) ? big + (mid * kScaleBig) * kScaleBig : big;
      return std::sqrt(b) / kScaleBig;
    }
    if (small > 0) {
      if (mid > 0 || std::isnan(mid)) {
        const double ymid = std::sqrt(mid), ysmall = std::sqrt(small) / kScaleSmall;
        const double lo = ysmall > ymid ? ymid : ysmall, hi = ysmall > ymid ? ysmall : ymid;
        return std::sqrt(hi * hi * (1 + (lo / hi) * (lo / hi)));
      }
      return std::sqrt(small) / kScaleSmall;
    }
    return std::sqrt(mid);
  }
  static constexpr double kSmall = 0x1p-511, kBig = 0x1p486;
  static constexpr double kScaleSmall = 0x1p537, kScaleBig = 0x1p-538;
  // A block whose plain sum of squares is at least this, with no |x| above kBig, lost at most
  // 2^-59 of its value to squares that underflowed: the fast kernel result stands.
  static constexpr double kSafeSum = 0x1p-1000;
};

template <typename T>
real_t<T> nrm2_value(const Handle& h, const std::string& fn, int64_t n, const T* x, int64_t incx) {
  using R = real_t<T>;
  constexpr int64_t kParts = is_complex_v<T> ? 2 : 1;
  const R* r = reinterpret_cast<const R*>(x);
  const bool contiguous = incx == 1;
  const kernels::RealLevel1<R>& k = real_kernels<R>(kernels::level1_kernels(fn));
  if constexpr (std::is_same_v<R, float>) {
    // f32 squares summed in f64 can neither overflow nor underflow.
    auto map = [&](int64_t b, int64_t e) {
      if (contiguous) {
        float unused;
        return k.sumsq(kParts * (e - b), r + kParts * b, &unused);
      }
      double s = 0;
      for (int64_t i = b; i < e; ++i)
        for (int64_t p = 0; p < kParts; ++p) {
          const double v = r[kParts * vec_index(i, n, incx) + p];
          s += v * v;
        }
      return s;
    };
    const double s = detail::reduce_blocks(h, n, 0.0, map, std::plus<double>());
    return static_cast<float>(std::sqrt(s));
  } else {
    auto map = [&](int64_t b, int64_t e) {
      BlueSums sums;
      if (contiguous) {
        double max_abs;
        const int64_t len = kParts * (e - b);
        const double s = k.sumsq(len, r + kParts * b, &max_abs);
        if (!(max_abs > BlueSums::kBig) && (max_abs == 0 || !(s < BlueSums::kSafeSum))) {
          sums.mid = s;
          return sums;
        }
        for (int64_t i = 0; i < len; ++i) sums.add(r[kParts * b + i]);
        return sums;
      }
      for (int64_t i = b; i < e; ++i)
        for (int64_t p = 0; p < kParts; ++p) sums.add(r[kParts * vec_index(i, n, incx) + p]);
      return sums;
    };
    auto combine = [](BlueSums acc, const BlueSums& p) { return acc += p; };
    return detail::reduce_blocks(h, n, BlueSums{}, map, combine).finish();
  }
}

// ---- dot -----------------------------------------------------------------------------------

template <typename T>
scalar_t<T> dot_value(const Handle& h, const std::string& fn, int64_t n, const T* x, int64_t incx,
                      const T* y, int64_t incy, bool conj_x) {
  using S = scalar_t<T>;
  const bool contiguous = incx == 1 && incy == 1;
  const kernels::Level1Kernels& k = kernels::level1_kernels(fn);
  auto map = [&](int64_t b, int64_t e) -> S {
    if (contiguous) {
      if constexpr (kIsHalf<T>) {
        return half_kernels<T>(k).dot(e - b, bits(x + b), bits(y + b));
      } else if constexpr (is_complex_v<T>) {
        real_t<T> v[2];
        complex_kernels<real_t<T>>(k).dot(e - b, reals(x + b), reals(y + b), conj_x, v);
        return {v[0], v[1]};
      } else {
        return real_kernels<T>(k).dot(e - b, x + b, y + b);
      }
    }
    S s{};
    for (int64_t i = b; i < e; ++i) {
      const T xi = x[vec_index(i, n, incx)], yi = y[vec_index(i, n, incy)];
      if constexpr (kIsHalf<T>)
        s += widen(xi) * widen(yi);
      else
        s += detail::cmul(detail::conj_if(xi, conj_x), yi);
    }
    return s;
  };
  return detail::reduce_blocks(h, n, S{}, map, std::plus<S>());
}

template <typename T>
Status check_two_vectors(const std::string& fn, int64_t n, const void* x, const void* y) {
  TESSERA_RETURN_IF_ERROR(check_n(fn, n));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", x, n > 0));
  return detail::check_ptr(fn, "y", y, n > 0);
}

template <typename T>
Status dot_routine(Handle& h, const char* name, int64_t n, const T* x, int64_t incx, const T* y,
                   int64_t incy, scalar_t<T>* result, bool conj_x) {
  const std::string fn = detail::fn_name<T>(name);
  TESSERA_RETURN_IF_ERROR(check_two_vectors<T>(fn, n, x, y));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "result", result, true));
  detail::log_bench<T>(h, name, {.n = n, .incx = incx, .incy = incy});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  *result = dot_value(h, fn, n, x, incx, y, incy, conj_x);
  return Status::ok();
}

// ---- scal ----------------------------------------------------------------------------------

// x = alpha * x with incx > 0; RealAlpha scales complex elements by a real alpha.
template <typename T, typename A>
void scale(const Handle& h, const std::string& fn, int64_t n, A alpha, T* x, int64_t incx) {
  const kernels::Level1Kernels& k = kernels::level1_kernels(fn);
  if (incx == 1) {
    detail::for_elements(h, n, [&](int64_t b, int64_t e) {
      if constexpr (kIsHalf<T>) {
        half_kernels<T>(k).scal(e - b, alpha, bits(x + b));
      } else if constexpr (is_complex_v<T> && is_complex_v<A>) {
        complex_kernels<real_t<T>>(k).scal(e - b, alpha.real(), alpha.imag(), reals(x + b));
      } else if constexpr (is_complex_v<T>) {
        real_kernels<A>(k).scal(2 * (e - b), alpha, reals(x + b));
      } else {
        real_kernels<T>(k).scal(e - b, alpha, x + b);
      }
    });
    return;
  }
  detail::for_elements(h, n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      T& v = x[i * incx];
      if constexpr (kIsHalf<T>)
        v = T(alpha * widen(v));
      else if constexpr (is_complex_v<T> && !is_complex_v<A>)
        v = T(alpha * v.real(), alpha * v.imag());
      else
        v = detail::cmul(alpha, v);
    }
  });
}

template <typename T, typename A>
Status scal_routine(Handle& h, const char* name, int64_t n, A alpha, T* x, int64_t incx) {
  const std::string fn = detail::fn_name<T>(name);
  TESSERA_RETURN_IF_ERROR(check_n(fn, n));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incx", incx));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", x, n > 0 && incx > 0));
  detail::log_bench<T>(h, name, {.n = n, .incx = incx});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  // Reference BLAS returns early for incx < 0 and for alpha == 1 (x * 1 == x anyway).
  if (n == 0 || incx < 0 || alpha == A(1)) return Status::ok();
  scale(h, fn, n, alpha, x, incx);
  return Status::ok();
}

}  // namespace

// ---- entry points --------------------------------------------------------------------------

template <typename T>
Status iamax(Handle& h, int64_t n, const T* x, int64_t incx, int64_t* result) {
  return index_routine<T, true>(h, "iamax", n, x, incx, result);
}

template <typename T>
Status iamin(Handle& h, int64_t n, const T* x, int64_t incx, int64_t* result) {
  return index_routine<T, false>(h, "iamin", n, x, incx, result);
}

template <typename T>
Status asum(Handle& h, int64_t n, const T* x, int64_t incx, real_t<T>* result) {
  using R = real_t<T>;
  const std::string fn = detail::fn_name<T>("asum");
  TESSERA_RETURN_IF_ERROR(check_n(fn, n));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", x, n > 0 && incx > 0));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "result", result, true));
  detail::log_bench<T>(h, "asum", {.n = n, .incx = incx});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  if (n == 0 || incx <= 0) {
    *result = 0;
    return Status::ok();
  }
  const kernels::RealLevel1<R>& k = real_kernels<R>(kernels::level1_kernels(fn));
  constexpr int64_t kParts = is_complex_v<T> ? 2 : 1;
  auto map = [&](int64_t b, int64_t e) {
    if (incx == 1) return k.asum(kParts * (e - b), reals(x + b));
    R s = 0;
    for (int64_t i = b; i < e; ++i) s += abs1(x[i * incx]);
    return s;
  };
  *result = detail::reduce_blocks(h, n, R(0), map, std::plus<R>());
  return Status::ok();
}

template <typename T>
Status axpy(Handle& h, int64_t n, scalar_t<T> alpha, const T* x, int64_t incx, T* y, int64_t incy) {
  const std::string fn = detail::fn_name<T>("axpy");
  TESSERA_RETURN_IF_ERROR(check_two_vectors<T>(fn, n, x, y));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incy", incy));
  detail::log_bench<T>(h, "axpy", {.n = n, .incx = incx, .incy = incy});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  if (n == 0 || alpha == scalar_t<T>(0)) return Status::ok();
  const kernels::Level1Kernels& k = kernels::level1_kernels(fn);
  const bool contiguous = incx == 1 && incy == 1;
  detail::for_elements(h, n, [&](int64_t b, int64_t e) {
    if (contiguous) {
      if constexpr (kIsHalf<T>)
        half_kernels<T>(k).axpy(e - b, alpha, bits(x + b), bits(y + b));
      else if constexpr (is_complex_v<T>)
        complex_kernels<real_t<T>>(k).axpy(e - b, alpha.real(), alpha.imag(), reals(x + b),
                                           reals(y + b));
      else
        real_kernels<T>(k).axpy(e - b, alpha, x + b, y + b);
      return;
    }
    for (int64_t i = b; i < e; ++i) {
      const T xi = x[vec_index(i, n, incx)];
      T& yi = y[vec_index(i, n, incy)];
      if constexpr (kIsHalf<T>)
        yi = T(widen(yi) + alpha * widen(xi));
      else
        yi += detail::cmul(alpha, xi);
    }
  });
  return Status::ok();
}

template <typename T>
Status copy(Handle& h, int64_t n, const T* x, int64_t incx, T* y, int64_t incy) {
  const std::string fn = detail::fn_name<T>("copy");
  TESSERA_RETURN_IF_ERROR(check_two_vectors<T>(fn, n, x, y));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incy", incy));
  detail::log_bench<T>(h, "copy", {.n = n, .incx = incx, .incy = incy});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  if (n == 0) return Status::ok();
  if (incx == 1 && incy == 1) {
    if (x + n <= y || y + n <= x) {
      // A destination of half the last-level cache or more will not stay cached anyway:
      // stream it past the caches.
      const std::int64_t l3 = cpu_info().cache_bytes(3);
      const bool stream = n * static_cast<int64_t>(sizeof(T)) >= (l3 > 0 ? l3 / 2 : 16 << 20);
      const auto copy_stream = kernels::level1_kernels(fn).copy_stream;
      detail::for_elements(h, n, [&](int64_t b, int64_t e) {
        const auto bytes = static_cast<std::size_t>(e - b) * sizeof(T);
        if (stream)
          copy_stream(static_cast<int64_t>(bytes), x + b, y + b);
        else
          std::memcpy(y + b, x + b, bytes);
      });
    } else {
      std::memmove(y, x, static_cast<std::size_t>(n) * sizeof(T));
    }
    return Status::ok();
  }
  for (int64_t i = 0; i < n; ++i) y[vec_index(i, n, incy)] = x[vec_index(i, n, incx)];
  return Status::ok();
}

template <typename T>
Status dot(Handle& h, int64_t n, const T* x, int64_t incx, const T* y, int64_t incy,
           scalar_t<T>* result) {
  return dot_routine(h, "dot", n, x, incx, y, incy, result, false);
}

template <typename T>
Status dotc(Handle& h, int64_t n, const T* x, int64_t incx, const T* y, int64_t incy, T* result) {
  return dot_routine(h, "dotc", n, x, incx, y, incy, result, true);
}

template <typename T>
Status nrm2(Handle& h, int64_t n, const T* x, int64_t incx, real_t<T>* result) {
  const std::string fn = detail::fn_name<T>("nrm2");
  TESSERA_RETURN_IF_ERROR(check_n(fn, n));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "x", x, n > 0));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "result", result, true));
  detail::log_bench<T>(h, "nrm2", {.n = n, .incx = incx});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  *result = n > 0 ? nrm2_value(h, fn, n, x, incx) : real_t<T>(0);
  return Status::ok();
}

template <typename T>
Status scal(Handle& h, int64_t n, scalar_t<T> alpha, T* x, int64_t incx) {
  return scal_routine(h, "scal", n, alpha, x, incx);
}

template <typename T>
Status scal_real(Handle& h, int64_t n, real_t<T> alpha, T* x, int64_t incx) {
  return scal_routine(h, "scal_real", n, alpha, x, incx);
}

template <typename T>
Status swap(Handle& h, int64_t n, T* x, int64_t incx, T* y, int64_t incy) {
  const std::string fn = detail::fn_name<T>("swap");
  TESSERA_RETURN_IF_ERROR(check_two_vectors<T>(fn, n, x, y));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incx", incx));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incy", incy));
  detail::log_bench<T>(h, "swap", {.n = n, .incx = incx, .incy = incy});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  detail::for_elements(h, n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) std::swap(x[vec_index(i, n, incx)], y[vec_index(i, n, incy)]);
  });
  return Status::ok();
}

template <typename T>
Status rot(Handle& h, int64_t n, T* x, int64_t incx, T* y, int64_t incy, real_t<T> c, real_t<T> s) {
  using R = real_t<T>;
  const std::string fn = detail::fn_name<T>("rot");
  TESSERA_RETURN_IF_ERROR(check_two_vectors<T>(fn, n, x, y));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incx", incx));
  TESSERA_RETURN_IF_ERROR(detail::check_inc(fn, "incy", incy));
  detail::log_bench<T>(h, "rot", {.n = n, .incx = incx, .incy = incy});
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  if (n == 0) return Status::ok();
  const kernels::RealLevel1<R>& k = real_kernels<R>(kernels::level1_kernels(fn));
  constexpr int64_t kParts = is_complex_v<T> ? 2 : 1;
  detail::for_elements(h, n, [&](int64_t b, int64_t e) {
    if (incx == 1 && incy == 1) {
      k.rot(kParts * (e - b), reals(x + b), reals(y + b), c, s);
      return;
    }
    for (int64_t i = b; i < e; ++i) {
      T& xi = x[vec_index(i, n, incx)];
      T& yi = y[vec_index(i, n, incy)];
      const T xv = xi, yv = yi;
      xi = c * xv + s * yv;
      yi = c * yv - s * xv;
    }
  });
  return Status::ok();
}

#define TESSERA_LEVEL1(T)                                                                       \
  template Status iamax<T>(Handle&, int64_t, const T*, int64_t, int64_t*);                      \
  template Status iamin<T>(Handle&, int64_t, const T*, int64_t, int64_t*);                      \
  template Status asum<T>(Handle&, int64_t, const T*, int64_t, real_t<T>*);                     \
  template Status axpy<T>(Handle&, int64_t, scalar_t<T>, const T*, int64_t, T*, int64_t);       \
  template Status copy<T>(Handle&, int64_t, const T*, int64_t, T*, int64_t);                    \
  template Status dot<T>(Handle&, int64_t, const T*, int64_t, const T*, int64_t, scalar_t<T>*); \
  template Status nrm2<T>(Handle&, int64_t, const T*, int64_t, real_t<T>*);                     \
  template Status scal<T>(Handle&, int64_t, scalar_t<T>, T*, int64_t);                          \
  template Status scal_real<T>(Handle&, int64_t, real_t<T>, T*, int64_t);                       \
  template Status swap<T>(Handle&, int64_t, T*, int64_t, T*, int64_t);                          \
  template Status rot<T>(Handle&, int64_t, T*, int64_t, T*, int64_t, real_t<T>, real_t<T>);
TESSERA_LEVEL1(float)
TESSERA_LEVEL1(double)
TESSERA_LEVEL1(cfloat)
TESSERA_LEVEL1(cdouble)
#undef TESSERA_LEVEL1

template Status dotc<cfloat>(Handle&, int64_t, const cfloat*, int64_t, const cfloat*, int64_t,
                             cfloat*);
template Status dotc<cdouble>(Handle&, int64_t, const cdouble*, int64_t, const cdouble*, int64_t,
                              cdouble*);

#define TESSERA_LEVEL1_HALF(T)                                                            \
  template Status axpy<T>(Handle&, int64_t, float, const T*, int64_t, T*, int64_t);       \
  template Status dot<T>(Handle&, int64_t, const T*, int64_t, const T*, int64_t, float*); \
  template Status scal<T>(Handle&, int64_t, float, T*, int64_t);
TESSERA_LEVEL1_HALF(f16)
TESSERA_LEVEL1_HALF(bf16)
#undef TESSERA_LEVEL1_HALF

}  // namespace tessera::blas
