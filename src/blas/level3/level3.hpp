// Internals of trsm, trmm, syrk and trtri: a view of op(A) as a triangular matrix, the
// recursive drivers (bulk work in gemm) and the small unblocked kernels at their leaves.
//
// The drivers split the triangle in two, recurse on the diagonal halves and update the
// off-diagonal block with one gemm, so almost all flops run in gemm at large shapes. The
// leaves (order <= kTriLeaf) are plain C++, parallel only over independent columns or rows
// of B, so every result is bitwise identical for any thread count.
#pragma once

#include <cstdint>
#include <string>

#include "../common.hpp"
#include "../gemm/gemm_common.hpp"

namespace tessera::blas::level3 {

// Triangles of at most this order are handled by the unblocked kernels.
inline constexpr std::int64_t kTriLeaf = 32;
// Diagonal blocks of syrk of at most this order are computed by gemm into a temporary.
inline constexpr std::int64_t kSyrkLeaf = 64;

// Where to split an order-n problem: about half, rounded up to a multiple of 16 so the
// gemm blocks stay aligned to typical register tiles.
inline std::int64_t split_point(std::int64_t n) {
  std::int64_t n1 = (n / 2 + 15) / 16 * 16;
  return n1 < n ? n1 : n / 2;
}

template <typename T>
T conj_if(T v, bool conj) {
  if constexpr (is_complex_v<T>)
    return conj ? std::conj(v) : v;
  else
    return v;
}

// a * b without the NaN-recovery branch of std::complex's operator*, which keeps loops from
// vectorising (the same arithmetic reference BLAS does).
template <typename T>
inline T mul(T a, T b) {
  if constexpr (is_complex_v<T>) {
    return T(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  } else {
    return a * b;
  }
}

// A gemm operand: a stored block and the op that turns it into the wanted block.
template <typename T>
struct Operand {
  const T* p;
  Op op;
};

// op(A) of a triangular A: lower tells whether op(A) (not A) is lower triangular.
template <typename T>
struct Tri {
  const T* a;
  std::int64_t lda;
  Op op;  // kConjTrans only for complex T
  bool lower;
  bool unit;

  // Element (i, j) of op(A), for i, j inside the triangle.
  T at(std::int64_t i, std::int64_t j) const {
    return op == Op::kNoTrans ? a[i + j * lda] : conj_if(a[j + i * lda], op == Op::kConjTrans);
  }
  // The diagonal block of op(A) starting at (k, k).
  Tri diag_block(std::int64_t k) const { return {a + k + k * lda, lda, op, lower, unit}; }
  // The block of op(A) starting at row i, column j, as a gemm operand.
  Operand<T> block(std::int64_t i, std::int64_t j) const {
    return op == Op::kNoTrans ? Operand<T>{a + i + j * lda, op} : Operand<T>{a + j + i * lda, op};
  }
};

template <typename T>
Tri<T> make_tri(const T* a, std::int64_t lda, Uplo uplo, Op trans, Diag diag) {
  if (!is_complex_v<T> && trans == Op::kConjTrans) trans = Op::kTrans;
  const bool lower = (uplo == Uplo::kLower) == (trans == Op::kNoTrans);
  return {a, lda, trans, lower, diag == Diag::kUnit};
}

// B (m x n) = alpha * B; alpha == 0 writes zeros (NaN in B does not survive).
template <typename T>
void scale_matrix(std::int64_t m, std::int64_t n, T alpha, T* b, std::int64_t ldb);

// B = op(A)^-1 * B (left, op(A) is m x m) or B * op(A)^-1 (right, n x n), in place.
template <typename T>
Status trsm_rec(Handle& h, Side side, const Tri<T>& t, std::int64_t m, std::int64_t n, T* b,
                std::int64_t ldb);
// B = op(A) * B (left) or B * op(A) (right), in place.
template <typename T>
Status trmm_rec(Handle& h, Side side, const Tri<T>& t, std::int64_t m, std::int64_t n, T* b,
                std::int64_t ldb);
// In-place inverse; the diagonal of a non-unit A must be free of zeros (checked by callers).
template <typename T>
Status trtri_rec(Handle& h, Uplo uplo, Diag diag, std::int64_t n, T* a, std::int64_t lda);

// Unblocked leaves (unblocked.cpp): the triangle has order <= kTriLeaf.
template <typename T>
void trsm_leaf(const Handle& h, Side side, const Tri<T>& t, std::int64_t m, std::int64_t n, T* b,
               std::int64_t ldb);
template <typename T>
void trmm_leaf(const Handle& h, Side side, const Tri<T>& t, std::int64_t m, std::int64_t n, T* b,
               std::int64_t ldb);
template <typename T>
void trtri_leaf(Uplo uplo, Diag diag, std::int64_t n, T* a, std::int64_t lda);

// Index of the first zero on the diagonal of A (n x n), or -1.
template <typename T>
std::int64_t first_zero_pivot(std::int64_t n, const T* a, std::int64_t lda);

// Argument checks and bench lines shared by the entry points (args.cpp). `fn` is the routine
// name with its type letter ("strsm").
Status check_trxm(const std::string& fn, Side side, Uplo uplo, Op transa, Diag diag, std::int64_t m,
                  std::int64_t n, bool alpha_zero, const void* a, std::int64_t lda, const void* b,
                  std::int64_t ldb);
Status check_syrk(const std::string& fn, bool is_complex, Uplo uplo, Op trans, std::int64_t n,
                  std::int64_t k, bool alpha_zero, const void* a, std::int64_t lda, const void* c,
                  std::int64_t ldc);
Status check_trtri(const std::string& fn, Uplo uplo, Diag diag, std::int64_t n, std::int64_t lda);
// A scalar as a replay line writes it: "1.5", or "0.75,-0.5" for a complex one.
struct LogScalar {
  double re, im;
  bool complex;
};
template <typename T>
LogScalar log_scalar(T v) {
  if constexpr (is_complex_v<T>)
    return {static_cast<double>(v.real()), static_cast<double>(v.imag()), true};
  else
    return {static_cast<double>(v), 0.0, false};
}
// `tessera bench blas trsm --dtype f32 ...` (TESSERA_LOG=bench).
void log_trxm(const Handle& h, const char* op, const char* dtype, Side side, Uplo uplo, Op transa,
              Diag diag, std::int64_t m, std::int64_t n, std::int64_t lda, std::int64_t ldb,
              LogScalar alpha);
void log_syrk(const Handle& h, const char* dtype, Uplo uplo, Op trans, std::int64_t n,
              std::int64_t k, std::int64_t lda, std::int64_t ldc, LogScalar alpha, LogScalar beta);
void log_trtri(const Handle& h, const char* op, const char* dtype, Uplo uplo, Diag diag,
               std::int64_t n, std::int64_t lda, std::int64_t batch);  // batch < 0: none

}  // namespace tessera::blas::level3

// One explicit instantiation per supported type.
#define TESSERA_LEVEL3_FOR_EACH_TYPE(X) X(float) X(double) X(cfloat) X(cdouble)
