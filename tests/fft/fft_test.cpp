// FFT plans against the O(N^2) definition in long double (tessera::fft::reference_dft):
// every length 1..128 and sampled larger ones (every radix, the generic odd radix and
// Bluestein), real transforms, 2-D and 3-D, batched and strided layouts, in place, every ISA,
// any thread count, and bad descriptions.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "test_util.hpp"
#include "tessera/fft.hpp"
#include "tessera/tune/tune_db.hpp"

namespace tessera::fft {
namespace {

using testing::for_each_isa;
using testing::value_or_fail;
using ld = long double;
using cld = std::complex<ld>;

PlanOptions no_db() {
  PlanOptions o;
  o.use_tune_db = false;
  return o;
}

template <typename R>
std::vector<std::complex<R>> random_complex(std::int64_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<R> u(-1, 1);
  std::vector<std::complex<R>> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = {u(g), u(g)};
  return v;
}

// Applies the reference along every dimension of a packed row-major array of `batch`
// transforms of shape `len`.
std::vector<cld> reference_nd(std::vector<cld> x, const std::vector<std::int64_t>& len,
                              std::int64_t batch, int sign) {
  std::int64_t total = 1;
  for (auto l : len) total *= l;
  for (std::size_t j = 0; j < len.size(); ++j) {
    std::int64_t inner = 1;
    for (std::size_t k = j + 1; k < len.size(); ++k) inner *= len[k];
    const std::int64_t n = len[j], outer = total / (n * inner);
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
          cld* p = x.data() + b * total + o * n * inner + i;
          reference_dft(p, inner, p, inner, n, sign);
        }
  }
  return x;
}

// Relative RMS error of got against want.
template <typename T>
double rms_error(const std::vector<T>& got, const std::vector<cld>& want) {
  ld num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const cld g(static_cast<ld>(std::real(got[i])), static_cast<ld>(std::imag(got[i])));
    num += std::norm(g - want[i]);
    den += std::norm(want[i]);
  }
  return den == 0 ? static_cast<double>(std::sqrt(num)) : static_cast<double>(std::sqrt(num / den));
}

template <typename R>
double eps() {
  return std::numeric_limits<R>::epsilon();
}
// The accuracy contract against the exact transform: a few ulps per level of the transform
// (Bluestein runs three transforms of about twice the length).
template <typename R>
double bound(std::int64_t n) {
  return 6.0 * eps<R>() * std::max(1.0, std::log2(static_cast<double>(n)));
}

template <typename R>
void check_c2c_1d(std::int64_t n, Direction dir, unsigned seed) {
  PlanDesc d;
  d.precision = std::is_same_v<R, float> ? Precision::kSingle : Precision::kDouble;
  d.direction = dir;
  d.lengths = {n};
  const Plan plan = value_or_fail(Plan::create(d, no_db()));
  auto x = random_complex<R>(n, seed);
  std::vector<std::complex<R>> y(x.size(), std::complex<R>(NAN, NAN));
  ASSERT_TRUE(plan.execute(x.data(), y.data()).is_ok());
  std::vector<cld> xl(x.begin(), x.end());
  const auto want = reference_nd(xl, {n}, 1, static_cast<int>(dir));
  EXPECT_LE(rms_error(y, want), bound<R>(n)) << "n=" << n << " " << plan.describe();
}

TEST(FftC2c, EveryLengthUpTo128EveryIsa) {
  for_each_isa([](Isa) {
    for (std::int64_t n = 1; n <= 128; ++n) {
      check_c2c_1d<float>(n, Direction::kForward, static_cast<unsigned>(n));
      check_c2c_1d<double>(n, Direction::kInverse, static_cast<unsigned>(n) + 7);
    }
  });
}

