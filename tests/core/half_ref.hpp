// Reference f16/bf16 conversions: the value of every pattern from its fields with ldexp, and
// narrowing as "the nearest representable value, ties to the even pattern" found by search
// in a table of all finite values. Slow and plainly correct; the oracle for half.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tessera::ref {

// A floating format with `mant` stored mantissa bits and an exponent of `exp` bits (IEEE
// style: bias 2^(exp-1)-1, all-ones exponent for Inf/NaN, subnormals at exponent 0).
struct Format {
  int exp_bits, mant_bits;
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  std::uint32_t exp_all_ones() const { return (1u << exp_bits) - 1; }
};
inline constexpr Format kF16{5, 10};
inline constexpr Format kBF16{8, 7};

inline bool is_nan(Format f, std::uint16_t bits) {
  std::uint32_t e = (bits >> f.mant_bits) & f.exp_all_ones();
  return e == f.exp_all_ones() && (bits & ((1u << f.mant_bits) - 1)) != 0;
}

// Value of a non-NaN pattern.
inline double decode(Format f, std::uint16_t bits) {
  const bool neg = bits & 0x8000;
  const std::uint32_t e = (bits >> f.mant_bits) & f.exp_all_ones();
  const std::uint32_t m = bits & ((1u << f.mant_bits) - 1);
  double v;
  if (e == f.exp_all_ones())
    v = INFINITY;
  else if (e == 0)
    v = std::ldexp(static_cast<double>(m), 1 - f.bias() - f.mant_bits);
  else
    v = std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -f.mant_bits),
                   static_cast<int>(e) - f.bias());
  return neg ? -v : v;
}

// Narrows a finite or infinite (non-NaN) value.
class Narrower {
 public:
  explicit Narrower(Format f) : f_(f) {
    const std::uint32_t max_finite =
        ((f.exp_all_ones() - 1) << f.mant_bits) | ((1u << f.mant_bits) - 1);
    for (std::uint32_t b = 0; b <= max_finite; ++b)
      values_.push_back(decode(f, static_cast<std::uint16_t>(b)));
    const double max = values_.back();
    const double ulp_at_max = max - values_[values_.size() - 2];
    overflow_ = max + ulp_at_max / 2;  // ties here go to the (even) infinity pattern
  }
  std::uint16_t operator()(double v) const {
    const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    const double a = std::fabs(v);
    const auto inf = static_cast<std::uint16_t>(f_.exp_all_ones() << f_.mant_bits);
    if (a >= overflow_) return sign | inf;
    auto it = std::lower_bound(values_.begin(), values_.end(), a);  // first >= a
    if (it == values_.end()) return static_cast<std::uint16_t>(sign | (values_.size() - 1));
    auto hi = static_cast<std::uint32_t>(it - values_.begin());
    if (values_[hi] == a || hi == 0) return static_cast<std::uint16_t>(sign | hi);
    const std::uint32_t lo = hi - 1;
    const double dlo = a - values_[lo], dhi = values_[hi] - a;
    std::uint32_t pick = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) ? hi : lo);
    return static_cast<std::uint16_t>(sign | pick);
  }

 private:
  Format f_;
  std::vector<double> values_;
  double overflow_;
};

}  // namespace tessera::ref
