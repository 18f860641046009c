#include "engine.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string_view>

namespace tessera::fft::detail {

int radix_kind(int r) {
  switch (r) {
    case 2: return kR2;
    case 3: return kR3;
    case 4: return kR4;
    case 5: return kR5;
    case 7: return kR7;
    case 8: return kR8;
    case 11: return kR11;
    case 13: return kR13;
    default: return r % 2 == 1 && r > 1 && r <= kMaxRadix ? kGenericOdd : kRadixKinds;
  }
}

template <>
const Kernels<float>& kernels<float>(Isa isa) {
  if (isa >= Isa::kAvx512) return kernels_f32_avx512();
  if (isa >= Isa::kAvx2) return kernels_f32_avx2();
  return kernels_f32_generic();
}
template <>
const Kernels<double>& kernels<double>(Isa isa) {
  if (isa >= Isa::kAvx512) return kernels_f64_avx512();
  if (isa >= Isa::kAvx2) return kernels_f64_avx2();
  return kernels_f64_generic();
}

namespace {

// exp(sign 2 pi i t / n) in long double, rounded once to R.
template <typename R>
cx<R> unit(std::int64_t t, std::int64_t n, int sign) {
  t %= n;
  const long double a = 2.0L * std::numbers::pi_v<long double> * static_cast<long double>(t) /
                        static_cast<long double>(n);
  return {static_cast<R>(std::cos(a)), static_cast<R>(sign * std::sin(a))};
}

// (re, re) for part 0, (im, im) for part 1: the split twiddles of cmul_split.
template <typename R>
cx<R> dup(cx<R> w, int part) {
  return part == 0 ? cx<R>{w.real(), w.real()} : cx<R>{w.imag(), w.imag()};
}

template <typename R>
inline cx<R> mul(cx<R> a, cx<R> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

std::vector<std::int64_t> prime_factors(std::int64_t n) {
  std::vector<std::int64_t> f;
  for (std::int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) f.push_back(p), n /= p;
  if (n > 1) f.push_back(n);
  return f;
}

// The smallest 2^a 3^b 5^c >= n.
std::int64_t smooth_at_least(std::int64_t n) {
  std::int64_t best = std::int64_t{1} << 62;
  for (std::int64_t a = 1; a < best; a *= 2)
    for (std::int64_t b = a; b < best; b *= 3)
      for (std::int64_t c = b; c < best; c *= 5)
        if (c >= n) {
          best = std::min(best, c);
          break;
        }
  return best;
}

// Powers of two as radix-8 passes with one or two radix-4 passes for the remainder, or as
// radix-4 passes (prefer4). (Radix-16 passes were tried: 16 streams a power of two apart
// collide in an 8-way L1 cache, and 65536 points ran 2.3x slower than with radix 8.)
std::vector<int> pow2_radices(int k2, bool prefer4) {
  std::vector<int> r;
  if (k2 == 0) return r;
  if (prefer4) {
    for (int i = 0; i < k2 / 2; ++i) r.push_back(4);
    if (k2 % 2) r.push_back(2);
    return r;
  }
  int eights = k2 / 3, rest = k2 % 3;
  if (rest == 1 && eights > 0) --eights, rest = 4;  // 2^(3e+1) = 8^(e-1) 4 4
  for (int i = 0; i < eights; ++i) r.push_back(8);
  if (rest == 4) r.push_back(4), r.push_back(4);
  if (rest == 2) r.push_back(4);
  if (rest == 1) r.push_back(2);
  return r;
}

}  // namespace

std::string Factors::name() const {
  std::string s;
  if (bluestein != 0) {
    s = "bluestein(";
    s += std::to_string(bluestein);
    s += ')';
    return s;
  }
  if (radices.empty()) return std::string("1");  // n = 1
  for (int r : radices) {
    if (!s.empty()) s += 'x';
    s += std::to_string(r);
  }
  if (rows > 0) {
    s += "+rows";
    s += std::to_string(rows);
  }
  if (codelet) s += "+codelet";
  return s;
}

std::vector<Factors> candidate_factors(std::int64_t n) {
  std::vector<Factors> out;
  auto add = [&](Factors f) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(std::move(f));
  };
  if (n <= 1) return {Factors{}};
  const std::vector<std::int64_t> pf = prime_factors(n);
  const std::int64_t big = pf.back();
  if (big > kMaxRadix) {
    add(Factors{{}, smooth_at_least(2 * n - 1)});
    std::int64_t p2 = 1;
    while (p2 < 2 * n - 1) p2 *= 2;
    add(Factors{{}, p2});
    return out;
  }
  int k2 = 0;
  std::vector<int> odd;
  for (std::int64_t p : pf) {
    if (p == 2)
      ++k2;
    else
      odd.push_back(static_cast<int>(p));
  }
  std::sort(odd.rbegin(), odd.rend());  // largest first: later passes get wide strides
  if (n <= kMaxCodeletLength && big <= 7) {  // one codelet (J <= 16 made of 2, 3, 5, 7)
    std::vector<int> r = pow2_radices(k2, false);
    r.insert(r.end(), odd.begin(), odd.end());
    add(Factors{r, 0, true});
  }
  // Rows of codelets of 16-128 points (which ISA runs which depends on its vector width; the
  // planner skips those none can). Ahead of the passes up to 1024 points (5-15% faster); at
  // 2048 the 16-point first sweep makes them 10% slower, a candidate for measurement only.
  std::vector<Factors> rows;
  if (odd.empty() && n > kMaxCodeletLength)
    for (int r : {8, 16, 4, 2})
      if (n / r >= 16 && n / r <= kMaxCodeletLength) rows.push_back(Factors{pow2_radices(k2, false), 0, true, r});
  if (n <= 8 * kMaxCodeletLength)
    for (const Factors& f : rows) add(f);
  for (bool prefer4 : {false, true}) {
    std::vector<int> r = pow2_radices(k2, prefer4);
    r.insert(r.end(), odd.begin(), odd.end());
    add(Factors{r, 0});
  }
  {  // odd radices first
    std::vector<int> r = odd;
    const std::vector<int> p2 = pow2_radices(k2, false);
    r.insert(r.end(), p2.begin(), p2.end());
    add(Factors{r, 0});
  }
  for (const Factors& f : rows) add(f);
  if (big > 13) add(Factors{{}, smooth_at_least(2 * n - 1)});
  return out;
}

bool parse_factors(const std::string& text_in, std::int64_t n, Factors& out) {
  out = Factors{};
  std::string text = text_in;
  constexpr std::string_view kCodelet = "+codelet";
  if (text.size() > kCodelet.size() && text.ends_with(kCodelet)) {
    text.resize(text.size() - kCodelet.size());
    out.codelet = true;
    const std::size_t at = text.rfind("+rows");
    if (at != std::string::npos) {
      const std::string num = text.substr(at + 5);
      if (num.empty() || num.size() > 2 || num.find_first_not_of("0123456789") != std::string::npos)
        return false;
      out.rows = std::stoi(num);
      if (out.rows < 2 || out.rows > kMaxRows || (out.rows & (out.rows - 1)) != 0 || n % out.rows != 0)
        return false;
      text.resize(at);
    }
  }
  if (text.rfind("bluestein(", 0) == 0 && text.back() == ')') {
    const std::string num = text.substr(10, text.size() - 11);
    if (num.empty() || num.size() > 18 || num.find_first_not_of("0123456789") != std::string::npos)
      return false;
    out.bluestein = std::stoll(num);
    return out.bluestein >= 2 * n - 1 && prime_factors(out.bluestein).back() <= kMaxRadix;
  }
  if (text == "1") return n == 1 && !out.codelet;
  std::int64_t prod = 1;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t x = text.find('x', at);
    const std::string part = text.substr(at, x == std::string::npos ? std::string::npos : x - at);
    if (part.empty() || part.size() > 2 || part.find_first_not_of("0123456789") != std::string::npos)
      return false;
    const int r = std::stoi(part);
    if (radix_kind(r) == kRadixKinds) return false;
    out.radices.push_back(r);
    prod *= r;
    if (prod > n) return false;
    if (x == std::string::npos) break;
    at = x + 1;
  }
  if (prod != n || !out.codelet) return prod == n;
  if (out.rows > 0) return (n & (n - 1)) == 0 && n / out.rows <= kMaxCodeletLength;
  return n <= kMaxCodeletLength && prime_factors(n).back() <= 7;
}

