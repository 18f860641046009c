// C API of the FFT layer (tessera/c/fft.h): the descriptor initialiser, plans giving the same
// bytes as the C++ plans of the same description, forward + inverse round trips (complex and
// real, in and out of place, strided, batched, both precisions), spans and descriptions,
// execution from several threads, and invalid arguments (status, a message naming the
// function and the field, nothing written).
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/c/fft.h>
#include <tessera/c/status.h>
#include <tessera/fft.hpp>

#include "test_util.hpp"

namespace {

namespace fft = tessera::fft;
using i64 = std::int64_t;

// An expected failure: status, and a message "<function>: ..." containing `needle`.
::testing::AssertionResult fails(tsr_status s, tsr_status want, const std::string& function,
                                 const std::string& needle) {
  const std::string msg = tsr_last_error_message();
  if (s != want)
    return ::testing::AssertionFailure()
           << "status " << tsr_status_name(s) << " (" << msg << "), want " << tsr_status_name(want);
  if (msg.rfind(function + ": ", 0) != 0 || msg.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "message \"" << msg << "\" does not start with \""
                                         << function << ": \" or lacks \"" << needle << "\"";
  return ::testing::AssertionSuccess();
}
::testing::AssertionResult invalid(tsr_status s, const std::string& function,
                                   const std::string& needle) {
  return fails(s, TSR_STATUS_INVALID_ARGUMENT, function, needle);
}

tsr_fft_desc make_desc(tsr_fft_kind kind, tsr_fft_precision precision, std::vector<i64> lengths) {
  tsr_fft_desc d;
  EXPECT_EQ(
      tsr_fft_desc_init(kind, precision, static_cast<int32_t>(lengths.size()), lengths.data(), &d),
      TSR_STATUS_OK)
      << tsr_last_error_message();
  return d;
}

// The C++ description the C one stands for, written here independently of the library's.
fft::PlanDesc to_cpp(const tsr_fft_desc& d) {
  fft::PlanDesc p;
  p.kind = static_cast<fft::Kind>(static_cast<int>(d.kind));
  p.precision = static_cast<fft::Precision>(static_cast<int>(d.precision));
  p.direction = static_cast<fft::Direction>(static_cast<int>(d.direction));
  p.lengths.assign(d.lengths, d.lengths + d.rank);
  p.batch = d.batch;
  bool in = false, out = false;
  for (int i = 0; i < d.rank; ++i) {
    in = in || d.in_strides[i] != 0;
    out = out || d.out_strides[i] != 0;
  }
  if (in) p.in.strides.assign(d.in_strides, d.in_strides + d.rank);
  if (out) p.out.strides.assign(d.out_strides, d.out_strides + d.rank);
  p.in.distance = d.in_distance;
  p.out.distance = d.out_distance;
  p.in_place = d.in_place != 0;
  p.scale = d.scale;
  p.planning = static_cast<fft::Planning>(static_cast<int>(d.planning));
  return p;
}

// A plan released at the end of the scope.
class CPlan {
 public:
  explicit CPlan(const tsr_fft_desc& d) {
    EXPECT_EQ(tsr_fft_plan_create(&p_, &d), TSR_STATUS_OK) << tsr_last_error_message();
  }
  ~CPlan() { tsr_fft_plan_destroy(p_); }
  CPlan(const CPlan&) = delete;
  CPlan& operator=(const CPlan&) = delete;
  operator tsr_fft_plan() const { return p_; }
  i64 in_span() const { return spans().first; }
  i64 out_span() const { return spans().second; }

 private:
  std::pair<i64, i64> spans() const {
    i64 in = -1, out = -1;
    EXPECT_EQ(tsr_fft_plan_get_spans(p_, &in, &out), TSR_STATUS_OK) << tsr_last_error_message();
    return {in, out};
  }
  tsr_fft_plan p_ = nullptr;
};

// Reals enough for `span` elements of a side (complex: two reals each).
i64 reals(i64 span, bool complex) {
  return complex ? 2 * span : span;
}

template <typename T>
std::vector<T> random_reals(i64 n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (T& e : v) e = static_cast<T>(dist(gen));
  return v;
}

// The C plan and the C++ plan of the same description give the same bytes.
template <typename T>
void expect_same_as_cpp(const tsr_fft_desc& d) {
  CPlan c(d);
  const fft::Plan cpp = tessera::testing::value_or_fail(fft::Plan::create(to_cpp(d)));
  ASSERT_EQ(c.in_span(), cpp.input_span());
  ASSERT_EQ(c.out_span(), cpp.output_span());
  const bool in_complex = d.kind != TSR_FFT_R2C, out_complex = d.kind != TSR_FFT_C2R;
  const i64 in_n = reals(c.in_span(), in_complex), out_n = reals(c.out_span(), out_complex);
  std::vector<T> in = random_reals<T>(std::max(in_n, out_n), 7);
  std::vector<T> in2 = in, out_c(static_cast<std::size_t>(out_n), T(NAN)), out_cpp = out_c;
  if (d.in_place) {
    ASSERT_EQ(tsr_fft_execute(c, in.data(), in.data()), TSR_STATUS_OK) << tsr_last_error_message();
    ASSERT_TRUE(cpp.execute(in2.data(), in2.data()).is_ok());
    EXPECT_EQ(std::memcmp(in.data(), in2.data(), in.size() * sizeof(T)), 0);
    return;
  }
  ASSERT_EQ(tsr_fft_execute(c, in.data(), out_c.data()), TSR_STATUS_OK) << tsr_last_error_message();
  ASSERT_TRUE(cpp.execute(in.data(), out_cpp.data()).is_ok());
  EXPECT_EQ(std::memcmp(out_c.data(), out_cpp.data(), out_c.size() * sizeof(T)), 0);
  EXPECT_EQ(in, in2) << "an out-of-place transform modified its input";
}

TEST(FftCapi, DescInitFillsTheDefaults) {
  const i64 lengths[3] = {4, 6, 8};
  tsr_fft_desc d;
  std::memset(&d, 0x5a, sizeof d);
  ASSERT_EQ(tsr_fft_desc_init(TSR_FFT_R2C, TSR_FFT_DOUBLE, 3, lengths, &d), TSR_STATUS_OK);
  EXPECT_EQ(d.kind, TSR_FFT_R2C);
  EXPECT_EQ(d.precision, TSR_FFT_DOUBLE);
  EXPECT_EQ(d.direction, TSR_FFT_FORWARD);
  EXPECT_EQ(d.rank, 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(d.lengths[i], lengths[i]);
    EXPECT_EQ(d.in_strides[i], 0);
    EXPECT_EQ(d.out_strides[i], 0);
  }
  EXPECT_EQ(d.batch, 1);
  EXPECT_EQ(d.in_distance, 0);
  EXPECT_EQ(d.out_distance, 0);
  EXPECT_EQ(d.in_place, 0);
  EXPECT_EQ(d.scale, 1.0);
  EXPECT_EQ(d.planning, TSR_FFT_PLANNING_ESTIMATE);
  EXPECT_EQ(d.threads, 0);
  EXPECT_EQ(make_desc(TSR_FFT_C2R, TSR_FFT_SINGLE, {5}).direction, TSR_FFT_INVERSE);
  EXPECT_EQ(make_desc(TSR_FFT_C2R, TSR_FFT_SINGLE, {5}).lengths[1], 0);
}

TEST(FftCapi, PlansGiveTheBytesOfTheCppPlans) {
  tsr_fft_desc d = make_desc(TSR_FFT_C2C, TSR_FFT_SINGLE, {60});
  expect_same_as_cpp<float>(d);
  d.direction = TSR_FFT_INVERSE;
  d.batch = 3;
  d.scale = 0.25;
  expect_same_as_cpp<float>(d);
  d = make_desc(TSR_FFT_R2C, TSR_FFT_DOUBLE, {6, 10});
  expect_same_as_cpp<double>(d);
  d.in_place = 1;
  expect_same_as_cpp<double>(d);
  d = make_desc(TSR_FFT_C2R, TSR_FFT_SINGLE, {3, 4, 7});
  d.batch = 2;
  expect_same_as_cpp<float>(d);
  // Strided: every other complex element, batch members 100 elements apart.
  d = make_desc(TSR_FFT_C2C, TSR_FFT_DOUBLE, {5, 9});
  d.in_strides[0] = 20, d.in_strides[1] = 2, d.in_distance = 100;
  d.out_strides[0] = 1, d.out_strides[1] = 5, d.out_distance = 45;
  d.batch = 2;
  d.threads = 2;
  expect_same_as_cpp<double>(d);
}

// Forward then inverse with scale 1/N gives back the input.
template <typename T>
void round_trip(tsr_fft_kind kind, std::vector<i64> lengths, i64 batch, bool in_place) {
  SCOPED_TRACE(std::string("kind ") + std::to_string(kind) + " in_place " +
               std::to_string(in_place));
  const tsr_fft_precision prec = sizeof(T) == 4 ? TSR_FFT_SINGLE : TSR_FFT_DOUBLE;
  const bool real = kind == TSR_FFT_R2C;
  tsr_fft_desc fwd = make_desc(kind, prec, lengths);
  tsr_fft_desc inv = make_desc(real ? TSR_FFT_C2R : TSR_FFT_C2C, prec, lengths);
  inv.direction = TSR_FFT_INVERSE;
  fwd.batch = inv.batch = batch;
  fwd.in_place = inv.in_place = in_place ? 1 : 0;
  i64 n = 1;
  for (i64 l : lengths) n *= l;
  inv.scale = 1.0 / static_cast<double>(n);
  CPlan f(fwd), b(inv);
  const i64 in_n = reals(f.in_span(), !real), spec_n = reals(f.out_span(), true);
  ASSERT_EQ(reals(b.in_span(), true), spec_n);
  ASSERT_EQ(reals(b.out_span(), !real), in_n);
  // In place, the data array holds both sides; padding reals of the real side stay 0.
  const i64 size = in_place ? std::max(in_n, spec_n) : in_n;
  std::vector<T> x(static_cast<std::size_t>(size), T(0));
  const i64 row = lengths.back(), padded = real && in_place ? 2 * (row / 2 + 1) : row;
  const std::vector<T> r = random_reals<T>(size, 3);
  for (i64 i = 0; i < in_n; ++i)
    if (!real || i % padded < row) x[static_cast<std::size_t>(i)] = r[static_cast<std::size_t>(i)];
  std::vector<T> data = x, spectrum(static_cast<std::size_t>(spec_n)), back(x.size(), T(0));
  if (in_place) {
    ASSERT_EQ(tsr_fft_execute(f, data.data(), data.data()), TSR_STATUS_OK)
        << tsr_last_error_message();
    ASSERT_EQ(tsr_fft_execute(b, data.data(), data.data()), TSR_STATUS_OK)
        << tsr_last_error_message();
    back = data;
  } else {
    ASSERT_EQ(tsr_fft_execute(f, data.data(), spectrum.data()), TSR_STATUS_OK)
        << tsr_last_error_message();
    ASSERT_EQ(tsr_fft_execute(b, spectrum.data(), back.data()), TSR_STATUS_OK)
        << tsr_last_error_message();
  }
  const double tol = 20 * std::log2(static_cast<double>(n) + 1) * std::numeric_limits<T>::epsilon();
  double err = 0;
  for (i64 i = 0; i < in_n; ++i) {
    if (real && i % padded >= row) continue;
    const auto u = static_cast<std::size_t>(i);
    err = std::max(err, std::abs(static_cast<double>(back[u]) - static_cast<double>(x[u])));
  }
  EXPECT_LE(err, tol);
}

TEST(FftCapi, ForwardInverseRoundTrips) {
  round_trip<float>(TSR_FFT_C2C, {1000}, 1, false);
  round_trip<float>(TSR_FFT_C2C, {127}, 2, true);
  round_trip<double>(TSR_FFT_C2C, {12, 15}, 3, false);
  round_trip<double>(TSR_FFT_C2C, {4, 6, 10}, 1, true);
  round_trip<float>(TSR_FFT_R2C, {1155}, 1, false);
  round_trip<float>(TSR_FFT_R2C, {9, 14}, 2, true);
  round_trip<double>(TSR_FFT_R2C, {8, 5, 11}, 2, false);
  round_trip<double>(TSR_FFT_R2C, {33}, 1, true);
}

TEST(FftCapi, DescribeCopiesIntoTheCallersBuffer) {
  const tsr_fft_desc d = make_desc(TSR_FFT_C2C, TSR_FFT_SINGLE, {1000});
  CPlan c(d);
  const fft::Plan cpp = tessera::testing::value_or_fail(fft::Plan::create(to_cpp(d)));
  const std::string want = cpp.describe();
  ASSERT_GT(want.size(), 4u);
  size_t length = 0;
  ASSERT_EQ(tsr_fft_plan_describe(c, nullptr, 0, &length), TSR_STATUS_OK);
  EXPECT_EQ(length, want.size());
  std::vector<char> buf(want.size() + 1, 'x');
  ASSERT_EQ(tsr_fft_plan_describe(c, buf.data(), buf.size(), nullptr), TSR_STATUS_OK);
  EXPECT_EQ(std::string(buf.data()), want);
  char small[5];
  std::memset(small, 'x', sizeof small);
  length = 0;
  ASSERT_EQ(tsr_fft_plan_describe(c, small, sizeof small, &length), TSR_STATUS_OK);
  EXPECT_EQ(std::string(small), want.substr(0, 4));
  EXPECT_EQ(length, want.size());
  EXPECT_TRUE(
      invalid(tsr_fft_plan_describe(c, nullptr, 8, &length), "tsr_fft_plan_describe", "buffer"));
}

// One plan run from several threads on different data gives what a lone run gives.
TEST(FftCapi, OnePlanRunsOnSeveralThreads) {
  tsr_fft_desc d = make_desc(TSR_FFT_C2C, TSR_FFT_DOUBLE, {64, 30});
  d.threads = 1;
  CPlan c(d);
  const i64 n = reals(c.in_span(), true);
  constexpr int kThreads = 4;
  std::vector<std::vector<double>> in, want, got;
  for (int t = 0; t < kThreads; ++t) {
    in.push_back(random_reals<double>(n, 11 + static_cast<unsigned>(t)));
    want.emplace_back(static_cast<std::size_t>(n));
    got.emplace_back(static_cast<std::size_t>(n));
    ASSERT_EQ(tsr_fft_execute(c, in[t].data(), want[t].data()), TSR_STATUS_OK);
  }
  std::vector<std::thread> pool;
  std::vector<tsr_status> status(kThreads, TSR_STATUS_INTERNAL);
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (int rep = 0; rep < 20 && (rep == 0 || status[t] == TSR_STATUS_OK); ++rep)
        status[t] = tsr_fft_execute(c, in[t].data(), got[t].data());
    });
  for (std::thread& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(status[t], TSR_STATUS_OK);
    EXPECT_EQ(got[t], want[t]) << "thread " << t;
  }
}