TEST(FftC2c, SampledLargerLengthsEveryRadixAndBluestein) {
  // 8/4/2 passes, 3 5 7 11 13, the generic odd radix (17, 31, 61), Bluestein (67, 127, 1009,
  // 2 * 131), lane passes with s not dividing the vector (3 * 3 * 5 ...).
  const std::int64_t sizes[] = {256, 384, 1000, 1024, 1155, 2048, 4095, 17 * 8, 31 * 4, 61,
                                67,  127, 1009, 262,  4096};
  for_each_isa([&](Isa) {
    for (std::int64_t n : sizes) {
      check_c2c_1d<float>(n, Direction::kForward, 3);
      check_c2c_1d<double>(n, Direction::kForward, 5);
      check_c2c_1d<float>(n, Direction::kInverse, 9);
    }
  });
}

// Forward then inverse scaled by 1/N returns the input within 2 log2(N) eps (RMS, relative),
// for every size class of the bench suite.
template <typename R>
void check_round_trip(std::int64_t n) {
  PlanDesc d;
  d.precision = std::is_same_v<R, float> ? Precision::kSingle : Precision::kDouble;
  d.lengths = {n};
  const Plan fwd = value_or_fail(Plan::create(d, no_db()));
  d.direction = Direction::kInverse;
  d.scale = 1.0 / static_cast<double>(n);
  const Plan inv = value_or_fail(Plan::create(d, no_db()));
  const auto x = random_complex<R>(n, 11);
  std::vector<std::complex<R>> y(x.size()), z(x.size());
  ASSERT_TRUE(fwd.execute(x.data(), y.data()).is_ok());
  ASSERT_TRUE(inv.execute(y.data(), z.data()).is_ok());
  const std::vector<cld> want(x.begin(), x.end());
  EXPECT_LE(rms_error(z, want), 2.0 * std::log2(static_cast<double>(n)) * eps<R>())
      << "n=" << n << " " << fwd.describe();
  // Parseval: sum |x|^2 = sum |X|^2 / N.
  ld ex = 0, ey = 0;
  for (std::size_t i = 0; i < x.size(); ++i) ex += std::norm(cld(x[i].real(), x[i].imag())), ey += std::norm(cld(y[i].real(), y[i].imag()));
  EXPECT_NEAR(static_cast<double>(ey / static_cast<ld>(n) / ex), 1.0, 10 * std::log2(static_cast<double>(n)) * eps<R>());
}

TEST(FftC2c, RoundTripAccuracyEverySuiteClass) {
  for (std::int64_t n = 16; n <= (1 << 20); n *= 4) check_round_trip<float>(n);
  for (std::int64_t n : {60, 1000, 4095, 1155, 15015, 127, 1009, 65537}) {
    check_round_trip<float>(n);
    check_round_trip<double>(n);
  }
}

// Real transforms of every length 1..64 and some larger: r2c against the reference of the
// real input, c2r against the inverse of the Hermitian extension.
template <typename R>
void check_real(std::int64_t n, unsigned seed) {
  PlanDesc d;
  d.precision = std::is_same_v<R, float> ? Precision::kSingle : Precision::kDouble;
  d.kind = Kind::kR2C;
  d.lengths = {n};
  const Plan r2c = value_or_fail(Plan::create(d, no_db()));
  std::mt19937 g(seed);
  std::uniform_real_distribution<R> u(-1, 1);
  std::vector<R> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = u(g);
  const std::int64_t h = n / 2 + 1;
  std::vector<std::complex<R>> X(static_cast<std::size_t>(h), std::complex<R>(NAN, NAN));
  ASSERT_TRUE(r2c.execute(x.data(), X.data()).is_ok());
  std::vector<cld> xl(x.begin(), x.end());
  auto want = reference_nd(xl, {n}, 1, -1);
  want.resize(static_cast<std::size_t>(h));
  EXPECT_LE(rms_error(X, want), bound<R>(n)) << "r2c n=" << n << " " << r2c.describe();

  d.kind = Kind::kC2R;
  d.direction = Direction::kInverse;
  const Plan c2r = value_or_fail(Plan::create(d, no_db()));
  auto Y = random_complex<R>(h, seed + 1);
  std::vector<cld> full(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < h; ++k) full[static_cast<std::size_t>(k)] = cld(Y[static_cast<std::size_t>(k)].real(), Y[static_cast<std::size_t>(k)].imag());
  full[0] = full[0].real();
  if (n % 2 == 0) full[static_cast<std::size_t>(n / 2)] = full[static_cast<std::size_t>(n / 2)].real();
  for (std::int64_t k = 1; k < h; ++k) full[static_cast<std::size_t>(n - k)] = std::conj(full[static_cast<std::size_t>(k)]);
  const auto back = reference_nd(full, {n}, 1, 1);
  std::vector<R> y(static_cast<std::size_t>(n), NAN);
  const auto Ykeep = Y;
  ASSERT_TRUE(c2r.execute(Y.data(), y.data()).is_ok());
  EXPECT_EQ(0, std::memcmp(Y.data(), Ykeep.data(), Y.size() * sizeof(Y[0]))) << "c2r wrote its input";
  EXPECT_LE(rms_error(y, back), bound<R>(n)) << "c2r n=" << n << " " << c2r.describe();
}

