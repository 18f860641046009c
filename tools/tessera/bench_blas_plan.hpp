// Internal to `tessera bench blas`: what the plans of every op share (random inputs, sizes
// with overflow checks, tolerances, local CBLAS constants, anchor lookup) and the template
// that instantiates a planner for the dtypes an op has. Included by bench_blas_*.cpp only.
#pragma once

#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "bench_blas.hpp"
#include "commands.hpp"

namespace tessera::cli::blas_bench {

using blas::cdouble;
using blas::cfloat;
using blas::Diag;
using blas::Op;
using blas::Side;
using blas::Uplo;

// ---- Values ------------------------------------------------------------------------------

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, bf16> || std::is_same_v<T, f16>;

template <typename T>
std::complex<double> widen(T v) {
  if constexpr (is_half_v<T>)
    return static_cast<float>(v);
  else if constexpr (blas::is_complex_v<T>)
    return {v.real(), v.imag()};
  else
    return static_cast<double>(v);
}

// Largest |got - ref| over the largest finite |ref|; +inf when a NaN or infinity appears in
// one and not the other.
template <typename A, typename B>
double mixed_error(const A* ref, const B* got, std::size_t count) {
  double max_diff = 0, max_ref = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::complex<double> r = widen(ref[i]), g = widen(got[i]);
    const double ar = std::abs(r);
    if (std::isfinite(ar)) max_ref = std::max(max_ref, ar);
    if (r == g) continue;
    const double d = std::abs(r - g);
    if (!std::isfinite(d)) return std::numeric_limits<double>::infinity();
    max_diff = std::max(max_diff, d);
  }
  if (max_diff == 0) return 0;
  return max_diff / std::max(max_ref, std::numeric_limits<double>::min());
}

template <typename T>
double relative_error(const void* ref, const void* got, std::size_t count) {
  return mixed_error(static_cast<const T*>(ref), static_cast<const T*>(got), count);
}

template <typename T>
void Outputs::add(T* data, std::size_t count) {
  Slot s{data,
         count,
         count * sizeof(T),
         AlignedBuffer(count * sizeof(T), "an output copy"),
         AlignedBuffer(count * sizeof(T), "an output copy"),
         relative_error<T>};
  std::memcpy(s.pristine.data(), data, s.bytes);
  slots_.push_back(std::move(s));
}

// xorshift64*: fast, and the same sequence on every machine.
class Rng {
 public:
  std::uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545f4914f6cdd1dull;
  }
  double uniform() {  // [-1, 1)
    return static_cast<double>(next() >> 11) * 0x1p-52 - 1.0;
  }

 private:
  std::uint64_t state_ = 0x7e55e7a5eedull;
};

template <typename T>
T random_value(Rng& rng) {
  if constexpr (blas::is_complex_v<T>) {
    const double re = rng.uniform();
    return T(static_cast<typename T::value_type>(re),
             static_cast<typename T::value_type>(rng.uniform()));
  } else if constexpr (is_half_v<T>) {
    return T(static_cast<float>(rng.uniform()));
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return static_cast<std::uint8_t>(rng.next() >> 56);
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    return static_cast<std::int8_t>(static_cast<int>(rng.next() >> 56) - 128);
  } else {
    return static_cast<T>(rng.uniform());
  }
}

template <typename T>
void fill(Rng& rng, T* p, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) p[i] = random_value<T>(rng);
}

// A well-conditioned triangular matrix (either triangle may be read): off-diagonal values in
// [-1/n, 1/n), diagonal in [1, 2). Solves with it neither blow up nor vanish, with a unit
// or a non-unit diagonal. `real_diagonal` clears the imaginary part of the diagonal
// (Hermitian matrices).
template <typename T>
void fill_triangular(Rng& rng, T* a, std::int64_t n, std::int64_t lda, bool real_diagonal = false) {
  const double scale = 1.0 / static_cast<double>(std::max<std::int64_t>(n, 1));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      T& v = a[i + j * lda];
      v = random_value<T>(rng);
      if constexpr (blas::is_complex_v<T>) {
        using R = typename T::value_type;
        v *= static_cast<R>(scale);
        if (i == j) v = T(static_cast<R>(1.5) + v.real(), real_diagonal ? R(0) : v.imag());
      } else {
        v = static_cast<T>(i == j ? 1.5 + 0.5 * static_cast<double>(v) : scale * v);
      }
    }
}

template <typename T>
T scalar_as(std::complex<double> v) {
  if constexpr (blas::is_complex_v<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(v.real()), static_cast<R>(v.imag()));
  } else {
    return static_cast<T>(v.real());
  }
}

// ---- Sizes -------------------------------------------------------------------------------

[[noreturn]] inline void too_large() {
  throw CommandError{"the case is too large to allocate on this machine", 1};
}

inline std::size_t checked_mul(std::size_t a, std::size_t b) {
  std::size_t r;
  if (__builtin_mul_overflow(a, b, &r) || r > (std::size_t{1} << 56)) too_large();
  return r;
}

// Elements of a column-major rows x cols matrix with leading dimension ld (at least one, and
// never less than a valid call reads even when ld is invalid: the library rejects it first).
inline std::size_t matrix_elems(std::int64_t ld, std::int64_t rows, std::int64_t cols) {
  if (rows <= 0 || cols <= 0) return 1;
  return checked_mul(static_cast<std::size_t>(std::max(ld, rows)), static_cast<std::size_t>(cols));
}