TEST(FftCapi, BadDescriptionsNameTheField) {
  const char* fn = "tsr_fft_plan_create";
  const tsr_fft_desc good = make_desc(TSR_FFT_C2C, TSR_FFT_SINGLE, {8, 8});
  auto sentinel = reinterpret_cast<tsr_fft_plan>(std::uintptr_t{0x1234});
  struct Case {
    const char* needle;
    void (*change)(tsr_fft_desc&);
  };
  for (const Case& c : {
           Case{"desc->rank = 0", [](tsr_fft_desc& d) { d.rank = 0; }},
           Case{"desc->rank = 4", [](tsr_fft_desc& d) { d.rank = 4; }},
           Case{"desc->kind = 7", [](tsr_fft_desc& d) { d.kind = static_cast<tsr_fft_kind>(7); }},
           Case{"desc->precision = 2",
                [](tsr_fft_desc& d) { d.precision = static_cast<tsr_fft_precision>(2); }},
           Case{"desc->direction = 0",
                [](tsr_fft_desc& d) { d.direction = static_cast<tsr_fft_direction>(0); }},
           Case{"desc->planning = 5",
                [](tsr_fft_desc& d) { d.planning = static_cast<tsr_fft_planning>(5); }},
           Case{"desc->threads = -1", [](tsr_fft_desc& d) { d.threads = -1; }},
           Case{"lengths[1]", [](tsr_fft_desc& d) { d.lengths[1] = 0; }},
           Case{"lengths[0]", [](tsr_fft_desc& d) { d.lengths[0] = -3; }},
           Case{"batch", [](tsr_fft_desc& d) { d.batch = 0; }},
           Case{"scale", [](tsr_fft_desc& d) { d.scale = NAN; }},
           Case{"scale", [](tsr_fft_desc& d) { d.scale = INFINITY; }},
       }) {
    tsr_fft_desc d = good;
    c.change(d);
    tsr_fft_plan p = sentinel;
    EXPECT_TRUE(invalid(tsr_fft_plan_create(&p, &d), fn, c.needle));
    EXPECT_EQ(p, sentinel) << c.needle << ": *plan was written";
  }
  // Layouts that cannot work: an r2c run backwards, an output whose rows land on one
  // another, an in-place plan whose output strides are not its input's.
  tsr_fft_desc r2c = make_desc(TSR_FFT_R2C, TSR_FFT_SINGLE, {16});
  r2c.direction = TSR_FFT_INVERSE;
  tsr_fft_desc rows = make_desc(TSR_FFT_C2C, TSR_FFT_SINGLE, {8, 8});
  rows.out_strides[0] = 0, rows.out_strides[1] = 1;
  tsr_fft_desc overlap = make_desc(TSR_FFT_C2C, TSR_FFT_SINGLE, {16});
  overlap.in_place = 1;
  overlap.out_strides[0] = 2;
  for (const tsr_fft_desc* d : {&r2c, &rows, &overlap}) {
    tsr_fft_plan p = sentinel;
    EXPECT_TRUE(invalid(tsr_fft_plan_create(&p, d), fn, d == &r2c ? "direction" : "out"));
    EXPECT_EQ(p, sentinel);
  }
}