TEST(FftReal, R2cAndC2rEveryLengthUpTo64AndLarger) {
  for_each_isa([](Isa) {
    for (std::int64_t n = 1; n <= 64; ++n) {
      check_real<float>(n, static_cast<unsigned>(n));
      check_real<double>(n, static_cast<unsigned>(n) + 3);
    }
    for (std::int64_t n : {1000, 1024, 1155, 2 * 67, 4096}) check_real<float>(n, 1);
  });
}

// A general N-D check: any kind, batch and layouts, against the reference on packed copies.
struct NdCase {
  Kind kind;
  std::vector<std::int64_t> len;
  std::int64_t batch = 1;
  Layout in, out;
  bool in_place = false;
  double scale = 1.0;
};

// Offsets of every logical element of a side (row-major over len, batch outermost).
std::vector<std::int64_t> offsets(const std::vector<std::int64_t>& len, std::int64_t batch,
                                  const std::vector<std::int64_t>& strides, std::int64_t dist) {
  std::vector<std::int64_t> off{0};
  std::vector<std::int64_t> st = strides;
  if (st.empty()) {
    st.assign(len.size(), 1);
    for (int k = static_cast<int>(len.size()) - 2; k >= 0; --k) st[static_cast<std::size_t>(k)] = st[static_cast<std::size_t>(k) + 1] * len[static_cast<std::size_t>(k) + 1];
  }
  std::int64_t packed = 1;
  for (auto l : len) packed *= l;
  std::vector<std::int64_t> all;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < packed; ++i) {
      std::int64_t rem = i, o = b * (dist ? dist : packed);
      for (int k = static_cast<int>(len.size()) - 1; k >= 0; --k) {
        o += (rem % len[static_cast<std::size_t>(k)]) * st[static_cast<std::size_t>(k)];
        rem /= len[static_cast<std::size_t>(k)];
      }
      all.push_back(o);
    }
  return all;
}

