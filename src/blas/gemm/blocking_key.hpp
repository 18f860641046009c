// Where GEMM blocking parameters live in the tuning database (shared by the engine, which
// reads them, and `tessera tune blas`, which writes them).
#pragma once

#include <string>

#include "engine.hpp"
#include "tessera/tune/tune_db.hpp"

namespace tessera::blas::engine {

// library "blas", primitive "gemm_blocking", signature = the microkernel's name.
tune::TuneKey blocking_key(const char* kernel_name);
// "mc=352 kc=368 nc=4080" (for people)
std::string blocking_params(const Blocking& b);
// {"mc":352,"kc":368,"nc":4080} (the params stored in the tuning database)
std::string blocking_json(const Blocking& b);
// Drops the per-process cache so the next call reads the database again.
void forget_cached_blocking();

}  // namespace tessera::blas::engine
