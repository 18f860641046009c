// tessera BLAS: levels 1-3, batched gemm, trtri. Column-major, like reference BLAS and
// rocBLAS; row-major callers go through the CBLAS layer (libtessera_cblas.so).
//
// Conventions
// - Every routine takes a Handle (stream, determinism mode, thread count, workspace).
//   A Handle is not thread-safe: use one per calling thread.
// - Sizes, leading dimensions and increments are std::int64_t. Arguments are validated
//   before anything is read or written; an invalid argument returns kInvalidArgument
//   naming the parameter, and no output is touched.
// - Index results (iamax/iamin) are 0-based, as in CBLAS; 0 when n == 0.
// - Types: float, double, cfloat, cdouble for every routine; f16/bf16 additionally for
//   axpy, dot and scal (f32 scalars and f32 accumulation); bf16/f16 x bf16/f16 -> f32
//   and u8 x s8 -> s32 gemm.
// - Determinism::kBitwise (default): results are bitwise identical for any thread count
//   (work is split over M and N, never over K). kAny allows thread-count-dependent
//   summation order where it is faster (split-K for gemm with small M*N and large K).
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/core/half.hpp"
#include "tessera/core/status.hpp"

namespace tessera::hal {
class Stream;
}

namespace tessera::blas {

using cfloat = std::complex<float>;
using cdouble = std::complex<double>;

enum class Op : int { kNoTrans = 0, kTrans = 1, kConjTrans = 2 };
enum class Uplo : int { kUpper = 0, kLower = 1 };
enum class Diag : int { kNonUnit = 0, kUnit = 1 };
enum class Side : int { kLeft = 0, kRight = 1 };
enum class Determinism : int { kBitwise = 0, kAny = 1 };

std::string_view op_name(Op op);  // "n", "t", "c"

// The scalar type of a routine on T (alpha, dot results): T itself, f32 for f16/bf16.
template <typename T>
struct scalar_of {
  using type = T;
};
template <>
struct scalar_of<f16> {
  using type = float;
};
template <>
struct scalar_of<bf16> {
  using type = float;
};
template <typename T>
using scalar_t = typename scalar_of<T>::type;

// The real type of T (results of nrm2/asum, rot's c): float for cfloat, double for cdouble.
template <typename T>
struct real_of {
  using type = scalar_t<T>;
};
template <typename R>
struct real_of<std::complex<R>> {
  using type = R;
};
template <typename T>
using real_t = typename real_of<T>::type;

template <typename T>
inline constexpr bool is_complex_v = !std::is_same_v<T, real_t<T>> && !std::is_same_v<T, f16> &&
                                     !std::is_same_v<T, bf16>;

class Handle {
 public:
  Handle();
  explicit Handle(hal::Stream* stream);
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&&) noexcept;
  Handle& operator=(Handle&&) noexcept;

  // CPU routines run on the calling thread (and the thread pool) after the stream has
  // finished its earlier work, so they are ordered after everything enqueued before.
  // nullptr (the default) means no stream: run immediately.
  hal::Stream* stream() const;
  void set_stream(hal::Stream* stream);

  Determinism determinism() const;
  void set_determinism(Determinism mode);

  // Upper bound on the threads a call uses; 0 (the default) means the process thread pool.
  int num_threads() const;
  Status set_num_threads(int n);

  // Scratch memory for packing. By default the handle allocates on demand and keeps the
  // largest block it needed; a caller-provided block is used when large enough.
  Status set_workspace(void* ptr, std::size_t bytes);
  std::size_t workspace_bytes() const;