template <typename R>
void check_nd(const NdCase& c, int threads = 0) {
  using C = std::complex<R>;
  PlanDesc d;
  d.kind = c.kind;
  d.precision = std::is_same_v<R, float> ? Precision::kSingle : Precision::kDouble;
  d.direction = c.kind == Kind::kC2R ? Direction::kInverse : Direction::kForward;
  d.lengths = c.len;
  d.batch = c.batch;
  d.in = c.in;
  d.out = c.out;
  d.in_place = c.in_place;
  d.scale = c.scale;
  PlanOptions opts = no_db();
  opts.threads = threads;
  const Plan plan = value_or_fail(Plan::create(d, opts));
  std::vector<std::int64_t> clen = c.len;
  if (c.kind != Kind::kC2C) clen.back() = c.len.back() / 2 + 1;
  const bool real_in = c.kind == Kind::kR2C, real_out = c.kind == Kind::kC2R;
  // Default layouts of in-place real sides are padded: describe them explicitly here.
  auto side_strides = [&](const Layout& l, bool real) {
    if (!l.strides.empty() || !(real && c.in_place)) return std::pair(l.strides, l.distance);
    std::vector<std::int64_t> st(c.len.size(), 1);
    std::int64_t s = 2 * clen.back();
    for (int k = static_cast<int>(c.len.size()) - 2; k >= 0; --k) st[static_cast<std::size_t>(k)] = s, s *= c.len[static_cast<std::size_t>(k)];
    return std::pair(st, l.distance ? l.distance : s);
  };
  const auto [ist, idist] = side_strides(c.in, real_in);
  const auto [ost, odist] = side_strides(c.out, real_out);
  const auto ioff = offsets(real_in ? c.len : clen, c.batch, ist, idist);
  const auto ooff = offsets(real_out ? c.len : clen, c.batch, ost, odist);
  const std::int64_t iel = plan.input_span() * (real_in ? 1 : 2), oel = plan.output_span() * (real_out ? 1 : 2);
  std::vector<R> inbuf(static_cast<std::size_t>(std::max(iel, c.in_place ? oel : 0)), NAN);
  std::vector<R> outbuf(static_cast<std::size_t>(oel), NAN);
  std::mt19937 g(42);
  std::uniform_real_distribution<R> u(-1, 1);
  std::vector<cld> packed_in;
  for (std::int64_t o : ioff) {
    if (real_in) {
      inbuf[static_cast<std::size_t>(o)] = u(g);
      packed_in.push_back(inbuf[static_cast<std::size_t>(o)]);
    } else {
      C v(u(g), u(g));
      std::memcpy(&inbuf[static_cast<std::size_t>(2 * o)], &v, sizeof v);
      packed_in.push_back(cld(v.real(), v.imag()));
    }
  }
  // Expected: c2c/r2c transform the packed input; c2r the Hermitian extension along the last dim.
  std::vector<cld> want;
  std::int64_t tot = 1;
  for (auto l : c.len) tot *= l;
  std::vector<cld> full(static_cast<std::size_t>(tot * c.batch));
  if (c.kind == Kind::kC2R) {
    const std::int64_t n = c.len.back(), h = clen.back(), rows = tot / n * c.batch;
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t k = 0; k < h; ++k) full[static_cast<std::size_t>(r * n + k)] = packed_in[static_cast<std::size_t>(r * h + k)];
    }
    // The other dimensions' inverse transforms first, then the Hermitian extension per row.
    std::vector<std::int64_t> outer(c.len.begin(), c.len.end() - 1);
    std::vector<cld> half(packed_in);
    if (!outer.empty()) {
      std::vector<std::int64_t> hl = clen;
      // transform along every dimension but the last: reference over a view with last len h
      std::int64_t hn = h;
      std::vector<cld> tmp = half;
      std::int64_t total = tot / n * hn;
      for (std::size_t j = 0; j + 1 < c.len.size(); ++j) {
        std::int64_t inner = 1;
        for (std::size_t k = j + 1; k < hl.size(); ++k) inner *= hl[k];
        const std::int64_t nj = hl[j], outr = total / (nj * inner);
        for (std::int64_t b = 0; b < c.batch; ++b)
          for (std::int64_t o2 = 0; o2 < outr; ++o2)
            for (std::int64_t i = 0; i < inner; ++i) {
              cld* p = tmp.data() + b * total + o2 * nj * inner + i;
              reference_dft(p, inner, p, inner, nj, 1);
            }
      }
      half = tmp;
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      cld* f = full.data() + r * n;
      for (std::int64_t k = 0; k < h; ++k) f[k] = half[static_cast<std::size_t>(r * h + k)];
      f[0] = f[0].real();
      if (n % 2 == 0) f[n / 2] = f[n / 2].real();
      for (std::int64_t k = 1; k < h; ++k) f[n - k] = std::conj(f[k]);
      reference_dft(f, 1, f, 1, n, 1);
    }
    want = full;
  } else {
    want = reference_nd(packed_in, c.len, c.batch, d.direction == Direction::kForward ? -1 : 1);
    if (c.kind == Kind::kR2C) {  // keep the half spectrum
      std::vector<cld> h;
      const std::int64_t n = c.len.back(), hh = clen.back();
      for (std::int64_t r = 0; r < tot / n * c.batch; ++r)
        for (std::int64_t k = 0; k < hh; ++k) h.push_back(want[static_cast<std::size_t>(r * n + k)]);
      want = h;
    }
  }
  for (auto& w : want) w *= static_cast<ld>(c.scale);
  R* outp = c.in_place ? inbuf.data() : outbuf.data();
  ASSERT_TRUE(plan.execute(inbuf.data(), outp).is_ok()) << plan.describe();
  std::vector<C> got;
  for (std::int64_t o : ooff) {
    if (real_out) {
      got.push_back(C(outp[static_cast<std::size_t>(o)], 0));
    } else {
      C v;
      v = C(outp[static_cast<std::size_t>(2 * o)], outp[static_cast<std::size_t>(2 * o + 1)]);
      got.push_back(v);
    }
  }
  ASSERT_EQ(got.size(), want.size());
  std::int64_t big = 1;
  for (auto l : c.len) big *= l;
  EXPECT_LE(rms_error(got, want), bound<R>(big)) << plan.describe();
  if (!c.in_place) {  // elements outside the output layout stay untouched (NaN)
    std::vector<bool> mine(outbuf.size(), false);
    for (std::int64_t o : ooff) {
      if (real_out) mine[static_cast<std::size_t>(o)] = true;
      else mine[static_cast<std::size_t>(2 * o)] = mine[static_cast<std::size_t>(2 * o + 1)] = true;
    }
    for (std::size_t i = 0; i < outbuf.size(); ++i)
      if (!mine[i]) {
        ASSERT_TRUE(std::isnan(outbuf[i])) << "gap " << i << " written, " << plan.describe();
      }
  }
}