// Elements a strided vector of n spans (BLAS increments; 0 reads one element).
inline std::size_t vector_elems(std::int64_t n, std::int64_t inc) {
  if (n <= 0) return 1;
  if (inc == std::numeric_limits<std::int64_t>::min()) too_large();
  const std::size_t step = static_cast<std::size_t>(inc < 0 ? -inc : inc);
  return checked_mul(static_cast<std::size_t>(n - 1), step) + 1;
}

inline bool fits_int(std::initializer_list<std::int64_t> values) {
  for (std::int64_t v : values)
    if (v > INT_MAX || v < -INT_MAX) return false;
  return true;
}

// Unit roundoff of the values a routine produces.
template <typename T>
double eps() {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, cdouble>)
    return 0x1p-53;
  else if constexpr (std::is_same_v<T, bf16>)
    return 0x1p-8;
  else if constexpr (std::is_same_v<T, f16>)
    return 0x1p-11;
  else
    return 0x1p-24;
}

// Libraries sum in different orders: allow rounding that grows like the square root of the
// length of the sums, with a wide margin (this is a cross-check for wrong results, not a
// test of accuracy).
inline double tolerance(double unit_roundoff, std::int64_t sum_length) {
  return 64 * unit_roundoff * std::sqrt(static_cast<double>(std::max<std::int64_t>(sum_length, 1)));
}

template <typename T>
const char* peak_kind() {
  return std::is_same_v<T, double> || std::is_same_v<T, cdouble> ? "f64" : "f32";
}

// Real operations per multiply-add: 2, or 8 for complex.
template <typename T>
double flops_per_fma() {
  return blas::is_complex_v<T> ? 8 : 2;
}

// ---- CBLAS -------------------------------------------------------------------------------

inline constexpr int kColMajor = 102;
inline int cblas_op(Op op) {
  return 111 + static_cast<int>(op);
}  // NoTrans, Trans, ConjTrans
inline int cblas_uplo(Uplo u) {
  return u == Uplo::kUpper ? 121 : 122;
}
inline int cblas_diag(Diag d) {
  return d == Diag::kNonUnit ? 131 : 132;
}
inline int cblas_side(Side s) {
  return s == Side::kLeft ? 141 : 142;
}

// CBLAS passes real scalars by value and complex ones by pointer.
template <typename T>
using ScalarArg = std::conditional_t<blas::is_complex_v<T>, const T*, T>;
template <typename T>
ScalarArg<T> pass(const T& v) {
  if constexpr (blas::is_complex_v<T>)
    return &v;
  else
    return v;
}

template <typename T>
std::string letter() {
  if constexpr (std::is_same_v<T, float>)
    return "s";
  else if constexpr (std::is_same_v<T, double>)
    return "d";
  else if constexpr (std::is_same_v<T, cfloat>)
    return "c";
  else
    return "z";
}

// Adds the anchor's run of `symbol`; `bind(fn)` makes the call from the function pointer.
template <typename Fn, typename Bind>
void add_anchor(Plan& p, const Anchor& a, const std::string& symbol, bool fits, Bind bind) {
  AnchorRun run{a.name, {}, {}};
  if (!fits)
    run.missing = "sizes exceed the 32-bit CBLAS interface";
  else if (auto fn = reinterpret_cast<Fn>(a.symbol(symbol)))
    run.call = bind(fn);
  else
    run.missing = "no " + symbol;
  p.anchors.push_back(std::move(run));
}

inline void no_anchor(Plan& p, const std::vector<Anchor>& anchors, const std::string& why) {
  for (const Anchor& a : anchors) p.anchors.push_back({a.name, {}, why});
}

// ---- Op tables ---------------------------------------------------------------------------

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls Planner<T>::build for the case's dtype; only the types in kTypes are instantiated.
template <unsigned kTypes, template <typename> class Planner>
void make(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors, Plan& p) {
  auto run = [&](auto tag) { Planner<typename decltype(tag)::type>::build(c, h, anchors, p); };
  switch (c.dtype) {
    case DType::kF32:
      if constexpr ((kTypes & bit(DType::kF32)) != 0) return run(TypeTag<float>{});
      break;
    case DType::kF64:
      if constexpr ((kTypes & bit(DType::kF64)) != 0) return run(TypeTag<double>{});
      break;
    case DType::kC64:
      if constexpr ((kTypes & bit(DType::kC64)) != 0) return run(TypeTag<cfloat>{});
      break;
    case DType::kC128:
      if constexpr ((kTypes & bit(DType::kC128)) != 0) return run(TypeTag<cdouble>{});
      break;
    case DType::kBf16:
      if constexpr ((kTypes & bit(DType::kBf16)) != 0) return run(TypeTag<bf16>{});
      break;
    case DType::kF16:
      if constexpr ((kTypes & bit(DType::kF16)) != 0) return run(TypeTag<f16>{});
      break;
    case DType::kInt8:
      break;
  }
  throw CommandError{c.op + ": dtype " + std::string(dtype_name(c.dtype)) + " is not supported", 2};
}

template <unsigned kTypes, template <typename> class Planner>
OpInfo op(const char* name, int level, unsigned uses, const char* summary) {
  return {name, level, uses, kTypes, summary, make<kTypes, Planner>};
}

// Option sets shared by several ops.
inline constexpr unsigned kVec = kUseN | kUseIncx;
inline constexpr unsigned kTwoVec = kVec | kUseIncy;
inline constexpr unsigned kTri = kUseN | kSquare | kUseUplo | kUseLda;

// The rows of blas_ops(), beside their planners.
std::vector<OpInfo> level3_ops();   // bench_blas_level3.cpp
std::vector<OpInfo> level12_ops();  // bench_blas_level12.cpp

}  // namespace tessera::cli::blas_bench
