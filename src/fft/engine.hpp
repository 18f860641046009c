// The 1-D complex transform every FFT plan is built from: a Stockham pass list for lengths
// whose prime factors have butterflies (up to kMaxRadix), Bluestein's chirp-z convolution
// for the others. One Fft1d transforms v interleaved sequences at once (element i of
// sequence b at i * v + b): v = 1 for a line, v > 1 for a block of columns of a
// multi-dimensional array, where every pass then vectorises over the sequences.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "tessera/core/status.hpp"

namespace tessera::fft::detail {

// How a length is transformed: the radices of its passes in order, or Bluestein with a
// sub-transform of length `bluestein`. `codelet`: single lines (n <= 128 made of 2, 3, 5, 7)
// run as one in-register codelet instead, or (powers of two) with `rows` = N1 > 0 as N1
// codelets of n / N1 points between a radix-N1 sweep and a transposing one; the passes still
// serve interleaved columns, and a machine whose vectors fit no codelet of n.
struct Factors {
  std::vector<int> radices;
  std::int64_t bluestein = 0;
  bool codelet = false;
  int rows = 0;
  // "8x8x4x4", "bluestein(2048)", "8x8+codelet", "8x8x8x4+rows16+codelet"
  std::string name() const;
  bool operator==(const Factors&) const = default;
};

inline constexpr std::int64_t kMaxCodeletLength = 128;  // J W with J <= 16, W <= 8
inline constexpr int kMaxRows = 1 << kMaxCodeletLog2J;  // N1 of a rows-of-codelets line

// Every factorisation the planner considers for n, the estimate's choice first.
std::vector<Factors> candidate_factors(std::int64_t n);
// Parses Factors::name() back (tuning-database entries); nullopt-like empty radices and
// bluestein 0 on failure.
bool parse_factors(const std::string& text, std::int64_t n, Factors& out);

template <typename R>
class Fft1d {
 public:
  static std::unique_ptr<Fft1d> create(std::int64_t n, int sign, const Factors& f, Isa isa);
  ~Fft1d();

  std::int64_t n() const { return n_; }
  const Factors& factors() const { return factors_; }
  // The ISA of the vectors a single line runs in (the codelet's, where there is one).
  const char* isa() const { return codelet_ ? codelet_isa_ : k_->isa; }
  // Scratch elements run() needs for v interleaved sequences.
  std::int64_t scratch_size(std::int64_t v) const;
  // out may equal in (in place); scratch must not overlap either.
  void run(const cx<R>* in, cx<R>* out, cx<R>* scratch, std::int64_t v) const;
  const Kernels<R>& kernels() const { return *k_; }

 private:
  Fft1d() = default;
  struct Pass {
    int radix, kind;
    std::int64_t m, s1;   // s1: stride for v = 1
    std::int64_t tw = 0;  // offsets into table_ (twiddles), twl_ (lane twiddles), trig_
    std::int64_t twl = -1, trig = -1;
  };
  void setup_codelet(Isa isa);
  void run_stockham(const cx<R>* in, cx<R>* out, cx<R>* scratch, std::int64_t v) const;
  void run_bluestein(const cx<R>* in, cx<R>* out, cx<R>* scratch, std::int64_t v) const;

  std::int64_t n_ = 0;
  int sign_ = -1;
  Factors factors_;
  const Kernels<R>* k_ = nullptr;
  std::vector<Pass> passes_;
  CodeletFn<R> codelet_ = nullptr;
  const char* codelet_isa_ = nullptr;
  std::vector<cx<R>> codelet_tw_;
  RowsFn<R> rows_ = nullptr;  // with rows: the whole line, and the radix-N1 sweep's twiddles
  std::vector<cx<R>> rows_tw_;
  std::vector<cx<R>> table_, twl_;
  std::vector<R> trig_;
  // Bluestein: chirp c[i] = exp(sign pi i i^2 / n) (i < n) and the spectrum of the
  // conjugate chirp, scaled by 1 / M; forward and inverse transforms of length M.
  std::vector<cx<R>> chirp_, kernel_;
  std::unique_ptr<Fft1d> fwd_, inv_;
};

extern template class Fft1d<float>;
extern template class Fft1d<double>;

}  // namespace tessera::fft::detail