TEST(FftNd, TwoAndThreeDimensionsEveryKind) {
  for_each_isa([](Isa) {
    for (Kind k : {Kind::kC2C, Kind::kR2C, Kind::kC2R}) {
      check_nd<float>({k, {8, 12}});
      check_nd<float>({k, {17, 10}, 2});
      check_nd<double>({k, {6, 5, 9}});
      check_nd<float>({k, {4, 64, 33}});
      check_nd<float>({k, {67, 3}});  // Bluestein columns
    }
  });
}

TEST(FftNd, BatchedStridedLayoutsAndScale) {
  for (Kind k : {Kind::kC2C, Kind::kR2C, Kind::kC2R}) {
    // 1-D batch with padded distances and strides on both sides.
    NdCase c{k, {24}, 5, Layout{{2}, 60}, Layout{{3}, 100}};
    check_nd<float>(c);
    check_nd<double>(c);
    // 2-D transposed output (columns contiguous) with a scale.
    const std::int64_t h = k == Kind::kC2C ? 10 : 10 / 2 + 1;
    const std::int64_t outer_in = k == Kind::kR2C ? 10 : h, outer_out = k == Kind::kC2R ? 10 : h;
    NdCase t{k, {6, 10}, 3, Layout{{outer_in + 1, 1}, 0}, Layout{{1, 7}, 0}, false, 0.25};
    t.out.distance = 7 * outer_out + 3;
    t.in.distance = 6 * (outer_in + 1) + 2;
    check_nd<float>(t);
    // Batch outermost but interleaved: batch members adjacent (distance 1).
    NdCase v{k, {12}, 4, Layout{{4}, 1}, Layout{{4}, 1}};
    check_nd<double>(v);
  }
}