  struct State;
  State& state() const { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

// ---- Level 1 --------------------------------------------------------------------------
template <typename T>
Status iamax(Handle& h, std::int64_t n, const T* x, std::int64_t incx, std::int64_t* result);
template <typename T>
Status iamin(Handle& h, std::int64_t n, const T* x, std::int64_t incx, std::int64_t* result);
template <typename T>  // sum of |re| + |im|
Status asum(Handle& h, std::int64_t n, const T* x, std::int64_t incx, real_t<T>* result);
template <typename T>  // y += alpha * x
Status axpy(Handle& h, std::int64_t n, scalar_t<T> alpha, const T* x, std::int64_t incx, T* y,
            std::int64_t incy);
template <typename T>
Status copy(Handle& h, std::int64_t n, const T* x, std::int64_t incx, T* y, std::int64_t incy);
template <typename T>  // sum x*y (dotu for complex)
Status dot(Handle& h, std::int64_t n, const T* x, std::int64_t incx, const T* y,
           std::int64_t incy, scalar_t<T>* result);
template <typename T>  // sum conj(x)*y; complex only
Status dotc(Handle& h, std::int64_t n, const T* x, std::int64_t incx, const T* y,
            std::int64_t incy, T* result);
template <typename T>  // scaled so that huge and tiny values neither overflow nor underflow
Status nrm2(Handle& h, std::int64_t n, const T* x, std::int64_t incx, real_t<T>* result);
template <typename T>
Status scal(Handle& h, std::int64_t n, scalar_t<T> alpha, T* x, std::int64_t incx);
template <typename T>  // complex x scaled by a real alpha (csscal/zdscal)
Status scal_real(Handle& h, std::int64_t n, real_t<T> alpha, T* x, std::int64_t incx);
template <typename T>
Status swap(Handle& h, std::int64_t n, T* x, std::int64_t incx, T* y, std::int64_t incy);
template <typename T>  // plane rotation with real c and s (csrot/zdrot for complex)
Status rot(Handle& h, std::int64_t n, T* x, std::int64_t incx, T* y, std::int64_t incy,
           real_t<T> c, real_t<T> s);
template <typename T>  // constructs a Givens rotation; a, b are overwritten (r, z)
Status rotg(T* a, T* b, real_t<T>* c, T* s);

// ---- Level 2 --------------------------------------------------------------------------
template <typename T>  // y = alpha*op(A)*x + beta*y, A is m x n
Status gemv(Handle& h, Op trans, std::int64_t m, std::int64_t n, T alpha, const T* a,
            std::int64_t lda, const T* x, std::int64_t incx, T beta, T* y, std::int64_t incy);
template <typename T>  // A += alpha*x*y^T
Status geru(Handle& h, std::int64_t m, std::int64_t n, T alpha, const T* x, std::int64_t incx,
            const T* y, std::int64_t incy, T* a, std::int64_t lda);
template <typename T>  // A += alpha*x*y^H (same as geru for real T)
Status gerc(Handle& h, std::int64_t m, std::int64_t n, T alpha, const T* x, std::int64_t incx,
            const T* y, std::int64_t incy, T* a, std::int64_t lda);
template <typename T>
Status ger(Handle& h, std::int64_t m, std::int64_t n, T alpha, const T* x, std::int64_t incx,
           const T* y, std::int64_t incy, T* a, std::int64_t lda) {
  return geru(h, m, n, alpha, x, incx, y, incy, a, lda);
}
template <typename T>  // x = op(A)*x, A triangular n x n
Status trmv(Handle& h, Uplo uplo, Op trans, Diag diag, std::int64_t n, const T* a,
            std::int64_t lda, T* x, std::int64_t incx);
template <typename T>  // x = op(A)^-1 * x
Status trsv(Handle& h, Uplo uplo, Op trans, Diag diag, std::int64_t n, const T* a,
            std::int64_t lda, T* x, std::int64_t incx);
template <typename T>  // y = alpha*A*x + beta*y, A symmetric (not Hermitian) n x n
Status symv(Handle& h, Uplo uplo, std::int64_t n, T alpha, const T* a, std::int64_t lda,
            const T* x, std::int64_t incx, T beta, T* y, std::int64_t incy);
template <typename T>  // y = alpha*A*x + beta*y, A Hermitian (complex only)
Status hemv(Handle& h, Uplo uplo, std::int64_t n, T alpha, const T* a, std::int64_t lda,
            const T* x, std::int64_t incx, T beta, T* y, std::int64_t incy);

// ---- Level 3 --------------------------------------------------------------------------
template <typename T>  // C = alpha*op(A)*op(B) + beta*C; C is m x n, op(A) m x k
Status gemm(Handle& h, Op transa, Op transb, std::int64_t m, std::int64_t n, std::int64_t k,
            T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
            std::int64_t ldc);

// Mixed precision: A, B in bf16 or f16, C and the accumulation in f32.
Status gemm_bf16(Handle& h, Op transa, Op transb, std::int64_t m, std::int64_t n,
                 std::int64_t k, float alpha, const bf16* a, std::int64_t lda, const bf16* b,
                 std::int64_t ldb, float beta, float* c, std::int64_t ldc);
Status gemm_f16(Handle& h, Op transa, Op transb, std::int64_t m, std::int64_t n, std::int64_t k,
                float alpha, const f16* a, std::int64_t lda, const f16* b, std::int64_t ldb,
                float beta, float* c, std::int64_t ldc);
// Integer: A unsigned 8-bit, B signed 8-bit, C = alpha*op(A)*op(B) + beta*C in int32 with
// wrap-around (two's complement) arithmetic. kConjTrans means kTrans.
Status gemm_u8s8s32(Handle& h, Op transa, Op transb, std::int64_t m, std::int64_t n,
                    std::int64_t k, std::int32_t alpha, const std::uint8_t* a, std::int64_t lda,
                    const std::int8_t* b, std::int64_t ldb, std::int32_t beta, std::int32_t* c,
                    std::int64_t ldc);

template <typename T>  // one gemm per pointer triple
Status gemm_batched(Handle& h, Op transa, Op transb, std::int64_t m, std::int64_t n,
                    std::int64_t k, T alpha, const T* const a[], std::int64_t lda,
                    const T* const b[], std::int64_t ldb, T beta, T* const c[],
                    std::int64_t ldc, std::int64_t batch_count);
template <typename T>  // matrix i at a + i*stride_a (strides may be 0 for A and B)
Status gemm_strided_batched(Handle& h, Op transa, Op transb, std::int64_t m, std::int64_t n,
                            std::int64_t k, T alpha, const T* a, std::int64_t lda,
                            std::int64_t stride_a, const T* b, std::int64_t ldb,
                            std::int64_t stride_b, T beta, T* c, std::int64_t ldc,
                            std::int64_t stride_c, std::int64_t batch_count);

template <typename T>  // B = alpha*op(A)^-1*B (side left) or alpha*B*op(A)^-1 (right)
Status trsm(Handle& h, Side side, Uplo uplo, Op transa, Diag diag, std::int64_t m,
            std::int64_t n, T alpha, const T* a, std::int64_t lda, T* b, std::int64_t ldb);
template <typename T>  // B = alpha*op(A)*B (left) or alpha*B*op(A) (right)
Status trmm(Handle& h, Side side, Uplo uplo, Op transa, Diag diag, std::int64_t m,
            std::int64_t n, T alpha, const T* a, std::int64_t lda, T* b, std::int64_t ldb);
template <typename T>  // C = alpha*A*A^T + beta*C (trans kNoTrans, A n x k) or A^T*A (kTrans)
Status syrk(Handle& h, Uplo uplo, Op trans, std::int64_t n, std::int64_t k, T alpha,
            const T* a, std::int64_t lda, T beta, T* c, std::int64_t ldc);
// In-place inverse of a triangular matrix. A singular matrix (zero on the diagonal of a
// non-unit matrix) returns kInvalidArgument naming the first zero pivot; A is untouched.
template <typename T>
Status trtri(Handle& h, Uplo uplo, Diag diag, std::int64_t n, T* a, std::int64_t lda);
template <typename T>
Status trtri_batched(Handle& h, Uplo uplo, Diag diag, std::int64_t n, T* const a[],
                     std::int64_t lda, std::int64_t batch_count);
template <typename T>
Status trtri_strided_batched(Handle& h, Uplo uplo, Diag diag, std::int64_t n, T* a,
                             std::int64_t lda, std::int64_t stride_a,
                             std::int64_t batch_count);

// The packed-engine kernel and blocking gemm uses for this dtype on this machine (under the
// current TESSERA_MAX_ISA cap), e.g. "gemm_f32_avx512_32x12 mc=352 kc=368 nc=5688 (heuristic)"
// or "... (tuned)". Calls with one row or column of C (gemv) or small shapes (the no-packing
// path, see docs/blas.md) take other routes. For logs, tests and tools.
std::string describe_gemm(const char* dtype, std::int64_t m, std::int64_t n, std::int64_t k);

// ---- Tuning ------------------------------------------------------------------------------
// Searches the GEMM blocking sizes (MC, KC, NC) of this machine's microkernel for each dtype
// (f32, f64, bf16, int8) by timing a size x size x size gemm per candidate (coordinate
// search: KC, then MC, then NC, starting from the cache-size heuristic) and, when `write` is
// set, stores the winner with every candidate's time in the tuning database (`db_path`, or
// the default). Later processes read it at their first gemm (`tessera tune explain`).
struct GemmTuneOptions {
  std::vector<std::string> dtypes = {"f32", "f64", "bf16", "int8"};
  std::int64_t size = 1024;
  double min_seconds_per_candidate = 0.05;
  bool write = true;
  std::string db_path;  // empty: tune::default_db_path()
};
struct GemmTuneResult {
  std::string dtype, kernel;
  std::string heuristic, chosen;  // "mc=.. kc=.. nc=.."
  double heuristic_gflops = 0, chosen_gflops = 0;
  int candidates = 0;
};
Result<std::vector<GemmTuneResult>> tune_gemm_blocking(Handle& h, const GemmTuneOptions& options);

}  // namespace tessera::blas
