// Internal helpers shared by every BLAS routine: argument checks with uniform messages,
// the handle's state, thread-limited parallel loops, and type names for logs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/blas.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/memory.hpp"

namespace tessera::blas {

struct Handle::State {
  hal::Stream* stream = nullptr;
  Determinism determinism = Determinism::kBitwise;
  int num_threads = 0;
  void* user_workspace = nullptr;
  std::size_t user_workspace_bytes = 0;
  std::shared_ptr<Buffer> owned_workspace;
};

namespace detail {

// The letter BLAS uses for the type: s d c z, plus h (f16) and b (bf16).
template <typename T>
constexpr char type_letter() {
  if constexpr (std::is_same_v<T, float>) return 's';
  else if constexpr (std::is_same_v<T, double>) return 'd';
  else if constexpr (std::is_same_v<T, cfloat>) return 'c';
  else if constexpr (std::is_same_v<T, cdouble>) return 'z';
  else if constexpr (std::is_same_v<T, f16>) return 'h';
  else return 'b';
}
// The dtype name the bench tool takes: f32 f64 c64 c128 f16 bf16.
template <typename T>
constexpr const char* dtype_name() {
  if constexpr (std::is_same_v<T, float>) return "f32";
  else if constexpr (std::is_same_v<T, double>) return "f64";
  else if constexpr (std::is_same_v<T, cfloat>) return "c64";
  else if constexpr (std::is_same_v<T, cdouble>) return "c128";
  else if constexpr (std::is_same_v<T, f16>) return "f16";
  else return "bf16";
}

// Argument checks. Each returns ok or kInvalidArgument with a message such as
// "sgemm: lda = 3 must be >= max(1, m) = 5". `fn` is the routine name with its type letter.
Status check_size(const std::string& fn, const char* name, std::int64_t value);
Status check_ld(const std::string& fn, const char* name, std::int64_t ld, const char* rows_name,
                std::int64_t rows);
Status check_inc(const std::string& fn, const char* name, std::int64_t inc);
// `needed` is true when the pointer will be dereferenced (non-zero sizes).
Status check_ptr(const std::string& fn, const char* name, const void* p, bool needed);
Status check_op(const std::string& fn, const char* name, Op op);
Status check_uplo(const std::string& fn, Uplo uplo);
Status check_diag(const std::string& fn, Diag diag);
Status check_side(const std::string& fn, Side side);
Status check_batch(const std::string& fn, std::int64_t batch_count);

template <typename T>
std::string fn_name(const char* routine) {
  return std::string(1, type_letter<T>()) + routine;
}

// Waits for the handle's stream (if any) so the call is ordered after earlier work.
Status begin_call(Handle& h);

// Threads a call on this handle may use (>= 1).
int max_threads(const Handle& h);
// parallel_for over [begin, end) with chunks of at least `grain`, using at most
// max_threads(h) threads. Runs inline when one thread (or one chunk) suffices.
void parallel_for(const Handle& h, std::int64_t begin, std::int64_t end, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t)>& fn);

// Scratch memory from the handle: the user block when large enough, else the handle's own
// (grown on demand, kept for the next call). Aligned to 64 bytes.
Result<void*> workspace(Handle& h, std::size_t bytes);

// Element offset of logical element i of a strided vector of n elements (BLAS semantics:
// a negative increment walks the storage backwards from its far end).
inline std::int64_t vec_index(std::int64_t i, std::int64_t n, std::int64_t inc) {
  return inc >= 0 ? i * inc : (n - 1 - i) * (-inc);
}

}  // namespace detail
}  // namespace tessera::blas