TEST(FftNd, InPlaceEqualsOutOfPlaceBitwise) {
  for (Kind k : {Kind::kC2C, Kind::kR2C, Kind::kC2R}) {
    for (std::vector<std::int64_t> len : {std::vector<std::int64_t>{64}, {30}, {7}, {16, 20}, {5, 6, 8}}) {
      check_nd<float>({k, len, 2, {}, {}, true});
      check_nd<double>({k, len, 1, {}, {}, true});
      // bitwise: in-place c2c on a copy equals out-of-place
      if (k != Kind::kC2C) continue;
      PlanDesc d;
      d.lengths = len;
      d.batch = 2;
      const Plan op = value_or_fail(Plan::create(d, no_db()));
      d.in_place = true;
      const Plan ip = value_or_fail(Plan::create(d, no_db()));
      const auto x = random_complex<float>(op.input_span(), 3);
      std::vector<std::complex<float>> y(x.size()), z = x;
      ASSERT_TRUE(op.execute(x.data(), y.data()).is_ok());
      ASSERT_TRUE(ip.execute(z.data(), z.data()).is_ok());
      EXPECT_EQ(0, std::memcmp(y.data(), z.data(), y.size() * sizeof(y[0])));
    }
  }
}

TEST(FftNd, BitwiseIdenticalForAnyThreadCount) {
  for (Kind k : {Kind::kC2C, Kind::kR2C}) {
    PlanDesc d;
    d.kind = k;
    d.lengths = {48, 40, 6};
    d.batch = 3;
    PlanOptions o = no_db();
    o.threads = 1;
    const Plan p1 = value_or_fail(Plan::create(d, o));
    o.threads = 2;
    const Plan p2 = value_or_fail(Plan::create(d, o));
    const auto x = random_complex<float>(p1.input_span(), 8);
    std::vector<std::complex<float>> y1(static_cast<std::size_t>(p1.output_span())), y2(y1.size());
    ASSERT_TRUE(p1.execute(x.data(), y1.data()).is_ok());
    ASSERT_TRUE(p2.execute(x.data(), y2.data()).is_ok());
    EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(y1[0])));
  }
}

TEST(FftPlan, BadDescriptionsNameTheField) {
  auto err = [](PlanDesc d) {
    auto p = Plan::create(d, no_db());
    EXPECT_FALSE(p.is_ok());
    return p.is_ok() ? std::string() : p.status().message();
  };
  PlanDesc d;
  EXPECT_NE(err(d).find("rank"), std::string::npos);
  d.lengths = {1, 2, 3, 4};
  EXPECT_NE(err(d).find("rank"), std::string::npos);
  d.lengths = {8, 0};
  EXPECT_NE(err(d).find("lengths[1] = 0"), std::string::npos);
  d.lengths = {-3};
  EXPECT_NE(err(d).find("lengths[0] = -3"), std::string::npos);
  d.lengths = {8};
  d.batch = 0;
  EXPECT_NE(err(d).find("batch"), std::string::npos);
  d.batch = 1;
  d.in.strides = {1, 1};
  EXPECT_NE(err(d).find("in.strides"), std::string::npos);
  d.in.strides = {0};
  EXPECT_NE(err(d).find("in.strides[0] = 0"), std::string::npos);
  d.in.strides = {};
  d.out.distance = -1;
  EXPECT_NE(err(d).find("out.distance"), std::string::npos);
  d.out.distance = 0;
  d.lengths = {4, 4};
  d.out.strides = {1, 1};
  EXPECT_NE(err(d).find("two output elements"), std::string::npos);
  d.out.strides = {};
  d.in_place = true;
  d.in.strides = {8, 1};
  EXPECT_NE(err(d).find("in-place"), std::string::npos);
  d = PlanDesc{};
  d.lengths = {8};
  d.kind = Kind::kR2C;
  d.direction = Direction::kInverse;
  EXPECT_NE(err(d).find("r2c"), std::string::npos);
  d.kind = Kind::kC2R;
  d.direction = Direction::kForward;
  EXPECT_NE(err(d).find("c2r"), std::string::npos);
  d = PlanDesc{};
  d.lengths = {8};
  d.scale = std::numeric_limits<double>::infinity();
  EXPECT_NE(err(d).find("scale"), std::string::npos);
}

