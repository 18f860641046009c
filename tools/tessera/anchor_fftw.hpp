// FFTW 3 as the anchor of `tessera bench fft`: libfftw3f.so.3 (single) and libfftw3.so.3
// (double), with their _threads companions, are opened with dlopen at run time, never linked.
// No FFTW header is needed: the few entry points are declared in anchor_fftw.cpp from FFTW's
// documented ABI. Plans are made with the guru64 interface, so every tessera plan description
// (rank 1 to 3, batch, strides and distances, in place, c2c/r2c/c2r) has an FFTW twin.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tessera/core/status.hpp>
#include <tessera/fft.hpp>

namespace tessera::cli::fftw {

struct Info {
  std::string path;          // the library file that was opened
  std::string threads_path;  // its threads library; "" when absent (plans then use 1 thread)
  std::string version;       // "fftw-3.3.10"
};
// Opens FFTW of `precision` once per process. nullptr when it is not installed or lacks a
// needed symbol; `why` (may be null) then says which.
const Info* open(fft::Precision precision, std::string* why);

// One side (input or output) of a plan description with every default of
// include/tessera/fft.hpp filled in, computed here independently of tessera's planner.
struct Side {
  bool complex = true;
  std::vector<std::int64_t> lengths;  // elements per dimension (complex side of a real
                                      // transform: lengths.back() / 2 + 1)
  std::vector<std::int64_t> strides;  // in elements of the side's type
  std::int64_t distance = 0;          // between batch members
  // Elements spanned by `batch` transforms: last element + 1.
  std::int64_t span(std::int64_t batch) const;
  // Logical elements of one transform.
  std::int64_t count() const;
};
struct Layouts {
  Side in, out;
};
// Checks what the anchor needs (rank 1 to 3, lengths and batch >= 1, strides and distances
// >= 0, one stride per dimension) and resolves the defaults.
Result<Layouts> layouts(const fft::PlanDesc& d);

enum class Rigor { kEstimate, kMeasure, kPatient };
std::string_view rigor_name(Rigor r);  // "FFTW_MEASURE", ...

// One FFTW plan, bound to the arrays it was planned on.
class Plan {
 public:
  virtual ~Plan() = default;
  virtual void execute() const = 0;
};

// Plans `d` (scale must be 1: FFTW does not scale) on `in` and `out` (the same pointer for an
// in-place description), with `threads` threads. Planning with kMeasure or kPatient runs
// transforms on the arrays and overwrites them: fill the input afterwards. Unsupported when
// FFTW is not installed, when threads > 1 without its threads library, or when FFTW refuses
// the problem; the message says which.
Result<std::unique_ptr<Plan>> make_plan(const fft::PlanDesc& d, void* in, void* out, int threads,
                                        Rigor rigor);

}  // namespace tessera::cli::fftw
