#include "gemm_common.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace tessera::blas::detail {

Status check_gemm_args(const std::string& fn, Op ta, Op tb, std::int64_t m, std::int64_t n,
                       std::int64_t k, const void* a, std::int64_t lda, const void* b,
                       std::int64_t ldb, const void* c, std::int64_t ldc) {
  TESSERA_RETURN_IF_ERROR(check_op(fn, "transa", ta));
  TESSERA_RETURN_IF_ERROR(check_op(fn, "transb", tb));
  TESSERA_RETURN_IF_ERROR(check_size(fn, "m", m));
  TESSERA_RETURN_IF_ERROR(check_size(fn, "n", n));
  TESSERA_RETURN_IF_ERROR(check_size(fn, "k", k));
  const bool na = ta == Op::kNoTrans, nb = tb == Op::kNoTrans;
  TESSERA_RETURN_IF_ERROR(check_ld(fn, "lda", lda, na ? "m" : "k", na ? m : k));
  TESSERA_RETURN_IF_ERROR(check_ld(fn, "ldb", ldb, nb ? "k" : "n", nb ? k : n));
  TESSERA_RETURN_IF_ERROR(check_ld(fn, "ldc", ldc, "m", m));
  const bool uses_ab = m > 0 && n > 0 && k > 0;
  TESSERA_RETURN_IF_ERROR(check_ptr(fn, "a", a, uses_ab));
  TESSERA_RETURN_IF_ERROR(check_ptr(fn, "b", b, uses_ab));
  TESSERA_RETURN_IF_ERROR(check_ptr(fn, "c", c, m > 0 && n > 0));
  return Status::ok();
}

Status check_strides(const std::string& fn, std::int64_t m, std::int64_t n, std::int64_t ldc,
                     std::int64_t stride_c, std::int64_t batch) {
  if (batch <= 1 || m == 0 || n == 0 || stride_c >= ldc * n) return Status::ok();
  return invalid_argument(fn + ": stride_c = " + std::to_string(stride_c) +
                          " must be >= ldc * n = " + std::to_string(ldc * n) +
                          " so the output matrices do not overlap");
}

std::string fmt_scalar(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string gemm_bench_line(const char* dtype, Op ta, Op tb, std::int64_t m, std::int64_t n,
                            std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc,
                            const std::string& alpha, const std::string& beta,
                            std::int64_t batch, int threads) {
  std::string s = "tessera bench blas gemm --dtype " + std::string(dtype) + " --trans " +
                  std::string(op_name(ta)) + std::string(op_name(tb)) +
                  " --m " + std::to_string(m) + " --n " + std::to_string(n) +
                  " --k " + std::to_string(k) + " --lda " + std::to_string(lda) +
                  " --ldb " + std::to_string(ldb) + " --ldc " + std::to_string(ldc) +
                  " --alpha " + alpha + " --beta " + beta;
  if (batch > 0) s += " --batch " + std::to_string(batch);
  return s + " --threads " + std::to_string(threads);
}

Status run_batch(Handle& h, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k,
                 const std::function<Status(Handle&, std::int64_t)>& one) {
  const int threads = max_threads(h);
  const bool large = m * n * std::max<std::int64_t>(k, 1) >= (std::int64_t{1} << 22);
  if (threads <= 1 || batch <= 1 || large) {
    for (std::int64_t i = 0; i < batch; ++i) TESSERA_RETURN_IF_ERROR(one(h, i));
    return Status::ok();
  }
  std::mutex mutex;
  Status first_error;
  std::int64_t first_index = batch;
  parallel_for(h, 0, batch, 1, [&](std::int64_t b0, std::int64_t b1) {
    Handle local;
    (void)local.set_num_threads(1);
    local.set_determinism(h.determinism());
    for (std::int64_t i = b0; i < b1; ++i) {
      Status s = one(local, i);
      if (!s.is_ok()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (i < first_index) first_index = i, first_error = s;
        return;
      }
    }
  });
  return first_error;
}

}  // namespace tessera::blas::detail
