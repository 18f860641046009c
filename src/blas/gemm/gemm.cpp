#include "../common.hpp"

namespace tessera::blas {
namespace {

template <typename T>
T conj_if(T v, bool c) {
  if constexpr (is_complex_v<T>) return c ? std::conj(v) : v;
  else return v;
}

template <typename T>
Status check_gemm(const std::string& fn, Op ta, Op tb, std::int64_t m, std::int64_t n,
                  std::int64_t k, const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
                  const T* c, std::int64_t ldc) {
  TESSERA_RETURN_IF_ERROR(detail::check_op(fn, "transa", ta));
  TESSERA_RETURN_IF_ERROR(detail::check_op(fn, "transb", tb));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "m", m));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "n", n));
  TESSERA_RETURN_IF_ERROR(detail::check_size(fn, "k", k));
  const bool na = ta == Op::kNoTrans, nb = tb == Op::kNoTrans;
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "lda", lda, na ? "m" : "k", na ? m : k));
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "ldb", ldb, nb ? "k" : "n", nb ? k : n));
  TESSERA_RETURN_IF_ERROR(detail::check_ld(fn, "ldc", ldc, "m", m));
  const bool uses_ab = m > 0 && n > 0 && k > 0;
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "a", a, uses_ab));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "b", b, uses_ab));
  TESSERA_RETURN_IF_ERROR(detail::check_ptr(fn, "c", c, m > 0 && n > 0));
  return Status::ok();
}

}  // namespace

// Temporary plain implementation; replaced by the packed engine.
template <typename T>
Status gemm(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
            const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
            std::int64_t ldc) {
  const std::string fn = detail::fn_name<T>("gemm");
  TESSERA_RETURN_IF_ERROR(check_gemm(fn, ta, tb, m, n, k, a, lda, b, ldb, c, ldc));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      T acc{};
      for (std::int64_t p = 0; p < k; ++p) {
        T av = ta == Op::kNoTrans ? a[i + p * lda] : conj_if(a[p + i * lda], ta == Op::kConjTrans);
        T bv = tb == Op::kNoTrans ? b[p + j * ldb] : conj_if(b[j + p * ldb], tb == Op::kConjTrans);
        acc += av * bv;
      }
      T& cv = c[i + j * ldc];
      cv = beta == T{} ? alpha * acc : alpha * acc + beta * cv;
    }
  return Status::ok();
}

#define TESSERA_INSTANTIATE(T)                                                              \
  template Status gemm<T>(Handle&, Op, Op, std::int64_t, std::int64_t, std::int64_t, T,      \
                          const T*, std::int64_t, const T*, std::int64_t, T, T*, std::int64_t);
TESSERA_INSTANTIATE(float)
TESSERA_INSTANTIATE(double)
TESSERA_INSTANTIATE(cfloat)
TESSERA_INSTANTIATE(cdouble)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::blas