template <typename R>
Fft1d<R>::~Fft1d() = default;

template <typename R>
std::unique_ptr<Fft1d<R>> Fft1d<R>::create(std::int64_t n, int sign, const Factors& f, Isa isa) {
  std::unique_ptr<Fft1d> p(new Fft1d());
  p->n_ = n;
  p->sign_ = sign;
  p->factors_ = f;
  p->k_ = &detail::kernels<R>(isa);
  // A first pass with fewer butterflies than a vector has lanes runs in partial vectors, and
  // one whose radix is not a multiple of the lanes copies its outputs one by one; a short
  // transform with either does better with half-width vectors (n = 16, 32, 60 in single
  // precision: 2-3x faster).
  if (!f.radices.empty() && isa >= Isa::kAvx512 &&
      (n / f.radices.front() < p->k_->lanes || (n <= 256 && f.radices.front() % p->k_->lanes != 0)))
    p->k_ = &detail::kernels<R>(Isa::kAvx2);
  if (f.bluestein != 0) {
    const std::int64_t M = f.bluestein;
    const std::vector<Factors> sub = candidate_factors(M);
    p->fwd_ = create(M, -1, sub.front(), isa);
    p->inv_ = create(M, 1, sub.front(), isa);
    p->chirp_.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)  // exp(sign pi i i^2 / n) = unit(i^2 mod 2n, 2n)
      p->chirp_[static_cast<std::size_t>(i)] = unit<R>((i * i) % (2 * n), 2 * n, sign);
    std::vector<cx<R>> b(static_cast<std::size_t>(M)), scratch(static_cast<std::size_t>(p->fwd_->scratch_size(1)));
    const R inv_m = static_cast<R>(1.0L / static_cast<long double>(M));
    for (std::int64_t i = 0; i < n; ++i) {
      const cx<R> c = unit<R>((i * i) % (2 * n), 2 * n, -sign);
      b[static_cast<std::size_t>(i)] = {c.real() * inv_m, c.imag() * inv_m};
      if (i > 0) b[static_cast<std::size_t>(M - i)] = b[static_cast<std::size_t>(i)];
    }
    p->kernel_.resize(static_cast<std::size_t>(M));
    p->fwd_->run(b.data(), p->kernel_.data(), scratch.data(), 1);
    return p;
  }
  if (f.codelet) p->setup_codelet(isa);
  std::int64_t left = n, s1 = 1;
  const int W = p->k_->lanes;
  for (int r : f.radices) {
    Pass ps;
    ps.radix = r;
    ps.kind = radix_kind(r);
    ps.m = left / r;
    ps.s1 = s1;
    ps.tw = static_cast<std::int64_t>(p->table_.size());
    for (std::int64_t q = 0; q < ps.m; ++q)
      for (int k = 1; k < r; ++k) {
        const cx<R> w = unit<R>(q * k, left, sign);
        p->table_.push_back(dup(w, 0));
        p->table_.push_back(dup(w, 1));
      }
    if (s1 < W && W % s1 == 0) {
      ps.twl = static_cast<std::int64_t>(p->twl_.size());
      for (int k = 1; k < r; ++k)
        for (std::int64_t q = 0; q < ps.m; ++q)
          for (std::int64_t j = 0; j < s1; ++j) p->twl_.push_back(unit<R>(q * k, left, sign));
    }
    if (ps.kind != kR2 && ps.kind != kR4 && ps.kind != kR8) {
      ps.trig = static_cast<std::int64_t>(p->trig_.size());
      for (int t = 0; t < r; ++t) p->trig_.push_back(unit<R>(t, r, 1).real());
      for (int t = 0; t < r; ++t) p->trig_.push_back(unit<R>(t, r, 1).imag());
    }
    p->passes_.push_back(ps);
    left /= r;
    s1 *= r;
  }
  return p;
}

