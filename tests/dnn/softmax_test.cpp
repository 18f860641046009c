// Softmax / log-softmax: the row (axis innermost) and column (strided axis) fast paths against
// the reference over axes, layouts, dtypes, sizes and every ISA; stability with huge and
// infinite inputs; thread-count independence; strided and in-place use; finite differences
// of both backward passes; bad arguments and the replay line.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/dnn.hpp>

#include "../../src/dnn/ops/softmax/kernels.hpp"
#include "../../src/dnn/ops/softmax/ref.hpp"
#include "activation_test_util.hpp"
#include "test_util.hpp"

namespace tessera::dnn {
namespace {

using act_test::close;
using act_test::expect_ok;
using act_test::expect_rejected;
using act_test::HostTensor;
using act_test::i64;
using testing::for_each_isa;

constexpr SoftmaxMode kModes[] = {SoftmaxMode::kSoftmax, SoftmaxMode::kLogSoftmax};
const char* mode_name(SoftmaxMode m) {
  return m == SoftmaxMode::kSoftmax ? "softmax" : "log";
}

struct AxisCase {
  TensorDesc desc;
  int axis;
  const char* path;  // "rows", "cols" (the fast path expected), or "ref"
};

std::vector<AxisCase> axis_cases(DType t) {
  std::vector<AxisCase> c;
  for (i64 n : {1, 7, 15, 16, 17, 33, 64, 1037, 2100})
    c.push_back({TensorDesc::make(t, {n}), 0, "rows"});
  c.push_back({TensorDesc::make(t, {5, 17}), 1, "rows"});
  c.push_back({TensorDesc::make(t, {5, 17}), -1, "rows"});
  c.push_back({TensorDesc::make(t, {5, 17}), 0, "cols"});
  c.push_back({TensorDesc::make(t, {2, 7, 5, 3}), 1, "cols"});
  c.push_back({TensorDesc::make(t, {2, 7, 5, 3}), 3, "rows"});
  c.push_back({TensorDesc::make(t, {2, 7, 5, 3}), 0, "cols"});
  c.push_back({TensorDesc::make(t, {2, 7, 5, 3}), -2, "cols"});
  c.push_back({TensorDesc::make(t, {2, 19, 3, 5}, Layout::kNHWC), 1, "rows"});
  c.push_back({TensorDesc::make(t, {2, 19, 3, 5}, Layout::kNHWC), 2, "cols"});
  c.push_back({TensorDesc::make(t, {3, 300, 17}), 1, "cols"});  // column sums over 2 blocks
  c.push_back({TensorDesc::make(t, {2, 3, 100}), 1, "cols"});   // 100 columns: 64 + 36
  c.push_back({TensorDesc::make(t, {1, 4500, 3}), 1, "cols"});  // too long to pack (avx512)
  c.push_back({TensorDesc::make(t, {4, 1, 6}), 1, "rows"});     // length-1 axis
  c.push_back({act_test::padded_desc(t, {3, 6, 5}, 1), 1, "ref"});
  return c;
}

// Tolerances of the vector paths against the f64 reference (inputs in [-6, 6]):
// forward softmax relative, log-softmax and both backward passes absolute on O(1) values.
double fwd_rtol(SoftmaxMode m) {
  return m == SoftmaxMode::kSoftmax ? 2e-6 : 0.0;
}
double fwd_atol(SoftmaxMode m, double want) {
  return m == SoftmaxMode::kSoftmax ? 1e-37 : 1e-6 * (1.0 + std::fabs(want));
}
constexpr double kBwdAtol = 2e-6;

void check_softmax_vs_reference(bool backward) {
  std::mt19937 rng(backward ? 43 : 41);
  for_each_isa([&](Isa isa) {
    Handle h;
    for (DType t : act_test::float_dtypes())
      for (const AxisCase& ac : axis_cases(t))
        for (SoftmaxMode mode : kModes) {
          const TensorDesc& d = ac.desc;
          SCOPED_TRACE(d.to_string() + " axis " + std::to_string(ac.axis) + " " + mode_name(mode));
          HostTensor x(d), y(d), dy(d), got(d), want(d);
          x.fill_uniform(rng, -6.0f, 6.0f);
          dy.fill_uniform(rng, -1.0f, 1.0f);
          const int ax = ac.axis < 0 ? ac.axis + d.rank() : ac.axis;
          ref::softmax_forward(mode, ax, d, x.data(), d, y.data());
          got.fill_nan();
          act_test::DispatchLog log;
          if (backward) {
            expect_ok(softmax_backward(h, mode, ac.axis, d, y.data(), d, dy.data(), d, got.data()));
            ref::softmax_backward(mode, ax, d, y.data(), d, dy.data(), d, want.data());
          } else {
            expect_ok(softmax_forward(h, mode, ac.axis, d, x.data(), d, got.data()));
            ref::softmax_forward(mode, ax, d, x.data(), d, want.data());
          }
          const std::string chosen = log.finish();
          const std::string expect_impl =
              std::string(ac.path) == "ref"
                  ? std::string("softmax_ref")
                  : std::string("softmax_") + ac.path + act_test::isa_suffix(isa);
          EXPECT_NE(chosen.find(std::string("chose ") + expect_impl), std::string::npos) << chosen;
          if (isa == Isa::kGeneric || std::string(ac.path) == "ref") {
            EXPECT_TRUE(act_test::same_bits(got, want));  // the reference's own arithmetic
            continue;
          }
          const std::vector<float> g = got.values(), w = want.values();
          int failures = 0;
          for (std::size_t i = 0; i < g.size() && failures < 5; ++i) {
            const auto r = backward ? close(t, g[i], w[i], 1e-6, kBwdAtol)
                                    : close(t, g[i], w[i], fwd_rtol(mode), fwd_atol(mode, w[i]));
            if (!r) {
              ADD_FAILURE() << "element " << i << ": " << r.message();
              ++failures;
            }
          }
        }
  });
}

TEST(Softmax, ForwardMatchesReference) {
  check_softmax_vs_reference(false);
}
TEST(Softmax, BackwardMatchesReference) {
  check_softmax_vs_reference(true);
}

// Huge finite inputs do not overflow; -inf entries give 0 (log: -inf); rows that are all
// -inf, or hold +inf or NaN, give NaN rows (as PyTorch).
TEST(Softmax, StableWithHugeAndInfiniteInputs) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const std::vector<std::vector<float>> rows = {
      {1e30f, 1e30f, -1e30f, 0.0f, 3e38f, -3e38f, 3e38f, 1.0f},
      {-inf, 0.0f, 1.0f, -inf, 2.0f, -inf, -inf, 3.0f},
      {-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
      {1.0f, inf, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f},
      {1.0f, 2.0f, nan, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f},
      {88.0f, 89.0f, 90.0f, -100.0f, 1e4f, 1e4f, -1e4f, 9999.0f},
  };
  std::vector<float> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  const i64 nrows = static_cast<i64>(rows.size());
  for_each_isa([&](Isa) {
    Handle h;
    // The same rows along the innermost axis (rows path) and along axis 0 (cols path).
    const TensorDesc dr = TensorDesc::make(DType::kF32, {nrows, 8});
    const TensorDesc dc = TensorDesc::make(DType::kF32, {8, nrows});
    std::vector<float> transposed(flat.size());
    for (i64 r = 0; r < nrows; ++r)
      for (i64 i = 0; i < 8; ++i) transposed[i * nrows + r] = flat[r * 8 + i];
    for (SoftmaxMode mode : kModes) {
      SCOPED_TRACE(mode_name(mode));
      std::vector<float> yr(flat.size()), yc(flat.size()), want(flat.size());
      expect_ok(softmax_forward(h, mode, 1, dr, flat.data(), dr, yr.data()));
      expect_ok(softmax_forward(h, mode, 0, dc, transposed.data(), dc, yc.data()));
      ref::softmax_forward(mode, 1, dr, flat.data(), dr, want.data());
      for (i64 r = 0; r < nrows; ++r)
        for (i64 i = 0; i < 8; ++i) {
          const float w = want[r * 8 + i];
          EXPECT_TRUE(close(DType::kF32, yr[r * 8 + i], w, fwd_rtol(mode), fwd_atol(mode, w)))
              << "row " << r << " element " << i;
          EXPECT_TRUE(close(DType::kF32, yc[i * nrows + r], w, fwd_rtol(mode), fwd_atol(mode, w)))
              << "cols: row " << r << " element " << i;
        }
      // Row 0: finite, the two 3e38 entries share the mass.
      const bool soft = mode == SoftmaxMode::kSoftmax;
      EXPECT_FLOAT_EQ(yr[4], soft ? 0.5f : -std::log(2.0f));
      EXPECT_EQ(yr[0], soft ? 0.0f : -3e38f);
      // Row 1: -inf entries give exactly 0 (log: -inf).
      EXPECT_EQ(yr[8], soft ? 0.0f : -inf);
      // Rows 2-4: NaN.
      for (i64 r = 2; r <= 4; ++r)
        for (i64 i = 0; i < 8; ++i) EXPECT_TRUE(std::isnan(yr[r * 8 + i])) << r << "," << i;
    }
  });
}

TEST(Softmax, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(47);
  const std::vector<AxisCase> cases = {
      {TensorDesc::make(DType::kF32, {64, 2000}), 1, "rows"},
      {TensorDesc::make(DType::kF32, {4, 37, 40, 40}), 1, "cols"},
      {TensorDesc::make(DType::kBF16, {4, 37, 20, 20}, Layout::kNHWC), 1, "rows"},
      {TensorDesc::make(DType::kF16, {1, 3000, 35}), 1, "cols"},
  };
  for (const AxisCase& ac : cases)
    for (SoftmaxMode mode : kModes) {
      const TensorDesc& d = ac.desc;
      HostTensor x(d), dy(d), y1(d), y2(d), g1(d), g2(d);
      x.fill_uniform(rng, -5.0f, 5.0f);
      dy.fill_uniform(rng, -1.0f, 1.0f);
      Handle h;
      expect_ok(h.set_num_threads(1));
      expect_ok(softmax_forward(h, mode, ac.axis, d, x.data(), d, y1.data()));
      expect_ok(softmax_backward(h, mode, ac.axis, d, y1.data(), d, dy.data(), d, g1.data()));
      expect_ok(h.set_num_threads(2));
      expect_ok(softmax_forward(h, mode, ac.axis, d, x.data(), d, y2.data()));
      expect_ok(softmax_backward(h, mode, ac.axis, d, y1.data(), d, dy.data(), d, g2.data()));
      EXPECT_EQ(y1.bytes, y2.bytes) << d.to_string() << " " << mode_name(mode);
      EXPECT_EQ(g1.bytes, g2.bytes) << d.to_string() << " " << mode_name(mode);
    }
}

// Strided views and mixed layouts run on the reference; storage outside the views keeps its
// NaN. In place (x == y, dx == dy, dx == y) matches out of place bit for bit.
TEST(Softmax, StridedAndInPlace) {
  std::mt19937 rng(53);
  for_each_isa([&](Isa) {
    Handle h;
    for (DType t : act_test::float_dtypes())
      for (SoftmaxMode mode : kModes) {
        const std::vector<i64> dims = {2, 5, 3, 4};
        const TensorDesc packed = TensorDesc::make(t, dims);
        const TensorDesc xs = act_test::padded_desc(t, dims, 2);
        const TensorDesc nhwc = TensorDesc::make(t, dims, Layout::kNHWC);
        HostTensor x(xs), xp(packed), want(packed);
        x.fill_uniform(rng, -3.0f, 3.0f);
        xp.set_values(x.values());
        ref::softmax_forward(mode, 1, packed, xp.data(), packed, want.data());
        for (const TensorDesc& yd : {act_test::padded_desc(t, dims, 1), nhwc}) {
          HostTensor y(yd);
          y.fill_nan();
          expect_ok(softmax_forward(h, mode, 1, xs, x.data(), yd, y.data()));
          EXPECT_EQ(y.values(), want.values()) << yd.to_string();
          i64 nans = 0;
          for (i64 i = 0; i < y.storage_elems(); ++i)
            nans += std::isnan(detail::load_f32(y.data(), t, i)) ? 1 : 0;
          EXPECT_EQ(nans, y.storage_elems() - packed.numel());
        }
        for (int axis : {1, 3}) {
          HostTensor y(packed), dy(packed), dx(packed);
          y.fill_uniform(rng, -3.0f, 3.0f);
          dy.fill_uniform(rng, -1.0f, 1.0f);
          HostTensor yy(packed);
          expect_ok(softmax_forward(h, mode, axis, packed, xp.data(), packed, yy.data()));
          HostTensor inplace = xp;
          expect_ok(softmax_forward(h, mode, axis, packed, inplace.data(), packed, inplace.data()));
          EXPECT_EQ(inplace.bytes, yy.bytes);
          expect_ok(softmax_backward(h, mode, axis, packed, yy.data(), packed, dy.data(), packed,
                                     dx.data()));
          HostTensor g = dy;
          expect_ok(softmax_backward(h, mode, axis, packed, yy.data(), packed, g.data(), packed,
                                     g.data()));
          EXPECT_EQ(g.bytes, dx.bytes);
          HostTensor yc = yy;
          expect_ok(softmax_backward(h, mode, axis, packed, yc.data(), packed, dy.data(), packed,
                                     yc.data()));
          EXPECT_EQ(yc.bytes, dx.bytes);
        }
      }
  });
}

// The vector kernels' variants picked by size (non-temporal stores for outputs larger than
// the last-level cache, exponentials kept in scratch or recomputed) give the same bits,
// whatever the output alignment.
TEST(Softmax, KernelVariantsGiveTheSameBits) {
  std::vector<const softmax_kernels::Kernels*> tables;
  if (cpu_info().has(CpuFeature::kAvx512f) && cpu_info().has(CpuFeature::kAvx512bw) &&
      cpu_info().has(CpuFeature::kAvx512dq) && cpu_info().has(CpuFeature::kAvx512vl))
    tables.push_back(&softmax_kernels::kAvx512);
  if (cpu_info().has(CpuFeature::kAvx2) && cpu_info().has(CpuFeature::kFma))
    tables.push_back(&softmax_kernels::kAvx2);
  if (tables.empty()) GTEST_SKIP() << "no vector ISA on this CPU";
  std::mt19937 rng(61);
  std::vector<float> scratch(static_cast<std::size_t>(softmax_kernels::kColsScratch));
  for (const auto* t : tables)
    for (int st = 0; st < act_kernels::kNumStorage; ++st)
      for (int mode = 0; mode < softmax_kernels::kNumModes; ++mode)
        for (i64 offset : {0, 3}) {
          SCOPED_TRACE(std::string(t->isa) + " storage " + std::to_string(st) + " mode " +
                       std::to_string(mode) + " offset " + std::to_string(offset));
          const i64 eb = st == act_kernels::kF32 ? 4 : 2;
          const DType dt = st == act_kernels::kF32    ? DType::kF32
                           : st == act_kernels::kBF16 ? DType::kBF16
                                                      : DType::kF16;
          // Rows: lengths on both sides of the on-stack limit (4096).
          for (i64 len : {17, 1037, 5000}) {
            const i64 rows = 5, n = rows * len;  // short rows: a group of 4, then one
            std::vector<std::uint8_t> x(static_cast<std::size_t>(n * eb));
            for (i64 i = 0; i < n; ++i)
              detail::store_f32(x.data(), dt, i, std::uniform_real_distribution<float>(-4, 4)(rng));
            std::vector<std::uint8_t> a(x.size() + 64, 0xff), b(x.size() + 64, 0xff);
            t->rows_fwd[mode][st](rows, len, x.data(), a.data() + offset * eb, false);
            t->rows_fwd[mode][st](rows, len, x.data(), b.data() + offset * eb, true);
            EXPECT_EQ(a, b) << "rows fwd len " << len;
            t->rows_bwd[mode][st](rows, len, x.data(), x.data(), a.data() + offset * eb, false);
            t->rows_bwd[mode][st](rows, len, x.data(), x.data(), b.data() + offset * eb, true);
            EXPECT_EQ(a, b) << "rows bwd len " << len;
          }
          // Columns: scratch or not, streamed or not. Three slices of 300 rows run two chunks at
          // a time (cols_fwd_pipelined); 2000 rows of 100 fit the scratch once but not twice;
          // 20000 rows do not fit it.
          for (auto [len, inner, slices] : {std::tuple<i64, i64, i64>{300, 37, 3}, std::tuple<i64, i64, i64>{2000, 100, 1},
                                            std::tuple<i64, i64, i64>{20000, 5, 1}}) {
            const i64 n = len * inner * slices;
            std::vector<std::uint8_t> x(static_cast<std::size_t>(n * eb));
            for (i64 i = 0; i < n; ++i)
              detail::store_f32(x.data(), dt, i, std::uniform_real_distribution<float>(-4, 4)(rng));
            std::vector<std::uint8_t> a(x.size() + 64, 0xff), b(x.size() + 64, 0xff),
                c(x.size() + 64, 0xff);
            t->cols_fwd[mode][st](len, inner, 0, inner, slices, x.data(), a.data() + offset * eb, false,
                                  scratch.data());
            t->cols_fwd[mode][st](len, inner, 0, inner, slices, x.data(), b.data() + offset * eb, true,
                                  scratch.data());
            t->cols_fwd[mode][st](len, inner, 0, inner, slices, x.data(), c.data() + offset * eb, false,
                                  nullptr);
            EXPECT_EQ(a, b) << "cols fwd len " << len;
            EXPECT_EQ(a, c) << "cols fwd without scratch, len " << len;
            // Against the generic kernels (the reference's arithmetic) within f32 rounding.
            std::vector<std::uint8_t> g(x.size() + 64, 0xff);
            softmax_kernels::kGeneric.cols_fwd[mode][st](len, inner, 0, inner, slices, x.data(), g.data() + offset * eb,
                                                         false, nullptr);
            int far = 0;
            for (i64 i = 0; i < n; ++i) {
              const double want = detail::load_f32(g.data() + offset * eb, dt, i), got = detail::load_f32(a.data() + offset * eb, dt, i);
              // f32 arithmetic's error, plus one ulp of a 16-bit result (f16 subnormals: 2^-24).
              const double ulp16 = st == act_kernels::kF32 ? 0.0 : st == act_kernels::kBF16 ? 0x1p-7 : 0x1p-10;
              const double tol = 1e-5 * (mode == 0 ? std::fabs(want) : 1.0) + ulp16 * std::fabs(want) + (ulp16 > 0 ? 0x1p-24 : 0.0);
              if (!(std::fabs(got - want) <= tol + 1e-30) && ++far <= 3) ADD_FAILURE() << "cols fwd len " << len << " element " << i << " got " << got << " want " << want;
            }
            t->cols_bwd[mode][st](len, inner * slices, 0, inner * slices, x.data(), x.data(), a.data() + offset * eb,
                                  false);
            t->cols_bwd[mode][st](len, inner * slices, 0, inner * slices, x.data(), x.data(), b.data() + offset * eb,
                                  true);
            EXPECT_EQ(a, b) << "cols bwd len " << len;
          }
        }
}

// L = sum w * y(x): backward (from y, with dy = w) against central differences of forward.
TEST(Softmax, BackwardMatchesFiniteDifferences) {
  std::mt19937 rng(59);
  for_each_isa([&](Isa) {
    Handle h;
    for (SoftmaxMode mode : kModes)
      for (int axis : {1, 2}) {
        const TensorDesc d = TensorDesc::make(DType::kF32, {2, 9, 5});
        HostTensor x(d), w(d), y(d), dx(d);
        x.fill_uniform(rng, -2.0f, 2.0f);
        w.fill_uniform(rng, -1.0f, 1.0f);
        expect_ok(softmax_forward(h, mode, axis, d, x.data(), d, y.data()));
        expect_ok(softmax_backward(h, mode, axis, d, y.data(), d, w.data(), d, dx.data()));
        const std::vector<float> xv = x.values(), wv = w.values(), dxv = dx.values();
        auto loss = [&](const std::vector<float>& v) {
          HostTensor xx(d), yy(d);
          xx.set_values(v);
          expect_ok(softmax_forward(h, mode, axis, d, xx.data(), d, yy.data()));
          const std::vector<float> yv = yy.values();
          double s = 0.0;
          for (std::size_t i = 0; i < yv.size(); ++i) s += static_cast<double>(yv[i]) * wv[i];
          return s;
        };
        const float step = 1e-2f;
        for (std::size_t i = 0; i < xv.size(); i += 3) {
          std::vector<float> p = xv, m = xv;
          p[i] += step;
          m[i] -= step;
          const double fd = (loss(p) - loss(m)) / (2.0 * step);
          EXPECT_NEAR(dxv[i], fd, 2e-3 * (1.0 + std::fabs(fd)))
              << mode_name(mode) << " axis " << axis << " element " << i;
        }
      }
  });
}

TEST(Softmax, BadArgumentsAreRejectedWithoutWriting) {
  Handle h;
  const TensorDesc d = TensorDesc::make(DType::kF32, {4, 6});
  HostTensor x(d), y(d), dy(d);
  const auto bad = StatusCode::kInvalidArgument;
  const auto sm = SoftmaxMode::kSoftmax;
  expect_rejected(bad, "softmax_forward: axis 2 is out of range for rank 2 (expected -2 to 1)", y,
                  [&] { return softmax_forward(h, sm, 2, d, x.data(), d, y.data()); });
  expect_rejected(bad, "axis -3 is out of range", y,
                  [&] { return softmax_forward(h, sm, -3, d, x.data(), d, y.data()); });
  expect_rejected(bad, "unknown softmax mode 7", y, [&] {
    return softmax_forward(h, static_cast<SoftmaxMode>(7), 0, d, x.data(), d, y.data());
  });
  const TensorDesc other = TensorDesc::make(DType::kF32, {4, 5});
  expect_rejected(bad, "y dims [4,5] differ from x dims [4,6]", y,
                  [&] { return softmax_forward(h, sm, 1, d, x.data(), other, y.data()); });
  TensorDesc neg = d;
  neg.dims[0] = -1;
  expect_rejected(bad, "x dim 0 = -1 must be >= 0", y,
                  [&] { return softmax_forward(h, sm, 1, neg, x.data(), d, y.data()); });
  TensorDesc i8 = d;
  i8.dtype = DType::kI8;
  expect_rejected(StatusCode::kUnsupported, "x has dtype i8", y,
                  [&] { return softmax_forward(h, sm, 1, i8, x.data(), i8, y.data()); });
  expect_rejected(bad, "y is null", x,
                  [&] { return softmax_forward(h, sm, 1, d, x.data(), d, nullptr); });
  expect_rejected(bad, "dy dims [4,5] differ from y dims [4,6]", y, [&] {
    return softmax_backward(h, sm, 1, d, x.data(), other, dy.data(), d, y.data());
  });
  expect_rejected(bad, "softmax_backward: dy is null", y,
                  [&] { return softmax_backward(h, sm, 1, d, x.data(), d, nullptr, d, y.data()); });
  TensorDesc half = d;
  half.dtype = DType::kF16;
  expect_rejected(bad, "dx dtype f16 differs from y dtype f32", y, [&] {
    return softmax_backward(h, sm, 1, d, x.data(), d, dy.data(), half, y.data());
  });
  TensorDesc strides = d;
  strides.strides = {6};
  expect_rejected(bad, "x has 1 strides for 2 dims", y,
                  [&] { return softmax_forward(h, sm, 1, strides, x.data(), d, y.data()); });
}

TEST(Softmax, BenchReplayLines) {
  Handle h;
  expect_ok(h.set_num_threads(2));
  const TensorDesc d = TensorDesc::make(DType::kF32, {8, 10});
  const TensorDesc nhwc = TensorDesc::make(DType::kBF16, {2, 3, 4, 5}, Layout::kNHWC);
  HostTensor x(d), y(d), xb(nhwc), yb(nhwc);
  const std::uint32_t saved = log::enabled_mask();
  log::set_enabled_mask(static_cast<std::uint32_t>(log::Category::kBench));
  ::testing::internal::CaptureStderr();
  expect_ok(softmax_forward(h, SoftmaxMode::kLogSoftmax, -1, d, x.data(), d, y.data()));
  expect_ok(softmax_backward(h, SoftmaxMode::kSoftmax, 1, nhwc, xb.data(), nhwc, xb.data(), nhwc,
                             yb.data()));
  const std::string s = ::testing::internal::GetCapturedStderr();
  log::set_enabled_mask(saved);
  EXPECT_NE(s.find("tessera bench dnn softmax --axis 1 --dims 8x10 --dtype f32 --mode log --dir "
                   "fwd --threads "),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("tessera bench dnn softmax --axis 1 --dims 2x3x4x5 --dtype bf16 --layout nhwc "
                   "--mode softmax --dir bwd"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace tessera::dnn