TEST(FftPlan, ExecuteRefusesNullOverlapAndMismatchedInPlace) {
  PlanDesc d;
  d.lengths = {16};
  const Plan p = value_or_fail(Plan::create(d, no_db()));
  std::vector<std::complex<float>> a(32);
  EXPECT_EQ(p.execute(nullptr, a.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.execute(a.data(), nullptr).code(), StatusCode::kInvalidArgument);
  const Status s = p.execute(a.data(), a.data() + 8);
  EXPECT_NE(s.message().find("overlap"), std::string::npos);
  d.in_place = true;
  const Plan ip = value_or_fail(Plan::create(d, no_db()));
  EXPECT_NE(ip.execute(a.data(), a.data() + 16).message().find("in != out"), std::string::npos);
}

TEST(FftPlan, MeasureRecordsAndTheNextPlanReadsTheDatabase) {
  testing::TempDir dir;
  PlanDesc d;
  d.lengths = {1000};
  d.planning = Planning::kMeasure;
  PlanOptions o;
  o.tune_db = dir.file("tune.sqlite");
  o.measure_seconds = 0.01;
  const Plan m = value_or_fail(Plan::create(d, o));
  EXPECT_NE(m.describe().find("(measure)"), std::string::npos) << m.describe();
  d.planning = Planning::kEstimate;
  const Plan e = value_or_fail(Plan::create(d, o));
  EXPECT_NE(e.describe().find("(tune-db)"), std::string::npos) << e.describe();
  // Same factorisation, so the same bits.
  const auto x = random_complex<float>(1000, 2);
  std::vector<std::complex<float>> y1(1000), y2(1000);
  ASSERT_TRUE(m.execute(x.data(), y1.data()).is_ok());
  ASSERT_TRUE(e.execute(x.data(), y2.data()).is_ok());
  EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(y1[0])));
  o.use_tune_db = false;
  EXPECT_NE(value_or_fail(Plan::create(d, o)).describe().find("(estimate)"), std::string::npos);
}

// Every factorisation the planner considers (radix-8/4 pass lists, codelets, rows of codelets,
// odd radices first or last, Bluestein), each forced through the tuning database as a user's
// wisdom would be, against the reference in single and double precision, forward and inverse.
TEST(FftPlan, EveryCandidateFactorisationIsExact) {
  testing::TempDir dir;
  const std::int64_t sizes[] = {8, 16, 32, 64, 128, 256, 512, 1024, 2048, 12, 60, 72, 120, 97, 2310};
  for_each_isa([&](Isa) {
    for (std::int64_t n : sizes)
      for (const auto& [prec, dir_] : {std::pair{Precision::kSingle, Direction::kForward},
                                       std::pair{Precision::kDouble, Direction::kInverse}}) {
          SCOPED_TRACE("n=" + std::to_string(n));
          PlanDesc d;
          d.lengths = {n};
          d.precision = prec;
          d.direction = dir_;
          d.planning = Planning::kMeasure;
          PlanOptions o;
          o.tune_db = dir.file("forced.sqlite");
          o.measure_seconds = 1e-4;
          (void)value_or_fail(Plan::create(d, o));  // records every candidate
          tune::TuneDb db = value_or_fail(tune::TuneDb::open(o.tune_db));
          std::vector<tune::TuneRecord> recs = value_or_fail(db.list({"fft", "dft1d", ""}));
          ASSERT_EQ(recs.size(), 1u);
          tune::TuneRecord rec = recs.front();
          ASSERT_GE(rec.candidates.size(), 1u);
          d.planning = Planning::kEstimate;
          for (const tune::Candidate& c : rec.candidates) {
            rec.solution = c.solution;
            rec.params.clear();
            ASSERT_TRUE(db.record(rec).is_ok());
            const Plan plan = value_or_fail(Plan::create(d, o));
            ASSERT_NE(plan.describe().find("(tune-db)"), std::string::npos) << plan.describe();
            // Measure mode records only what this ISA runs as named.
            EXPECT_NE(plan.describe().find(c.solution + ' '), std::string::npos) << plan.describe();
            const int sign = static_cast<int>(dir_);
            if (prec == Precision::kSingle) {
              const auto x = random_complex<float>(n, 21);
              std::vector<std::complex<float>> y(x.size(), {NAN, NAN});
              ASSERT_TRUE(plan.execute(x.data(), y.data()).is_ok());
              EXPECT_LE(rms_error(y, reference_nd({x.begin(), x.end()}, {n}, 1, sign)), bound<float>(n))
                  << plan.describe();
            } else {
              const auto x = random_complex<double>(n, 22);
              std::vector<std::complex<double>> y(x.size(), {NAN, NAN});
              ASSERT_TRUE(plan.execute(x.data(), y.data()).is_ok());
              EXPECT_LE(rms_error(y, reference_nd({x.begin(), x.end()}, {n}, 1, sign)), bound<double>(n))
                  << plan.describe();
            }
          }
          ASSERT_TRUE(db.clear({"fft", "", ""}).is_ok());
        }
  });
}