// The widest vectors whose codelet covers m = n / N1 (N1 = rows, or 1) as J W with J >= W,
// and with rows, whose sweeps take N1 (a multiple of W). Single precision: m = 64, 128 on
// AVX-512, 16 ... 64 on AVX2. None leaves the passes to do the work.
template <typename R>
void Fft1d<R>::setup_codelet(Isa isa) {
  const int N1 = std::max(factors_.rows, 1);
  const std::int64_t m = n_ / N1;
  const int dir = sign_ < 0 ? 0 : 1;
  factors_.codelet = false;
  factors_.rows = 0;
  auto log2 = [](std::int64_t x) { return std::countr_zero(static_cast<std::uint64_t>(x)); };
  for (Isa i : {Isa::kAvx512, Isa::kAvx2, Isa::kGeneric}) {
    if (i > isa) continue;
    const Kernels<R>& k = detail::kernels<R>(i);
    const std::int64_t W = k.lanes, J = m / W;
    if (J * W != m || J < 2 || J > (1 << kMaxCodeletLog2J)) continue;
    CodeletFn<R> fn = k.codelet[J][dir];
    if (fn == nullptr) continue;
    if (N1 > 1 && (N1 % W != 0 || N1 > kMaxRows || (J & (J - 1)) != 0 ||
                   k.rows[log2(N1)][log2(J)][dir] == nullptr))
      continue;
    codelet_ = fn;
    codelet_isa_ = k.isa;
    factors_.codelet = true;
    codelet_tw_.clear();
    for (int part = 0; part < 2; ++part)
      for (std::int64_t k1 = 1; k1 < J; ++k1)
        for (std::int64_t l = 0; l < W; ++l) codelet_tw_.push_back(dup(unit<R>(l * k1, m, sign_), part));
    if (N1 > 1) {
      factors_.rows = N1;
      rows_ = k.rows[log2(N1)][log2(J)][dir];
      rows_tw_.clear();
      for (int part = 0; part < 2; ++part)
        for (std::int64_t k1 = 1; k1 < N1; ++k1)
          for (std::int64_t j2 = 0; j2 < m; ++j2) rows_tw_.push_back(dup(unit<R>(j2 * k1, n_, sign_), part));
    }
    return;
  }
}

