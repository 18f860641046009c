// Internal helpers shared by every DNN primitive: the handle's state, descriptor checks with
// uniform messages, thread-limited parallel loops, workspace, f32 staging of bf16/f16
// tensors, strided element access for reference code, and the ordered-list dispatcher.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../blas/common.hpp"
#include "tessera/blas.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/memory.hpp"
#include "tessera/dnn.hpp"

namespace tessera::dnn {

// The stream and the thread limit live in the BLAS handle (GEMM-based algorithms call
// through it, so it must carry them anyway); the dnn handle reads them from there.
struct Handle::State {
  std::string tune_db;
  bool use_tune_db = true;
  blas::Handle blas;
  std::shared_ptr<Buffer> workspace;
};

namespace detail {

// ---- calls and threads -------------------------------------------------------------------
// Waits for the handle's stream (if any) so the call is ordered after earlier work.
Status begin_call(Handle& h, const char* fn);
// Threads a call may use, and a parallel loop limited to them: BLAS's (the same handle limit).
// Chunking never changes results: each index is computed by exactly one thread.
inline int max_threads(const Handle& h) { return blas::detail::max_threads(h.state().blas); }
inline void parallel_for(const Handle& h, std::int64_t begin, std::int64_t end,
                         std::int64_t grain,
                         const std::function<void(std::int64_t, std::int64_t)>& fn) {
  blas::detail::parallel_for(h.state().blas, begin, end, grain, fn);
}
// Scratch memory owned by the handle, grown on demand, 64-byte aligned. One block per
// handle: a call that needs several carves them out of one request.
Result<void*> workspace(Handle& h, std::size_t bytes);

// ---- descriptor checks ----------------------------------------------------------------------
// dims >= 0, strides non-negative and one per dim, rank within [min_rank, max_rank].
Status check_desc(const std::string& fn, const char* name, const TensorDesc& d, int min_rank,
                  int max_rank);
Status check_ptr(const std::string& fn, const char* name, const void* p, bool needed);
// dtype among f32, bf16, f16 (the storage types of the DNN primitives).
Status check_float_dtype(const std::string& fn, const char* name, const TensorDesc& d);
Status check_same_dims(const std::string& fn, const char* a_name, const TensorDesc& a,
                       const char* b_name, const TensorDesc& b);
Status check_same_dtype(const std::string& fn, const char* a_name, const TensorDesc& a,
                        const char* b_name, const TensorDesc& b);
std::string dims_string(const std::vector<std::int64_t>& v, char sep = ',');

// ---- element access (reference code and staging) --------------------------------------------
inline float load_f32(const void* p, DType t, std::int64_t i) {
  switch (t) {
    case DType::kF32: return static_cast<const float*>(p)[i];
    case DType::kBF16: return bf16_bits_to_f32(static_cast<const std::uint16_t*>(p)[i]);
    case DType::kF16: return f16_bits_to_f32(static_cast<const std::uint16_t*>(p)[i]);
    default: return 0.0f;
  }
}
inline void store_f32(void* p, DType t, std::int64_t i, float v) {
  switch (t) {
    case DType::kF32: static_cast<float*>(p)[i] = v; break;
    case DType::kBF16: static_cast<std::uint16_t*>(p)[i] = f32_to_bf16_bits(v); break;
    case DType::kF16: static_cast<std::uint16_t*>(p)[i] = f32_to_f16_bits(v); break;
    default: break;
  }
}
// Offset of a multi-index (one entry per dim) under d's strides.
inline std::int64_t offset_of(const TensorDesc& d, const std::int64_t* index) {
  std::int64_t off = 0;
  for (int i = 0; i < d.rank(); ++i) off += index[i] * d.strides[static_cast<std::size_t>(i)];
  return off;
}

// f32 staging of a bf16/f16 tensor: the same dims and strides, data converted over its span.
// For f32 tensors `data` points at the caller's memory and nothing is copied.
struct Staged {
  TensorDesc desc;
  const float* data = nullptr;
  std::vector<float> storage;
};
Staged stage_in(const TensorDesc& d, const void* p);
// A writable f32 view of an output: the caller's memory for f32, else a zeroed buffer (or a
// converted copy of the current contents when `read_back`) written back by commit().
struct StagedOut {
  TensorDesc desc;  // f32, the caller's dims and strides
  float* data = nullptr;
  std::vector<float> storage;
  void* target = nullptr;
  DType target_dtype = DType::kF32;
  void commit();  // converts storage into the caller's dtype (no-op for f32)
};
StagedOut stage_out(const TensorDesc& d, void* p, bool read_back);

// ---- dispatch -------------------------------------------------------------------------------
// One entry of an ordered implementation list. `accepts` returns ok or a refusal whose
// message says why ("avx512: needs NHWC, got NCHW"); `run` executes the problem.
template <typename P>
struct Impl {
  const char* name;
  Status (*accepts)(const P&);
  Status (*run)(Handle&, const P&);
};
// `accepts` of an entry that takes every problem (the reference at the end of each list).
template <typename P>
Status accepts_all(const P&) {
  return Status::ok();
}
// The first implementation of `list` that accepts `p`; every refusal and the choice are
// logged under TESSERA_VERBOSE=dispatch as "<op>: <name> refused: <reason>". The last entry
// of every list is the reference, which accepts everything.
template <typename P>
const Impl<P>& select_impl(const char* op, std::span<const Impl<P>> list, const P& p) {
  for (const Impl<P>& impl : list) {
    Status s = impl.accepts(p);
    if (s.is_ok()) {
      TESSERA_VLOG(kDispatch) << op << ": chose " << impl.name;
      return impl;
    }
    TESSERA_VLOG(kDispatch) << op << ": " << impl.name << " refused: " << s.message();
  }
  return list.back();
}

// A refusal for accepts(): kUnsupported with the message.
Status refuse(std::string why);

}  // namespace detail
}  // namespace tessera::dnn