// A database entry that does not describe a valid factorisation of the length (a damaged or
// hand-edited file) is ignored: the plan falls back to the estimate.
TEST(FftPlan, InvalidDatabaseSolutionsFallBackToTheEstimate) {
  testing::TempDir dir;
  PlanDesc d;
  d.lengths = {256};
  d.planning = Planning::kMeasure;
  PlanOptions o;
  o.tune_db = dir.file("bad.sqlite");
  o.measure_seconds = 1e-4;
  (void)value_or_fail(Plan::create(d, o));
  tune::TuneDb db = value_or_fail(tune::TuneDb::open(o.tune_db));
  tune::TuneRecord rec = value_or_fail(db.list({"fft", "dft1d", ""})).front();
  d.planning = Planning::kEstimate;
  for (const char* bad : {"8x8x2", "8x8x4x1", "8x8x4+rows3+codelet", "8x8x4+rows+codelet",
                          "8x8x4+rows32+codelet", "8x8x4+rows2", "8x8x4+rows1+codelet",
                          "8x8x4+rows999+codelet", "4x4x4x4+codelet+rows8", "bluestein(7)", "+codelet"}) {
    rec.solution = bad;
    rec.params.clear();
    rec.candidates = {{bad, "{}", 1.0, 0.0, 5, true, ""}};
    const Status st = db.record(rec);
    ASSERT_TRUE(st.is_ok()) << st.message();
    EXPECT_NE(value_or_fail(Plan::create(d, o)).describe().find("(estimate)"), std::string::npos)
        << "solution '" << bad << "'";
  }
}

TEST(FftPlan, ConcurrentExecuteOfOnePlan) {
  PlanDesc d;
  d.lengths = {1024};
  const Plan p = value_or_fail(Plan::create(d, no_db()));
  const auto x = random_complex<float>(1024, 4);
  std::vector<std::complex<float>> want(1024);
  ASSERT_TRUE(p.execute(x.data(), want.data()).is_ok());
  std::vector<std::thread> ts;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      std::vector<std::complex<float>> y(1024);
      bool same = true;
      for (int r = 0; r < 50; ++r) {
        if (!p.execute(x.data(), y.data()).is_ok()) same = false;
        same = same && std::memcmp(y.data(), want.data(), y.size() * sizeof(y[0])) == 0;
      }
      ok[static_cast<std::size_t>(t)] = same;
    });
  for (auto& t : ts) t.join();
  for (int v : ok) EXPECT_TRUE(v);
}

}  // namespace
}  // namespace tessera::fft