template <typename R>
std::int64_t Fft1d<R>::scratch_size(std::int64_t v) const {
  if (v == 1 && codelet_) return rows_ ? n_ : 0;
  if (fwd_) return fwd_->n() * v + fwd_->scratch_size(v);
  return 2 * n_ * v;
}

template <typename R>
void Fft1d<R>::run(const cx<R>* in, cx<R>* out, cx<R>* scratch, std::int64_t v) const {
  if (fwd_)
    run_bluestein(in, out, scratch, v);
  else
    run_stockham(in, out, scratch, v);
}

template <typename R>
void Fft1d<R>::run_stockham(const cx<R>* in, cx<R>* out, cx<R>* scratch, std::int64_t v) const {
  if (v == 1 && codelet_) {
    if (rows_)
      rows_(in, out, scratch, rows_tw_.data(), codelet_tw_.data());
    else
      codelet_(in, out, codelet_tw_.data());
    return;
  }
  const int k = static_cast<int>(passes_.size());
  const std::int64_t len = n_ * v;
  if (k == 0) {
    if (in != out) std::memmove(out, in, static_cast<std::size_t>(len) * sizeof(cx<R>));
    return;
  }
  cx<R>* s1 = scratch;
  cx<R>* s2 = scratch + len;
  const cx<R>* src = in;
  if (in == out && k == 1) {  // a pass cannot run in place
    std::memcpy(s2, in, static_cast<std::size_t>(len) * sizeof(cx<R>));
    src = s2;
  }
  const int dir = sign_ < 0 ? 0 : 1;
  for (int i = 0; i < k; ++i) {
    const Pass& ps = passes_[static_cast<std::size_t>(i)];
    cx<R>* dst = i == k - 1 ? out : ((k - 1 - i) % 2 == 1 ? s1 : s2);
    PassArgs<R> a;
    a.radix = ps.radix;
    a.m = ps.m;
    a.s = ps.s1 * v;
    a.tw = table_.data() + ps.tw;
    if (ps.trig >= 0) {
      a.cosv = trig_.data() + ps.trig;
      a.sinv = a.cosv + ps.radix;
    }
    if (v == 1 && ps.twl >= 0) {
      a.twl = twl_.data() + ps.twl;
      k_->lane[ps.kind][dir](a, src, dst);
    } else {
      k_->q[ps.kind][dir](a, src, dst);
    }
    src = dst;
  }
}

template <typename R>
void Fft1d<R>::run_bluestein(const cx<R>* in, cx<R>* out, cx<R>* scratch, std::int64_t v) const {
  const std::int64_t M = fwd_->n();
  cx<R>* A = scratch;
  cx<R>* sub = scratch + M * v;
  for (std::int64_t i = 0; i < n_; ++i) {
    const cx<R> c = chirp_[static_cast<std::size_t>(i)];
    for (std::int64_t b = 0; b < v; ++b) A[i * v + b] = mul(in[i * v + b], c);
  }
  std::fill(A + n_ * v, A + M * v, cx<R>{});
  fwd_->run(A, A, sub, v);
  for (std::int64_t i = 0; i < M; ++i) {
    const cx<R> c = kernel_[static_cast<std::size_t>(i)];
    for (std::int64_t b = 0; b < v; ++b) A[i * v + b] = mul(A[i * v + b], c);
  }
  inv_->run(A, A, sub, v);
  for (std::int64_t i = 0; i < n_; ++i) {
    const cx<R> c = chirp_[static_cast<std::size_t>(i)];
    for (std::int64_t b = 0; b < v; ++b) out[i * v + b] = mul(A[i * v + b], c);
  }
}

template class Fft1d<float>;
template class Fft1d<double>;

}  // namespace tessera::fft::detail
