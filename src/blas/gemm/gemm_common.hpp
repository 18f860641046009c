// Shared by the gemm entry points: argument checks, replay lines, batching, OOM guard.
#pragma once

#include <new>
#include <string>

#include "../common.hpp"

namespace tessera::blas {

std::string describe_lowp_gemm(const std::string& dtype);

namespace detail {

Status check_gemm_args(const std::string& fn, Op ta, Op tb, std::int64_t m, std::int64_t n,
                       std::int64_t k, const void* a, std::int64_t lda, const void* b,
                       std::int64_t ldb, const void* c, std::int64_t ldc);
// Output matrices of a strided batch must not overlap: stride_c >= ldc * n when batch > 1.
Status check_strides(const std::string& fn, std::int64_t m, std::int64_t n, std::int64_t ldc,
                     std::int64_t stride_c, std::int64_t batch);

std::string fmt_scalar(double v);
// "tessera bench blas gemm --dtype f32 --trans nt --m .. --n .. --k .. --lda .. --ldb ..
//  --ldc .. --alpha .. --beta .. [--batch B] --threads T"
std::string gemm_bench_line(const char* dtype, Op ta, Op tb, std::int64_t m, std::int64_t n,
                            std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc,
                            const std::string& alpha, const std::string& beta,
                            std::int64_t batch, int threads);

// Runs one(Handle&, i) for i in [0, batch). Large matrices run one after another, each using
// every thread; small ones are spread over the threads, one matrix per thread at a time (each
// on a private single-thread handle). Either way each matrix is computed exactly as a single
// gemm call would, so results do not depend on the thread count.
Status run_batch(Handle& h, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k,
                 const std::function<Status(Handle&, std::int64_t)>& one);

// gemm for callers inside the library (trsm, trmm, syrk, trtri) whose arguments are already
// valid: no checks, no stream wait, no replay line; allocation failure -> kOutOfMemory.
template <typename T>
Status gemm_unchecked(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                      T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
                      T beta, T* c, std::int64_t ldc);

// Packing buffers are allocated inside the engine; an allocation failure there becomes
// kOutOfMemory instead of an exception.
template <typename F>
Status guard_oom(const std::string& fn, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return out_of_memory(fn + ": out of memory for packing buffers");
  }
}

}  // namespace detail
}  // namespace tessera::blas
