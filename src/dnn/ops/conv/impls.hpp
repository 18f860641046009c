// The per-direction implementation lists and the immediate-mode choice (impls.cpp), shared
// by the entry points (api.cpp) and Find mode (find.cpp).
#pragma once

#include <optional>
#include <span>
#include <string>

#include "algos.hpp"
#include "tessera/tune/tune_db.hpp"

namespace tessera::dnn::conv {

std::span<const Algo> algos_for(ConvDir dir);
// library "dnn", primitive "conv", this CPU's fingerprint, bitwise determinism.
tune::TuneKey tune_key(const std::string& signature);
// The implementation to run: `want` if given (an error with every refusal reason when it
// cannot run), else the tuning database's entry if it accepts, else the first that accepts.
// `source` receives "requested", "tune-db" or "heuristic".
Result<const Algo*> select(Handle& h, const Problem& p, ConvAlgo want, std::string* source);
// Immediate mode's per-process cache of database answers.
void remember_choice(const Handle& h, const std::string& signature, const std::string& impl);
void forget_choices();
// The database winner's median time for this signature, when Find mode recorded one.
std::optional<double> tuned_time_us(Handle& h, const std::string& signature);

// A problem whose data pointers are f32 (staged copies for bf16/f16 callers).
struct Prepared {
  Problem p;
  detail::Staged x, w, y_in, residual;
  detail::StagedOut out;
  void commit() { out.commit(); }
};
// Checks pointers, stages bf16/f16 data, and fills p's pointers. For the forward direction
// `a` is x, `b` w, `c` y; bwd-data: a = w, b = dy, c = dx; bwd-weights: a = x, b = dy, c = dw.
Result<std::unique_ptr<Prepared>> prepare(const std::string& fn, Problem p, const void* a,
                                          const void* b, void* c, const PostOps& post,
                                          float* dbias);

}  // namespace tessera::dnn::conv