TEST(FftCapi, NullPointersAndPlans) {
  const i64 n[1] = {16};
  tsr_fft_desc d;
  EXPECT_TRUE(invalid(tsr_fft_desc_init(TSR_FFT_C2C, TSR_FFT_SINGLE, 1, nullptr, &d),
                      "tsr_fft_desc_init", "lengths is null"));
  EXPECT_TRUE(invalid(tsr_fft_desc_init(TSR_FFT_C2C, TSR_FFT_SINGLE, 1, n, nullptr),
                      "tsr_fft_desc_init", "desc is null"));
  EXPECT_TRUE(invalid(tsr_fft_desc_init(TSR_FFT_C2C, TSR_FFT_SINGLE, 4, n, &d), "tsr_fft_desc_init",
                      "rank = 4"));
  EXPECT_TRUE(invalid(tsr_fft_desc_init(static_cast<tsr_fft_kind>(3), TSR_FFT_SINGLE, 1, n, &d),
                      "tsr_fft_desc_init", "kind = 3"));
  d = make_desc(TSR_FFT_C2C, TSR_FFT_SINGLE, {16});
  tsr_fft_plan p = nullptr;
  EXPECT_TRUE(invalid(tsr_fft_plan_create(nullptr, &d), "tsr_fft_plan_create", "plan is null"));
  EXPECT_TRUE(invalid(tsr_fft_plan_create(&p, nullptr), "tsr_fft_plan_create", "desc is null"));
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(tsr_fft_plan_destroy(nullptr), TSR_STATUS_OK);

  std::vector<float> a(32, 1.0f), b(32, 0.0f);
  EXPECT_TRUE(
      invalid(tsr_fft_execute(nullptr, a.data(), b.data()), "tsr_fft_execute", "plan is null"));
  i64 in = 0, out = 0;
  EXPECT_TRUE(invalid(tsr_fft_plan_get_spans(nullptr, &in, &out), "tsr_fft_plan_get_spans",
                      "plan is null"));
  size_t length = 0;
  EXPECT_TRUE(invalid(tsr_fft_plan_describe(nullptr, nullptr, 0, &length), "tsr_fft_plan_describe",
                      "plan is null"));

  CPlan c(d);
  EXPECT_TRUE(invalid(tsr_fft_execute(c, nullptr, b.data()), "tsr_fft_execute", "in is null"));
  EXPECT_TRUE(invalid(tsr_fft_execute(c, a.data(), nullptr), "tsr_fft_execute", "out is null"));
  EXPECT_TRUE(invalid(tsr_fft_plan_get_spans(c, nullptr, &out), "tsr_fft_plan_get_spans",
                      "input_span is null"));
  // An out-of-place plan refuses overlapping arrays.
  EXPECT_EQ(tsr_fft_execute(c, a.data(), a.data()), TSR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(tsr_last_error_message()).rfind("tsr_fft_execute: ", 0), 0u);
  EXPECT_EQ(tsr_fft_execute(c, a.data(), b.data()), TSR_STATUS_OK) << tsr_last_error_message();
}

}  // namespace
