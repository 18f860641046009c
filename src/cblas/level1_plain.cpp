// CBLAS level-1 routines that tessera::blas has no counterpart for: the extended-precision
// dots (sdsdot, dsdot) and the modified Givens rotation (rotmg, rotm). Plain loops: these are
// rarely used and memory-bound.
#include <cmath>

#include "common.hpp"

namespace {

using tessera::cblas::Args;

// BLAS strided-vector indexing: a negative increment walks the storage from its far end.
inline std::int64_t at(std::int64_t i, int n, int inc) {
  return inc >= 0 ? i * inc : (static_cast<std::int64_t>(n) - 1 - i) * -inc;
}

double dot_in_double(int n, const float* x, int incx, const float* y, int incy) {
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i)
    sum += static_cast<double>(x[at(i, n, incx)]) * static_cast<double>(y[at(i, n, incy)]);
  return sum;
}

// Applies H (P = {flag, h11, h21, h12, h22}) to the pairs (x_i, y_i).
template <typename T>
void rotm_impl(const char* rout, int n, T* x, int incx, T* y, int incy, const T* p) {
  if (n <= 0) return;
  Args a(rout);
  if (!a.inc(3, "incX", incx) || !a.inc(5, "incY", incy) || !a.ptr(2, "X", x, true) ||
      !a.ptr(4, "Y", y, true) || !a.ptr(6, "P", p, true))
    return;
  const T flag = p[0];
  T h11, h21, h12, h22;
  if (flag == T(-1)) {
    h11 = p[1], h21 = p[2], h12 = p[3], h22 = p[4];
  } else if (flag == T(0)) {
    h11 = 1, h21 = p[2], h12 = p[3], h22 = 1;
  } else if (flag == T(1)) {
    h11 = p[1], h21 = -1, h12 = 1, h22 = p[4];
  } else {
    return;  // -2: H is the identity (any other flag: nothing defined, nothing done)
  }
  for (std::int64_t i = 0; i < n; ++i) {
    T& xi = x[at(i, n, incx)];
    T& yi = y[at(i, n, incy)];
    const T w = xi, z = yi;
    xi = h11 * w + h12 * z;
    yi = h21 * w + h22 * z;
  }
}

// Constructs the modified Givens rotation H that zeroes the second component of
// (sqrt(d1) * x1, sqrt(d2) * y1), updating d1, d2 and x1 (Lawson, Hanson, Kincaid and Krogh,
// 1979). d1 and d2 are kept within [1/gamma^2, gamma^2] by rescaling, gamma = 4096.
template <typename T>
void rotmg_impl(const char* rout, T* d1, T* d2, T* x1, T y1, T* param) {
  Args a(rout);
  if (!a.ptr(1, "d1", d1, true) || !a.ptr(2, "d2", d2, true) || !a.ptr(3, "b1", x1, true) ||
      !a.ptr(5, "P", param, true))
    return;
  constexpr T kGamma = 4096, kGammaSq = kGamma * kGamma, kRGammaSq = 1 / kGammaSq;
  T flag = -1, h11 = 0, h12 = 0, h21 = 0, h22 = 0;
  auto zero_all = [&] {
    flag = -1;
    h11 = h12 = h21 = h22 = 0;
    *d1 = *d2 = *x1 = 0;
  };
  if (*d1 < 0) {
    zero_all();
  } else {
    const T p2 = *d2 * y1;
    if (p2 == 0) {
      param[0] = -2;
      return;
    }
    const T p1 = *d1 * *x1;
    const T q2 = p2 * y1;
    const T q1 = p1 * *x1;
    if (std::abs(q1) > std::abs(q2)) {
      h21 = -y1 / *x1;
      h12 = p2 / p1;
      const T u = 1 - h12 * h21;
      if (u > 0) {
        flag = 0;
        *d1 /= u;
        *d2 /= u;
        *x1 *= u;
      } else {
        zero_all();  // only reachable through rounding
      }
    } else if (q2 < 0) {
      zero_all();
    } else {
      flag = 1;
      h11 = p1 / p2;
      h22 = *x1 / y1;
      const T u = 1 + h11 * h22;
      const T d1_new = *d2 / u;
      *d2 = *d1 / u;
      *d1 = d1_new;
      *x1 = y1 * u;
    }
    // Once rescaled, H is stored in full (flag -1).
    auto make_full = [&] {
      if (flag == 0) {
        h11 = 1;
        h22 = 1;
      } else if (flag == 1) {
        h21 = -1;
        h12 = 1;
      }
      flag = -1;
    };
    if (*d1 != 0) {
      while (*d1 <= kRGammaSq || *d1 >= kGammaSq) {
        make_full();
        if (*d1 <= kRGammaSq) {
          *d1 *= kGammaSq;
          *x1 /= kGamma;
          h11 /= kGamma;
          h12 /= kGamma;
        } else {
          *d1 /= kGammaSq;
          *x1 *= kGamma;
          h11 *= kGamma;
          h12 *= kGamma;
        }
      }
    }
    if (*d2 != 0) {
      while (std::abs(*d2) <= kRGammaSq || std::abs(*d2) >= kGammaSq) {
        make_full();
        if (std::abs(*d2) <= kRGammaSq) {
          *d2 *= kGammaSq;
          h21 /= kGamma;
          h22 /= kGamma;
        } else {
          *d2 /= kGammaSq;
          h21 *= kGamma;
          h22 *= kGamma;
        }
      }
    }
  }
  if (flag < 0) {
    param[1] = h11, param[2] = h21, param[3] = h12, param[4] = h22;
  } else if (flag == 0) {
    param[2] = h21, param[3] = h12;
  } else {
    param[1] = h11, param[4] = h22;
  }
  param[0] = flag;
}

}  // namespace

extern "C" {

float cblas_sdsdot(const int N, const float alpha, const float* X, const int incX, const float* Y,
                   const int incY) {
  if (N <= 0) return alpha;
  Args a("cblas_sdsdot");
  if (!a.ptr(3, "X", X, true) || !a.ptr(5, "Y", Y, true)) return 0;
  return static_cast<float>(static_cast<double>(alpha) + dot_in_double(N, X, incX, Y, incY));
}

double cblas_dsdot(const int N, const float* X, const int incX, const float* Y, const int incY) {
  if (N <= 0) return 0;
  Args a("cblas_dsdot");
  if (!a.ptr(2, "X", X, true) || !a.ptr(4, "Y", Y, true)) return 0;
  return dot_in_double(N, X, incX, Y, incY);
}

void cblas_srotm(const int N, float* X, const int incX, float* Y, const int incY, const float* P) {
  rotm_impl("cblas_srotm", N, X, incX, Y, incY, P);
}
void cblas_drotm(const int N, double* X, const int incX, double* Y, const int incY,
                 const double* P) {
  rotm_impl("cblas_drotm", N, X, incX, Y, incY, P);
}
void cblas_srotmg(float* d1, float* d2, float* b1, const float b2, float* P) {
  rotmg_impl("cblas_srotmg", d1, d2, b1, b2, P);
}
void cblas_drotmg(double* d1, double* d2, double* b1, const double b2, double* P) {
  rotmg_impl("cblas_drotmg", d1, d2, b1, b2, P);
}

}  // extern "C"
