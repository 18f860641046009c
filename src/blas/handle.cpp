#include <sstream>

#include "common.hpp"
#include "tessera/core/thread_pool.hpp"
#include "tessera/hal/hal.hpp"

namespace tessera::blas {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::kNoTrans: return "n";
    case Op::kTrans: return "t";
    case Op::kConjTrans: return "c";
  }
  return "?";
}

Handle::Handle() : state_(std::make_unique<State>()) {}
Handle::Handle(hal::Stream* stream) : Handle() { state_->stream = stream; }
Handle::~Handle() = default;
Handle::Handle(Handle&&) noexcept = default;
Handle& Handle::operator=(Handle&&) noexcept = default;

hal::Stream* Handle::stream() const { return state_->stream; }
void Handle::set_stream(hal::Stream* stream) { state_->stream = stream; }
Determinism Handle::determinism() const { return state_->determinism; }
void Handle::set_determinism(Determinism mode) { state_->determinism = mode; }
int Handle::num_threads() const { return state_->num_threads; }

Status Handle::set_num_threads(int n) {
  if (n < 0) return invalid_argument("blas handle: num_threads = " + std::to_string(n) +
                                     " must be >= 0 (0 = the process thread pool)");
  state_->num_threads = n;
  return Status::ok();
}

Status Handle::set_workspace(void* ptr, std::size_t bytes) {
  if (ptr == nullptr && bytes != 0)
    return invalid_argument("blas handle: workspace is null but bytes = " +
                            std::to_string(bytes));
  if (reinterpret_cast<std::uintptr_t>(ptr) % 64 != 0)
    return invalid_argument("blas handle: workspace must be aligned to 64 bytes");
  state_->user_workspace = ptr;
  state_->user_workspace_bytes = bytes;
  return Status::ok();
}

std::size_t Handle::workspace_bytes() const {
  std::size_t owned = state_->owned_workspace ? state_->owned_workspace->size() : 0;
  return std::max(owned, state_->user_workspace_bytes);
}

namespace detail {

Status check_size(const std::string& fn, const char* name, std::int64_t value) {
  if (value >= 0) return Status::ok();
  return invalid_argument(fn + ": " + name + " = " + std::to_string(value) + " must be >= 0");
}

Status check_ld(const std::string& fn, const char* name, std::int64_t ld, const char* rows_name,
                std::int64_t rows) {
  std::int64_t need = std::max<std::int64_t>(1, rows);
  if (ld >= need) return Status::ok();
  return invalid_argument(fn + ": " + name + " = " + std::to_string(ld) + " must be >= max(1, " +
                          rows_name + ") = " + std::to_string(need));
}

Status check_inc(const std::string& fn, const char* name, std::int64_t inc) {
  if (inc != 0) return Status::ok();
  return invalid_argument(fn + ": " + name + " must not be 0");
}

Status check_ptr(const std::string& fn, const char* name, const void* p, bool needed) {
  if (p != nullptr || !needed) return Status::ok();
  return invalid_argument(fn + ": " + name + " is null");
}

Status check_op(const std::string& fn, const char* name, Op op) {
  int v = static_cast<int>(op);
  if (v >= 0 && v <= 2) return Status::ok();
  return invalid_argument(fn + ": " + name + " = " + std::to_string(v) +
                          " is not a transpose operation (0 = n, 1 = t, 2 = c)");
}

Status check_uplo(const std::string& fn, Uplo uplo) {
  int v = static_cast<int>(uplo);
  if (v == 0 || v == 1) return Status::ok();
  return invalid_argument(fn + ": uplo = " + std::to_string(v) +
                          " is not 0 (upper) or 1 (lower)");
}

Status check_diag(const std::string& fn, Diag diag) {
  int v = static_cast<int>(diag);
  if (v == 0 || v == 1) return Status::ok();
  return invalid_argument(fn + ": diag = " + std::to_string(v) +
                          " is not 0 (non-unit) or 1 (unit)");
}

Status check_side(const std::string& fn, Side side) {
  int v = static_cast<int>(side);
  if (v == 0 || v == 1) return Status::ok();
  return invalid_argument(fn + ": side = " + std::to_string(v) +
                          " is not 0 (left) or 1 (right)");
}

Status check_batch(const std::string& fn, std::int64_t batch_count) {
  return check_size(fn, "batch_count", batch_count);
}

Status begin_call(Handle& h) {
  hal::Stream* stream = h.state().stream;
  if (stream == nullptr) return Status::ok();
  return stream->synchronize().with_context("blas: waiting for the handle's stream");
}

int max_threads(const Handle& h) {
  int pool = thread_pool().num_threads();
  int limit = h.state().num_threads;
  return limit > 0 ? std::min(limit, pool) : pool;
}

void parallel_for(const Handle& h, std::int64_t begin, std::int64_t end, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (end <= begin) return;
  grain = std::max<std::int64_t>(grain, 1);
  const int threads = max_threads(h);
  if (threads <= 1 || end - begin <= grain || ThreadPool::in_parallel_region()) {
    fn(begin, end);
    return;
  }
  // Never more chunks than the handle allows threads.
  const std::int64_t range = end - begin;
  grain = std::max(grain, (range + threads - 1) / threads);
  thread_pool().parallel_for(begin, end, grain, fn);
}

Result<void*> workspace(Handle& h, std::size_t bytes) {
  Handle::State& s = h.state();
  if (bytes == 0) bytes = 1;
  if (s.user_workspace != nullptr && s.user_workspace_bytes >= bytes) return s.user_workspace;
  if (!s.owned_workspace || s.owned_workspace->size() < bytes) {
    s.owned_workspace.reset();  // free the old block before asking for a bigger one
    TESSERA_ASSIGN_OR_RETURN(s.owned_workspace, host_allocator().allocate(bytes));
  }
  return s.owned_workspace->data();
}

}  // namespace detail
}  // namespace tessera::blas
