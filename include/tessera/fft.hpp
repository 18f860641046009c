// tessera FFT: planned discrete Fourier transforms of any length, rank 1 to 3, complex and
// real, single and double precision, batched, with general strided layouts.
//
// Conventions
// - A Plan is created once for a PlanDesc and executed many times. Creation validates the
//   description (every error names the field: "fft plan: lengths[1] = 0, must be >= 1")
//   and does all the work that does not depend on the data (factorisation, twiddles,
//   scratch sizes). execute() is const and thread-safe: several threads may run one plan on
//   different data at once.
// - Forward is X[k] = sum_n x[n] exp(-2 pi i n k / N); inverse uses exp(+2 pi i n k / N) and
//   is unnormalised, like FFTW and rocFFT. `scale` multiplies every output element.
// - Lengths are row-major: lengths.back() is the fastest-varying dimension. For r2c and c2r
//   lengths are the real (logical) lengths; the complex side holds lengths.back() / 2 + 1
//   elements along the last dimension (the Hermitian half spectrum).
// - Layouts count elements of the side's own type (complex elements on a complex side, reals
//   on a real side). Empty strides mean packed row-major; distance 0 means the packed size of
//   one transform. In-place real transforms default to FFTW's padded real layout (rows of
//   2 * (lengths.back() / 2 + 1) reals).
// - Results are bitwise identical for any thread count.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/status.hpp"

namespace tessera::fft {

enum class Kind : int { kC2C = 0, kR2C = 1, kC2R = 2 };
enum class Precision : int { kSingle = 0, kDouble = 1 };
// The sign of the exponent: r2c is always forward, c2r always inverse.
enum class Direction : int { kForward = -1, kInverse = 1 };
// Estimate: the cost model picks the factorisation at once. Measure: the candidate
// factorisations are timed on scratch data and the winner is stored in the tuning database,
// so the next process that plans the same problem on this machine gets it without timing.
enum class Planning : int { kEstimate = 0, kMeasure = 1 };

std::string_view kind_name(Kind k);            // "c2c", "r2c", "c2r"
std::string_view precision_name(Precision p);  // "single", "double"

struct Layout {
  std::vector<std::int64_t> strides;  // one per dimension, in elements; empty: packed
  std::int64_t distance = 0;          // between consecutive batch members; 0: packed
};

struct PlanDesc {
  Kind kind = Kind::kC2C;
  Precision precision = Precision::kSingle;
  Direction direction = Direction::kForward;
  std::vector<std::int64_t> lengths;  // rank 1..3, each >= 1
  std::int64_t batch = 1;             // >= 1
  Layout in, out;
  bool in_place = false;  // execute(data, data): in and out describe the same memory
  double scale = 1.0;     // finite
  Planning planning = Planning::kEstimate;
};

struct PlanOptions {
  int threads = 0;      // 0: the process thread pool; else at most this many threads
  std::string tune_db;  // "": TESSERA_TUNE_DB or the default path (measure mode and lookups)
  bool use_tune_db = true;  // estimate mode consults the database when set
  double measure_seconds = 0.02;  // time spent per candidate in measure mode
};

class Plan {
 public:
  static Result<Plan> create(const PlanDesc& desc, const PlanOptions& options = {});

  // in and out point at element 0 of batch member 0 (std::complex<float/double> or
  // float/double as the kind and precision say). An in-place plan takes in == out; an
  // out-of-place plan refuses overlapping spans. The input is never modified by an
  // out-of-place transform.
  Status execute(const void* in, void* out) const;

  const PlanDesc& desc() const;
  // Elements each side spans (last element + 1), for buffer checks.
  std::int64_t input_span() const;
  std::int64_t output_span() const;
  // One line per dimension: the algorithm and factorisation chosen, its ISA and the source
  // of the choice ("estimate", "measure", "tune-db"):
  //   "c2c single n=1000: stockham 8x5x5x5 avx512 (estimate)".
  std::string describe() const;

  struct Impl;
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  Plan(const Plan&);  // shares the immutable plan
  Plan& operator=(const Plan&);
  ~Plan();

 private:
  explicit Plan(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

// The plain O(N^2) definition evaluated in long double: the oracle of the tests. One 1-D
// complex transform of n elements with strides in elements; sign -1 forward, +1 inverse.
void reference_dft(const std::complex<long double>* in, std::int64_t in_stride,
                   std::complex<long double>* out, std::int64_t out_stride, std::int64_t n,
                   int sign);

}  // namespace tessera::fft
