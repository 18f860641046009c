// Indexing operations, cumsum and top-k against formulas written here: gather (every axis,
// scalar and 2-D indices, negatives, i32/i64), gather_elements, gather_nd with batch dims,
// scatter_elements / scatter_nd with every reduction and duplicate indices (in place too),
// one_hot, cumsum (exclusive, reverse, f16 rounded once), top_k (ties, NaN, k = 0); out-of-range
// indices fail before anything is written. The dense entries of gather, gather_elements,
// gather_nd, scatter_elements, scatter_nd, one_hot, top_k and cumsum give the references' bits
// on every ISA at 1 and 2 threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/dnn.hpp>

#include "../../src/dnn/ops/movement/move.hpp"
#include "../../src/dnn/ops/movement/ref.hpp"
#include "tensor_test_util.hpp"
#include "test_util.hpp"

namespace tessera::dnn {
namespace {

using namespace tensor_test;

constexpr DType kSizes[] = {DType::kU8, DType::kF16, DType::kF32, DType::kF64};

// An index tensor (i32 or i64, packed) holding `v`.
T index_tensor(DType t, const Idx& dims, const std::vector<i64>& v) {
  T x = make(t, dims);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (t == DType::kI32) static_cast<std::int32_t*>(x.p())[i] = static_cast<std::int32_t>(v[i]);
    else static_cast<i64*>(x.p())[i] = v[i];
  }
  return x;
}
T random(DType t, const Idx& dims, Lay lay, std::mt19937& rng) {
  T x = make(t, dims, lay);
  fill(x, rng);
  return x;
}
i64 wrap(i64 v, i64 d) { return v < 0 ? v + d : v; }
// Row-major flat position of a multi-index.
i64 flat(const Idx& dims, const Idx& idx) {
  i64 p = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) p = p * dims[i] + idx[i];
  return p;
}
i64 offset(const TensorDesc& d, const Idx& idx) {
  i64 o = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) o += idx[i] * d.strides[i];
  return o;
}

TEST(Indexing, GatherEveryAxis) {
  std::mt19937 rng(3);
  Handle h;
  const Idx xd{5, 6, 7};
  struct C {
    Idx dims;
    std::vector<i64> v;
  };
  const C idxs[] = {{{}, {-2}}, {{4}, {0, 4, -1, 2}}, {{2, 3}, {1, 1, 0, -3, 2, 3}}, {{0}, {}}};
  for (DType t : kSizes)
    for (DType it : {DType::kI32, DType::kI64})
      for (int axis : {0, 1, 2, -1})
        for (const C& c : idxs)
          for (Lay lay : {Lay::kPacked, Lay::kReversed, Lay::kGaps}) {
            const auto a = static_cast<std::size_t>(axis < 0 ? axis + 3 : axis);
            T x = random(t, xd, lay, rng), ind = index_tensor(it, c.dims, c.v);
            Idx yd(xd.begin(), xd.begin() + static_cast<long>(a));
            yd.insert(yd.end(), c.dims.begin(), c.dims.end());
            yd.insert(yd.end(), xd.begin() + static_cast<long>(a) + 1, xd.end());
            T y = make(t, yd, lay == Lay::kReversed ? Lay::kPacked : lay);
            const Status s = gather(h, axis, x.d, x.p(), ind.d, ind.p(), y.d, y.p());
            ASSERT_TRUE(s.is_ok()) << s.to_string();
            const std::size_t q = c.dims.size();
            const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
              for (std::size_t i = 0; i < a; ++i) xi[i] = yi[i];
              const Idx ii(yi.begin() + static_cast<long>(a), yi.begin() + static_cast<long>(a + q));
              xi[a] = wrap(c.v[static_cast<std::size_t>(flat(c.dims, ii))], xd[a]);
              for (std::size_t i = a + 1; i < 3; ++i) xi[i] = yi[i - 1 + q];
              return true;
            });
            expect_same(y, want, "gather axis " + std::to_string(axis) + " " + ind.d.to_string());
          }
}

TEST(Indexing, GatherElementsAndGatherNd) {
  std::mt19937 rng(5);
  Handle h;
  for (DType t : kSizes)
    for (Lay lay : {Lay::kPacked, Lay::kGaps}) {
      {  // gather_elements along axis 1 of [4, 5, 6] with indices [3, 7, 6]
        T x = random(t, {4, 5, 6}, lay, rng);
        std::vector<i64> v(3 * 7 * 6);
        std::uniform_int_distribution<i64> pick(-5, 4);
        for (i64& e : v) e = pick(rng);
        T ind = index_tensor(DType::kI64, {3, 7, 6}, v), y = make(t, {3, 7, 6}, lay);
        ASSERT_TRUE(gather_elements(h, 1, x.d, x.p(), ind.d, ind.p(), y.d, y.p()).is_ok());
        const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
          xi = yi;
          xi[1] = wrap(v[static_cast<std::size_t>(flat({3, 7, 6}, yi))], 5);
          return true;
        });
        expect_same(y, want, "gather_elements");
      }
      {  // gather_nd, batch_dims 0: pairs into [3, 4, 5] -> [2, 5]
        T x = random(t, {3, 4, 5}, lay, rng);
        const std::vector<i64> v{2, -1, 0, 1};
        T ind = index_tensor(DType::kI32, {2, 2}, v), y = make(t, {2, 5}, lay);
        ASSERT_TRUE(gather_nd(h, 0, x.d, x.p(), ind.d, ind.p(), y.d, y.p()).is_ok());
        const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
          xi = {wrap(v[static_cast<std::size_t>(2 * yi[0])], 3), wrap(v[static_cast<std::size_t>(2 * yi[0] + 1)], 4), yi[1]};
          return true;
        });
        expect_same(y, want, "gather_nd");
      }
      {  // batch_dims 1: x [3, 4, 5], indices [3, 2, 1] -> y [3, 2, 5]
        T x = random(t, {3, 4, 5}, lay, rng);
        const std::vector<i64> v{0, 3, -1, 1, 2, 2};
        T ind = index_tensor(DType::kI64, {3, 2, 1}, v), y = make(t, {3, 2, 5}, lay);
        ASSERT_TRUE(gather_nd(h, 1, x.d, x.p(), ind.d, ind.p(), y.d, y.p()).is_ok());
        const T want = expected(x, y.d, [&](const Idx& yi, Idx& xi) {
          xi = {yi[0], wrap(v[static_cast<std::size_t>(yi[0] * 2 + yi[1])], 4), yi[2]};
          return true;
        });
        expect_same(y, want, "gather_nd batch_dims 1");
      }
    }
}

// The scatter formula: y = x, then every update in row-major order combined into its place.
double combine_ref(ScatterReduce r, double a, double b) {
  switch (r) {
    case ScatterReduce::kNone: return b;
    case ScatterReduce::kAdd: return a + b;
    case ScatterReduce::kMul: return a * b;
    case ScatterReduce::kMax: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b);
    case ScatterReduce::kMin: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::min(a, b);
  }
  return b;
}

// A double as the dtype holds it (f32 rounded, i32 wrapped): scatter combines in the dtype.
double as_dtype(DType t, double w) {
  if (std::isnan(w) || std::isinf(w)) return w;
  if (t == DType::kF32) return static_cast<float>(w);
  if (t == DType::kI32) return static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int64_t>(w))));
  return w;
}

TEST(Indexing, ScatterElementsAndNdWithEveryReduction) {
  std::mt19937 rng(7);
  Handle h;
  for (DType t : {DType::kF32, DType::kF64, DType::kI32})
    for (ScatterReduce red : {ScatterReduce::kNone, ScatterReduce::kAdd, ScatterReduce::kMul, ScatterReduce::kMax, ScatterReduce::kMin})
      for (bool in_place : {false, true}) {
        const std::string what = std::string("scatter ") + std::string(scatter_reduce_name(red)) + " " + std::string(dtype_name(t)) + (in_place ? " in place" : "");
        {  // elements: axis 0 of [4, 3], updates [5, 3] with duplicate rows
          T x = random(t, {4, 3}, Lay::kPacked, rng), upd = random(t, {5, 3}, Lay::kGaps, rng);
          const std::vector<i64> v{0, 1, 2, 3, 3, 3, -1, 0, 1, 1, 1, 1, 0, 2, -4};
          T ind = index_tensor(DType::kI64, {5, 3}, v);
          T y = in_place ? x : make(t, {4, 3});
          std::vector<double> want(12);
          for (i64 i = 0; i < 12; ++i) want[static_cast<std::size_t>(i)] = value(x, i);
          for (i64 i = 0; i < 5; ++i)
            for (i64 j = 0; j < 3; ++j) {
              const i64 r = wrap(v[static_cast<std::size_t>(i * 3 + j)], 4);
              double& w = want[static_cast<std::size_t>(r * 3 + j)];
              w = as_dtype(t, combine_ref(red, w, value(upd, offset(upd.d, {i, j}))));
            }
          void* yp = in_place ? x.p() : y.p();
          ASSERT_TRUE(scatter_elements(h, 0, red, x.d, x.p(), ind.d, ind.p(), upd.d, upd.p(), y.d, yp).is_ok());
          const T& got = in_place ? x : y;
          for (i64 i = 0; i < 12; ++i) {
            const double w = want[static_cast<std::size_t>(i)];
            const double g = value(got, i);
            const bool same = (std::isnan(g) && std::isnan(w)) || g == w;
            EXPECT_TRUE(same) << what << " elements at " << i << ": got " << g << " want " << w;
          }
        }
        {  // nd: rows of [4, 5] by 1-tuples, one row twice
          T x = random(t, {4, 5}, Lay::kGaps, rng), upd = random(t, {3, 5}, Lay::kPacked, rng);
          const std::vector<i64> v{2, -4, 2};
          T ind = index_tensor(DType::kI32, {3, 1}, v);
          T y = in_place ? x : make(t, {4, 5}, Lay::kGaps);
          std::vector<double> want(20);
          for (i64 i = 0; i < 4; ++i)
            for (i64 j = 0; j < 5; ++j) want[static_cast<std::size_t>(i * 5 + j)] = value(x, offset(x.d, {i, j}));
          for (i64 u = 0; u < 3; ++u)
            for (i64 j = 0; j < 5; ++j) {
              double& w = want[static_cast<std::size_t>(wrap(v[static_cast<std::size_t>(u)], 4) * 5 + j)];
              w = as_dtype(t, combine_ref(red, w, value(upd, offset(upd.d, {u, j}))));
            }
          void* yp = in_place ? x.p() : y.p();
          ASSERT_TRUE(scatter_nd(h, red, x.d, x.p(), ind.d, ind.p(), upd.d, upd.p(), y.d, yp).is_ok());
          const T& got = in_place ? x : y;
          for (i64 i = 0; i < 4; ++i)
            for (i64 j = 0; j < 5; ++j) {
              const double w = want[static_cast<std::size_t>(i * 5 + j)];
              const double g = value(got, offset(got.d, {i, j}));
              const bool same = (std::isnan(g) && std::isnan(w)) || g == w;
              EXPECT_TRUE(same) << what << " nd at " << i << "," << j << ": got " << g << " want " << w;
            }
        }
      }
}

TEST(Indexing, OneHot) {
  Handle h;
  const std::vector<i64> v{0, 2, -1, 3, -4, 1};
  for (DType it : {DType::kI32, DType::kI64, DType::kF32})
    for (int axis : {-1, 0, 1}) {
      T ind = make(it, {2, 3});
      for (std::size_t i = 0; i < v.size(); ++i) {
        const double d = static_cast<double>(v[i]);
        detail::convert_element(DType::kF64, &d, it, ind.mem.data() + i * dtype_size(it));
      }
      Idx yd{2, 3};
      const auto a = static_cast<std::size_t>(axis < 0 ? 2 : axis);
      yd.insert(yd.begin() + static_cast<long>(a), 3);
      T y = make(DType::kF32, yd, Lay::kGaps);
      ASSERT_TRUE(one_hot(h, axis, 3, -1.0, 5.0, ind.d, ind.p(), y.d, y.p()).is_ok());
      for (i64 i = 0; i < 2; ++i)
        for (i64 j = 0; j < 3; ++j)
          for (i64 d = 0; d < 3; ++d) {
            Idx yi{i, j};
            yi.insert(yi.begin() + static_cast<long>(a), d);
            const i64 raw = v[static_cast<std::size_t>(i * 3 + j)];
            const i64 pos = raw < 0 && raw >= -3 ? raw + 3 : raw;
            EXPECT_EQ(value(y, offset(y.d, yi)), pos == d ? 5.0 : -1.0) << "one_hot axis " << axis << " index " << raw << " depth " << d;
          }
    }
}

TEST(Indexing, CumSumEveryDirection) {
  std::mt19937 rng(9);
  Handle h;
  for (DType t : {DType::kF32, DType::kF16, DType::kI32, DType::kI8})
    for (int axis : {0, 1, -1})
      for (bool exclusive : {false, true})
        for (bool reverse : {false, true}) {
          T x = make(t, {3, 40}, Lay::kGaps);
          fill(x, rng, /*plain=*/true);
          T y = make(t, {3, 40});
          ASSERT_TRUE(cumsum(h, axis, exclusive, reverse, x.d, x.p(), y.d, y.p()).is_ok());
          const auto a = static_cast<std::size_t>(axis < 0 ? 1 : axis);
          for (i64 i = 0; i < 3; ++i)
            for (i64 j = 0; j < 40; ++j) {
              const Idx yi{i, j};
              const i64 n = a == 0 ? 3 : 40, at = yi[a];
              double sum = 0;
              std::int64_t isum = 0;
              for (i64 s = 0; s < n; ++s) {
                const bool in = reverse ? (exclusive ? s > at : s >= at) : (exclusive ? s < at : s <= at);
                if (!in) continue;
                Idx xi = yi;
                xi[a] = s;
                sum += value(x, offset(x.d, xi));
                isum += static_cast<std::int64_t>(value(x, offset(x.d, xi)));
              }
              double want = sum;
              if (t == DType::kF32) want = static_cast<float>(sum);
              if (t == DType::kF16) want = f16_bits_to_f32(f32_to_f16_bits(static_cast<float>(sum)));  // sums of small values: exact in f32
              if (t == DType::kI32) want = static_cast<double>(static_cast<std::int32_t>(isum));
              if (t == DType::kI8) want = static_cast<double>(static_cast<std::int8_t>(static_cast<std::uint8_t>(isum & 0xFF)));
              EXPECT_EQ(value(y, offset(y.d, yi)), want) << "cumsum " << dtype_name(t) << " axis " << axis << " excl " << exclusive << " rev " << reverse << " at " << i << "," << j;
            }
        }
  // In place.
  T x = make(DType::kF64, {5});
  for (int i = 0; i < 5; ++i) static_cast<double*>(x.p())[i] = i + 1;
  ASSERT_TRUE(cumsum(h, 0, false, false, x.d, x.p(), x.d, x.p()).is_ok());
  EXPECT_EQ(static_cast<double*>(x.p())[4], 15.0);
}

// cumsum_dense_* (packed tensors: f32 rows eight at a time in transposed 8 x 8 blocks with a
// tail of columns, other rows interleaved four at a time, columns in blocks (16400: a tail of
// 16 past one block), rows of y streamed on AVX-512 where aligned (4112 columns: every row);
// every ISA)
// against the reference (the same values with gaps), bit for bit: both add each line in its
// order, floats in f64 rounded once. NaN and infinities included; in place too; 1 and 2 threads.
TEST(Indexing, CumSumDenseMatchesTheReferenceBitForBit) {
  std::mt19937 rng(13);
  for (DType t : {DType::kF32, DType::kF64, DType::kI32, DType::kI64})
    for (const auto& [dims, axis] : {std::pair<Idx, int>{{3, 1000, 5}, 1}, std::pair<Idx, int>{{7, 333}, 1},
                                     std::pair<Idx, int>{{17, 64}, -1}, std::pair<Idx, int>{{300, 9}, 0},
                                     std::pair<Idx, int>{{2, 5, 700}, 1}, std::pair<Idx, int>{{1}, 0},
                                     std::pair<Idx, int>{{3, 4500}, 0}, std::pair<Idx, int>{{5, 4112}, 0},
                                     std::pair<Idx, int>{{2, 16400}, 0},
                                     std::pair<Idx, int>{{20, 333}, 1}})
      for (bool exclusive : {false, true})
        for (bool reverse : {false, true}) {
          T x = make(t, dims);
          fill(x, rng);
          T xg = make(t, dims, Lay::kGaps);
          const auto xo = offsets(x.d), go = offsets(xg.d);
          const std::size_t e = dtype_size(t);
          for (std::size_t i = 0; i < xo.size(); ++i)
            std::memcpy(xg.mem.data() + static_cast<std::size_t>(go[i]) * e, x.mem.data() + static_cast<std::size_t>(xo[i]) * e, e);
          Handle h;
          T want = make(t, dims);
          ASSERT_TRUE(cumsum(h, axis, exclusive, reverse, xg.d, xg.p(), want.d, want.p()).is_ok());  // the reference
          const std::string what = std::string(dtype_name(t)) + " " + x.d.to_string() + " axis " + std::to_string(axis) +
                                   (exclusive ? " exclusive" : "") + (reverse ? " reverse" : "");
          tessera::testing::for_each_isa([&](Isa) {
            for (int threads : {1, 2}) {
              ASSERT_TRUE(h.set_num_threads(threads).is_ok());
              T y = make(t, dims);
              ASSERT_TRUE(cumsum(h, axis, exclusive, reverse, x.d, x.p(), y.d, y.p()).is_ok());
              expect_same(y, want, what);
              T inplace = x;
              ASSERT_TRUE(cumsum(h, axis, exclusive, reverse, inplace.d, inplace.p(), inplace.d, inplace.p()).is_ok());
              expect_same(inplace, want, what + " in place");
            }
          });
        }
}

TEST(Indexing, TopKOrdersTiesAndNaN) {
  std::mt19937 rng(11);
  Handle h;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType t : {DType::kF32, DType::kF64, DType::kI32, DType::kBF16})
    for (bool largest : {true, false})
      for (i64 k : {0, 1, 7, 50})
        for (int axis : {1, 0}) {
          const Idx xd = axis == 1 ? Idx{3, 50} : Idx{50, 3};
          T x = make(t, xd, Lay::kGaps);
          std::uniform_int_distribution<int> small(-6, 6);
          const auto offs = offsets(x.d);
          for (std::size_t i = 0; i < offs.size(); ++i) {
            const double v = (is_floating(t) && i % 17 == 3) ? nan : small(rng);  // ties and NaN
            detail::convert_element(DType::kF64, &v, t, x.mem.data() + offs[i] * static_cast<i64>(dtype_size(t)));
          }
          Idx od = xd;
          od[static_cast<std::size_t>(axis)] = k;
          T vals = make(t, od), idx = make(DType::kI64, od, Lay::kGaps);
          ASSERT_TRUE(top_k(h, axis, k, largest, x.d, x.p(), vals.d, vals.p(), idx.d, idx.p()).is_ok());
          for (i64 l = 0; l < 3; ++l) {
            // The line, stably sorted: NaN first (largest) or last (smallest), ties by index.
            std::vector<std::pair<double, i64>> line;
            for (i64 j = 0; j < 50; ++j) line.push_back({value(x, offset(x.d, axis == 1 ? Idx{l, j} : Idx{j, l})), j});
            std::stable_sort(line.begin(), line.end(), [&](const auto& p, const auto& q) {
              const bool np = std::isnan(p.first), nq = std::isnan(q.first);
              if (np || nq) return largest ? (np && !nq) : (!np && nq);
              return largest ? p.first > q.first : p.first < q.first;
            });
            for (i64 j = 0; j < k; ++j) {
              const Idx at = axis == 1 ? Idx{l, j} : Idx{j, l};
              const i64 gi = static_cast<const i64*>(idx.p())[offset(idx.d, at)];
              EXPECT_EQ(gi, line[static_cast<std::size_t>(j)].second) << "top_k " << dtype_name(t) << " largest " << largest << " k " << k << " line " << l << " rank " << j;
              const double gv = value(vals, offset(vals.d, at)), wv = line[static_cast<std::size_t>(j)].first;
              EXPECT_TRUE((std::isnan(gv) && std::isnan(wv)) || gv == wv) << gv << " vs " << wv;
            }
          }
        }
}

// ---- the dense entries against the references ------------------------------------------------
// A copy of x with gaps between its elements: every dense entry refuses it, so a call on it
// runs the reference.
T with_gaps(const T& x) {
  T g = make(x.d.dtype, x.d.dims, Lay::kGaps);
  const auto xo = offsets(x.d), go = offsets(g.d);
  const std::size_t e = dtype_size(x.d.dtype);
  for (std::size_t i = 0; i < xo.size(); ++i)
    std::memcpy(g.mem.data() + static_cast<std::size_t>(go[i]) * e, x.mem.data() + static_cast<std::size_t>(xo[i]) * e, e);
  return g;
}
// Indices uniform over [lo, hi), i32 or i64, packed.
T uniform_indices(DType t, const Idx& dims, i64 lo, i64 hi, std::mt19937& rng) {
  std::uniform_int_distribution<i64> pick(lo, hi - 1);
  std::vector<i64> v(static_cast<std::size_t>(make(t, dims).d.numel()));
  for (i64& x : v) x = pick(rng);
  return index_tensor(t, dims, v);
}
// fn(h) on every ISA at 1 and 2 threads.
template <typename Fn>
void on_every_path(Handle& h, Fn&& fn) {
  tessera::testing::for_each_isa([&](Isa) {
    for (int threads : {1, 2}) {
      ASSERT_TRUE(h.set_num_threads(threads).is_ok());
      fn();
    }
  });
}

TEST(Indexing, DenseGathersMatchTheReferenceBitForBit) {
  std::mt19937 rng(21);
  struct Case {
    Idx x;
    int axis;
    Idx idx;
  };
  // Rows gathered a chunk at a time and in pieces (17000 > 16384), whole rows of 3 and 40,
  // scalar indices.
  const Case gathers[] = {{{7, 300}, 1, {5, 70}}, {{40, 9, 3}, 1, {11}}, {{20000}, 0, {17000}}, {{5, 6}, 0, {}},
                          {{30, 40}, -2, {2, 25}}};
  // Along a row (m above and below n) and across rows (columns of one row from random rows);
  // then indices smaller than x off the axis (line by line: along rows, across rows, a middle
  // axis with both other dims smaller).
  const Case elements[] = {{{6, 300}, 1, {6, 500}},     {{50, 70}, 0, {90, 70}},    {{4, 5, 33}, 1, {4, 8, 33}},
                           {{3, 2, 20000}, 2, {3, 2, 900}}, {{6, 300}, 1, {4, 500}},    {{50, 70}, 0, {90, 33}},
                           {{4, 5, 33}, 1, {3, 8, 20}},    {{3, 2, 200}, 2, {2, 1, 50}},   {{4, 6, 7, 9}, 1, {3, 8, 5, 4}}};
  Handle h;
  for (DType t : kSizes)
    for (DType it : {DType::kI32, DType::kI64}) {
      for (const Case& c : gathers) {
        T x = random(t, c.x, Lay::kPacked, rng);
        const int a = c.axis < 0 ? c.axis + static_cast<int>(c.x.size()) : c.axis;
        const i64 n = c.x[static_cast<std::size_t>(a)];
        T idx = uniform_indices(it, c.idx, -n, n, rng);
        Idx yd(c.x.begin(), c.x.begin() + a);
        yd.insert(yd.end(), c.idx.begin(), c.idx.end());
        yd.insert(yd.end(), c.x.begin() + a + 1, c.x.end());
        T want = make(t, yd), xg = with_gaps(x);
        ASSERT_TRUE(gather(h, c.axis, xg.d, xg.p(), idx.d, idx.p(), want.d, want.p()).is_ok());
        on_every_path(h, [&] {
          T y = make(t, yd);
          ASSERT_TRUE(gather(h, c.axis, x.d, x.p(), idx.d, idx.p(), y.d, y.p()).is_ok());
          expect_same(y, want, "gather " + x.d.to_string() + " axis " + std::to_string(c.axis) + " " + idx.d.to_string());
        });
      }
      for (const Case& c : elements) {
        T x = random(t, c.x, Lay::kPacked, rng);
        const i64 n = c.x[static_cast<std::size_t>(c.axis)];
        T idx = uniform_indices(it, c.idx, -n, n, rng);
        T want = make(t, c.idx), xg = with_gaps(x);
        ASSERT_TRUE(gather_elements(h, c.axis, xg.d, xg.p(), idx.d, idx.p(), want.d, want.p()).is_ok());
        on_every_path(h, [&] {
          T y = make(t, c.idx);
          ASSERT_TRUE(gather_elements(h, c.axis, x.d, x.p(), idx.d, idx.p(), y.d, y.p()).is_ok());
          expect_same(y, want, "gather_elements " + x.d.to_string() + " axis " + std::to_string(c.axis) + " " + idx.d.to_string());
        });
      }
    }
}

TEST(Indexing, DenseScatterMatchesTheReferenceBitForBit) {
  std::mt19937 rng(22);
  struct Case {
    Idx x;
    int axis;
    Idx idx;
  };
  // Rows; columns in two blocks at 2 threads (300x200 along axis 0); 9 rows hit 500 times each
  // (duplicates: their order decides the result); a middle axis; then indices smaller than x off
  // the axis (y = x first, updates through a column table).
  const Case cases[] = {{{6, 300}, 1, {6, 200}},       {{300, 200}, 0, {400, 200}}, {{9, 250}, 0, {500, 250}},
                        {{3, 40, 129}, 1, {3, 60, 129}}, {{6, 300}, 1, {4, 200}},     {{9, 250}, 0, {500, 150}},
                        {{3, 40, 129}, 1, {2, 60, 100}}, {{4, 6, 7, 9}, 1, {3, 8, 5, 4}}};
  Handle h;
  for (DType t : {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kU8, DType::kF16})
    for (ScatterReduce r : {ScatterReduce::kNone, ScatterReduce::kAdd, ScatterReduce::kMul, ScatterReduce::kMax, ScatterReduce::kMin})
      for (const Case& c : cases) {
        const i64 n = c.x[static_cast<std::size_t>(c.axis)];
        T x = random(t, c.x, Lay::kPacked, rng), u = random(t, c.idx, Lay::kPacked, rng);
        T idx = uniform_indices(DType::kI64, c.idx, -n, n, rng);
        T want = make(t, c.x), xg = with_gaps(x);
        ASSERT_TRUE(scatter_elements(h, c.axis, r, xg.d, xg.p(), idx.d, idx.p(), u.d, u.p(), want.d, want.p()).is_ok());
        const std::string what = "scatter_elements " + std::string(scatter_reduce_name(r)) + " " + x.d.to_string() + " axis " +
                                 std::to_string(c.axis);
        on_every_path(h, [&] {
          T y = make(t, c.x);
          ASSERT_TRUE(scatter_elements(h, c.axis, r, x.d, x.p(), idx.d, idx.p(), u.d, u.p(), y.d, y.p()).is_ok());
          expect_same(y, want, what);
          T inplace = x;
          ASSERT_TRUE(scatter_elements(h, c.axis, r, inplace.d, inplace.p(), idx.d, idx.p(), u.d, u.p(), inplace.d, inplace.p()).is_ok());
          expect_same(inplace, want, what + " in place");
        });
      }
}

// Index tuples (the last dim of `dims`): entry j uniform over [-lims[j], lims[j]).
T tuple_indices(DType t, const Idx& dims, const Idx& lims, std::mt19937& rng) {
  std::vector<i64> v(static_cast<std::size_t>(make(t, dims).d.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const i64 lim = lims[i % lims.size()];
    v[i] = std::uniform_int_distribution<i64>(-lim, lim - 1)(rng);
  }
  return index_tensor(t, dims, v);
}

TEST(Indexing, DenseNdMatchesTheReferenceBitForBit) {
  std::mt19937 rng(26);
  struct Case {
    Idx x;
    int batch;
    Idx idx;
  };
  // Single elements in chunks (20000 > 16384 tuples), slabs of 7 and of 300, a batch dim, one
  // tuple.
  const Case gathers[] = {{{30, 40}, 0, {20000, 2}}, {{9, 8, 7}, 0, {3, 5, 2}}, {{6, 300}, 0, {50, 1}},
                          {{4, 10, 12}, 1, {4, 6, 1}}, {{4, 10, 12}, 1, {4, 2, 3, 2}}, {{5, 5}, 0, {1, 2}}};
  // Single elements hit many times each (duplicates: their order decides the result), split by
  // ranges of y at 2 threads; slabs of 300 split by columns; a few tuples on one thread.
  const Case scatters[] = {{{30, 40}, 0, {20000, 2}}, {{10, 300}, 0, {400, 1}}, {{9, 8, 7}, 0, {3, 5, 2}}};
  Handle h;
  for (DType t : kSizes)
    for (DType it : {DType::kI32, DType::kI64})
      for (const Case& c : gathers) {
        T x = random(t, c.x, Lay::kPacked, rng);
        const auto k = static_cast<std::size_t>(c.idx.back()), b = static_cast<std::size_t>(c.batch);
        T idx = tuple_indices(it, c.idx, Idx(c.x.begin() + static_cast<long>(b), c.x.begin() + static_cast<long>(b + k)), rng);
        Idx yd(c.idx.begin(), c.idx.end() - 1);
        yd.insert(yd.end(), c.x.begin() + static_cast<long>(b + k), c.x.end());
        T want = make(t, yd), xg = with_gaps(x);
        ASSERT_TRUE(gather_nd(h, c.batch, xg.d, xg.p(), idx.d, idx.p(), want.d, want.p()).is_ok());
        on_every_path(h, [&] {
          T y = make(t, yd);
          ASSERT_TRUE(gather_nd(h, c.batch, x.d, x.p(), idx.d, idx.p(), y.d, y.p()).is_ok());
          expect_same(y, want, "gather_nd " + x.d.to_string() + " batch " + std::to_string(c.batch) + " " + idx.d.to_string());
        });
      }
  for (DType t : {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kU8, DType::kF16})
    for (ScatterReduce r : {ScatterReduce::kNone, ScatterReduce::kAdd, ScatterReduce::kMul, ScatterReduce::kMax, ScatterReduce::kMin})
      for (const Case& c : scatters) {
        const auto k = static_cast<std::size_t>(c.idx.back());
        Idx ud(c.idx.begin(), c.idx.end() - 1);
        ud.insert(ud.end(), c.x.begin() + static_cast<long>(k), c.x.end());
        T x = random(t, c.x, Lay::kPacked, rng), u = random(t, ud, Lay::kPacked, rng);
        T idx = tuple_indices(DType::kI64, c.idx, Idx(c.x.begin(), c.x.begin() + static_cast<long>(k)), rng);
        T want = make(t, c.x), ug = with_gaps(u);
        ASSERT_TRUE(scatter_nd(h, r, x.d, x.p(), idx.d, idx.p(), ug.d, ug.p(), want.d, want.p()).is_ok());
        const std::string what = "scatter_nd " + std::string(scatter_reduce_name(r)) + " " + x.d.to_string() + " " + idx.d.to_string();
        on_every_path(h, [&] {
          T y = make(t, c.x);
          ASSERT_TRUE(scatter_nd(h, r, x.d, x.p(), idx.d, idx.p(), u.d, u.p(), y.d, y.p()).is_ok());
          expect_same(y, want, what);
          T inplace = x;
          ASSERT_TRUE(scatter_nd(h, r, inplace.d, inplace.p(), idx.d, idx.p(), u.d, u.p(), inplace.d, inplace.p()).is_ok());
          expect_same(inplace, want, what + " in place");
        });
      }
}

// Empty tensors on the dense entries: nothing to do, or (no updates) y = x.
TEST(Indexing, DenseEntriesTakeEmptyTensors) {
  std::mt19937 rng(25);
  Handle h;
  for (const auto& [xd, idxd] : {std::pair<Idx, Idx>{{3, 0}, {2, 0}}, std::pair<Idx, Idx>{{0, 4}, {0, 4}},
                                 std::pair<Idx, Idx>{{3, 4}, {0, 4}}}) {
    T x = random(DType::kF32, xd, Lay::kPacked, rng), u = random(DType::kF32, idxd, Lay::kPacked, rng);
    T idx = index_tensor(DType::kI64, idxd, {});
    T y = make(DType::kF32, xd), g = make(DType::kF32, idxd);
    ASSERT_TRUE(scatter_elements(h, 0, ScatterReduce::kAdd, x.d, x.p(), idx.d, idx.p(), u.d, u.p(), y.d, y.p()).is_ok());
    expect_same(y, x, "scatter_elements with no updates " + x.d.to_string());
    if (xd[0] > 0) {
      ASSERT_TRUE(gather_elements(h, 0, x.d, x.p(), idx.d, idx.p(), g.d, g.p()).is_ok());
      Idx vd = xd;
      vd[0] = 0;
      T v = make(DType::kF32, vd), i = make(DType::kI64, vd);
      ASSERT_TRUE(top_k(h, 0, 0, true, x.d, x.p(), v.d, v.p(), i.d, i.p()).is_ok());
    }
  }
}

TEST(Indexing, DenseOneHotMatchesTheReference) {
  std::mt19937 rng(23);
  Handle h;
  for (DType t : kSizes)
    for (DType it : {DType::kI32, DType::kI64})
      for (i64 depth : {1, 5, 40})
        for (int axis : {-1, 0, 1})
          for (const auto& [off, on] : {std::pair{0.0, 1.0}, std::pair{-2.5, 3.0}}) {
            // Indices beyond [-depth, depth) give a row of `off`.
            T idx = uniform_indices(it, {7, 33}, -depth - 2, depth + 2, rng);
            Idx yd = {7, 33};
            yd.insert(yd.begin() + (axis < 0 ? 2 : axis), depth);
            T want = make(t, yd), ig = with_gaps(idx);
            ASSERT_TRUE(one_hot(h, axis, depth, off, on, ig.d, ig.p(), want.d, want.p()).is_ok());
            on_every_path(h, [&] {
              T y = make(t, yd);
              ASSERT_TRUE(one_hot(h, axis, depth, off, on, idx.d, idx.p(), y.d, y.p()).is_ok());
              expect_same(y, want, "one_hot " + y.d.to_string() + " axis " + std::to_string(axis) + " off " + std::to_string(off));
            });
          }
}

TEST(Indexing, DenseTopKMatchesTheReferenceBitForBit) {
  std::mt19937 rng(24);
  struct Case {
    Idx x;
    int axis;
  };
  // Rows longer than a vector group with a tail; columns in blocks of 128 f32 with a tail of
  // 2 (130 wide); a middle axis; a short line.
  const Case cases[] = {{{5, 300}, 1}, {{300, 130}, 0}, {{3, 40, 7}, 1}, {{4, 3}, 1}};
  Handle h;
  for (DType t : {DType::kF32, DType::kF64, DType::kI32, DType::kI64})
    for (bool largest : {true, false})
      for (const Case& c : cases) {
        const i64 n = c.x[static_cast<std::size_t>(c.axis)];
        for (i64 k : {i64{1}, i64{3}, i64{17}, n}) {
          if (k > n) continue;
          // Small integers (many ties), NaN, infinities and zeros of both signs (fill's mix).
          T x = random(t, c.x, Lay::kPacked, rng);
          Idx od = c.x;
          od[static_cast<std::size_t>(c.axis)] = k;
          T wv = make(t, od), wi = make(DType::kI64, od), xg = with_gaps(x);
          ASSERT_TRUE(top_k(h, c.axis, k, largest, xg.d, xg.p(), wv.d, wv.p(), wi.d, wi.p()).is_ok());
          const std::string what = "top_k " + x.d.to_string() + " axis " + std::to_string(c.axis) + " k " + std::to_string(k) +
                                   (largest ? " largest" : " smallest");
          on_every_path(h, [&] {
            T v = make(t, od), i = make(DType::kI64, od);
            ASSERT_TRUE(top_k(h, c.axis, k, largest, x.d, x.p(), v.d, v.p(), i.d, i.p()).is_ok());
            expect_same(v, wv, what + " values");
            expect_same(i, wi, what + " indices");
          });
        }
      }
}

TEST(Indexing, BadIndicesFailBeforeWriting) {
  Handle h;
  auto expect_err = [](const Status& s, const std::string& needle) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  };
  T x = make(DType::kF32, {4, 3});
  for (int i = 0; i < 12; ++i) static_cast<float*>(x.p())[i] = static_cast<float>(i);
  T ind = index_tensor(DType::kI64, {3}, {0, 4, 1}), y = make(DType::kF32, {3, 3});
  expect_err(gather(h, 0, x.d, x.p(), ind.d, ind.p(), y.d, y.p()), "index 4 at position 1 is out of range for a dim of 4");
  for (unsigned char b : y.mem) ASSERT_EQ(b, 0xA5) << "y was written";
  T neg = index_tensor(DType::kI32, {3}, {0, -5, 1});
  expect_err(gather(h, 0, x.d, x.p(), neg.d, neg.p(), y.d, y.p()), "index -5");
  T fidx = make(DType::kF32, {3});
  expect_err(gather(h, 0, x.d, x.p(), fidx.d, fidx.p(), y.d, y.p()), "must be i32 or i64");
  T upd = make(DType::kF32, {3, 3}), ind2 = index_tensor(DType::kI64, {3, 3}, {0, 0, 0, 9, 0, 0, 0, 0, 0}), ys = make(DType::kF32, {4, 3});
  expect_err(scatter_elements(h, 0, ScatterReduce::kAdd, x.d, x.p(), ind2.d, ind2.p(), upd.d, upd.p(), ys.d, ys.p()), "index 9");
  for (unsigned char b : ys.mem) ASSERT_EQ(b, 0xA5) << "scatter's y was written";
  // A bad index deep in long packed indices (past the first block checked), and in strided ones.
  std::vector<i64> many(10000, 1);
  many[9000] = -7;
  T long_idx = index_tensor(DType::kI32, {10000}, many), ylong = make(DType::kF32, {10000, 3});
  expect_err(gather(h, 0, x.d, x.p(), long_idx.d, long_idx.p(), ylong.d, ylong.p()), "index -7 at position 9000");
  for (unsigned char b : ylong.mem) ASSERT_EQ(b, 0xA5) << "y was written";
  // The vector check on every ISA: the extremes of i64 (no wrap lets them through), and a dim of
  // 0 (every index is out of range).
  tessera::testing::for_each_isa([&](Isa) {
    for (const i64 v : {std::numeric_limits<i64>::min(), std::numeric_limits<i64>::max(), i64{-5}, i64{4}}) {
      std::vector<i64> w(10000, -4);
      w[7777] = v;
      T wide_idx = index_tensor(DType::kI64, {10000}, w);
      expect_err(gather(h, 0, x.d, x.p(), wide_idx.d, wide_idx.p(), ylong.d, ylong.p()), "at position 7777");
    }
    T empty_x = make(DType::kF32, {0, 3});
    expect_err(gather(h, 0, empty_x.d, empty_x.p(), long_idx.d, long_idx.p(), ylong.d, ylong.p()), "at position 0");
  });
  for (unsigned char b : ylong.mem) ASSERT_EQ(b, 0xA5) << "y was written";
  T gap_idx = make(DType::kI64, {3}, Lay::kGaps);
  for (i64 i = 0; i < 3; ++i) static_cast<i64*>(gap_idx.p())[i * gap_idx.d.strides[0]] = i == 2 ? 4 : 0;
  expect_err(gather(h, 0, x.d, x.p(), gap_idx.d, gap_idx.p(), y.d, y.p()), "index 4 at position 2");
  T nd_idx = index_tensor(DType::kI64, {2, 3}, {0, 0, 0, 0, 0, 0});
  expect_err(gather_nd(h, 0, x.d, x.p(), nd_idx.d, nd_idx.p(), y.d, y.p()), "tuples' length 3");
  T vals = make(DType::kF32, {4, 4}), ids = make(DType::kI64, {4, 4});
  expect_err(top_k(h, 1, 4, true, x.d, x.p(), vals.d, vals.p(), ids.d, ids.p()), "k 4 must be in [0, 3]");
  expect_err(one_hot(h, 3, 2, 0, 1, ind.d, ind.p(), y.d, y.p()), "axis 3 is out of range");
}

}  // namespace
}  // namespace tessera::dnn

namespace tessera::dnn {
namespace {

using namespace tensor_test;

T from_values(DType t, const Idx& dims, const std::vector<double>& v) {
  T x = make(t, dims);
  for (std::size_t i = 0; i < v.size(); ++i) detail::convert_element(DType::kF64, &v[i], t, x.mem.data() + i * dtype_size(t));
  return x;
}

// ONNX's published examples (onnx/backend/test/case/node/resize.py), through the library entry
// (resize_separable) and the reference (resize_ref).
Status resize_by(bool reference, Handle& h, const ResizeParams& p, const T& x, T& y) {
  if (!reference) return resize(h, p, x.d, x.p(), y.d, y.p());
  std::vector<double> scales;
  for (std::size_t d = 0; d < x.d.dims.size(); ++d)
    scales.push_back(p.scales.empty() ? static_cast<double>(y.d.dims[d]) / static_cast<double>(x.d.dims[d]) : p.scales[d]);
  ref::resize(p, scales, x.d, x.p(), y.d, y.p());
  return Status::ok();
}

TEST(Resize, OnnxExamples) {
  Handle h;
  for (bool reference : {false, true}) {
  SCOPED_TRACE(reference ? "resize_ref" : "resize_separable");
  {  // resize_upsample_scales_nearest: half_pixel, round_prefer_floor, scales [1, 1, 2, 3]
    T x = from_values(DType::kF32, {1, 1, 2, 2}, {1, 2, 3, 4}), y = make(DType::kF32, {1, 1, 4, 6});
    ResizeParams p;
    p.scales = {1, 1, 2, 3};
    ASSERT_TRUE(resize_by(reference, h, p, x, y).is_ok());
    const std::vector<double> want = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(value(y, static_cast<i64>(i)), want[i]) << i;
  }
  {  // resize_upsample_scales_linear: half_pixel, scales [1, 1, 2, 2]
    T x = from_values(DType::kF32, {1, 1, 2, 2}, {1, 2, 3, 4}), y = make(DType::kF32, {1, 1, 4, 4});
    ResizeParams p;
    p.mode = ResizeMode::kLinear;
    p.scales = {1, 1, 2, 2};
    ASSERT_TRUE(resize_by(reference, h, p, x, y).is_ok());
    const std::vector<double> want = {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4};
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(value(y, static_cast<i64>(i)), want[i]) << i;
  }
  {  // resize_upsample_scales_linear_align_corners
    T x = from_values(DType::kF32, {1, 1, 2, 2}, {1, 2, 3, 4}), y = make(DType::kF32, {1, 1, 4, 4});
    ResizeParams p;
    p.mode = ResizeMode::kLinear;
    p.coord = ResizeCoord::kAlignCorners;
    ASSERT_TRUE(resize_by(reference, h, p, x, y).is_ok());
    const double third = 1.0 / 3, two = 2.0 / 3;
    const std::vector<double> want = {1, 1 + third, 1 + two, 2, 1 + two, 2, 2 + third, 2 + two,
                                      2 + third, 2 + two, 3, 3 + third, 3, 3 + third, 3 + two, 4};
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(value(y, static_cast<i64>(i)), want[i], 1e-6) << i;
  }
  }
}

// The separable passes against the library's reference (per output element, the tensor product
// of every dim's taps in f64): linear and cubic in every coordinate mode, exclude_outside,
// strided x and y, f32/f64/bf16; nearest in every nearest mode, also on i32.
TEST(Resize, SeparableMatchesTheReference) {
  std::mt19937 rng(31);
  Handle h;
  struct Shape {
    Idx x, y;
  };
  for (const Shape& sh : {Shape{{2, 3, 5, 7}, {2, 3, 9, 4}}, Shape{{3, 6, 4}, {5, 2, 4}}, Shape{{2, 1, 3, 4, 2}, {1, 3, 5, 2, 3}}})
  for (DType t : {DType::kF32, DType::kF64, DType::kBF16, DType::kI32})
    for (ResizeMode mode : {ResizeMode::kNearest, ResizeMode::kLinear, ResizeMode::kCubic})
      for (ResizeCoord coord : {ResizeCoord::kHalfPixel, ResizeCoord::kHalfPixelSymmetric, ResizeCoord::kPytorchHalfPixel,
                                ResizeCoord::kAlignCorners, ResizeCoord::kAsymmetric})
        for (int variant = 0; variant < 4; ++variant) {
          if (t == DType::kI32 && mode != ResizeMode::kNearest) continue;
          ResizeParams p;
          p.mode = mode;
          p.coord = coord;
          p.nearest = static_cast<ResizeNearest>(variant);
          p.exclude_outside = variant % 2 == 1;
          T x = make(t, sh.x, Lay::kGaps);
          fill(x, rng, /*plain=*/true);
          T y = make(t, sh.y, Lay::kGaps);
          const std::string what = std::string("resize ") + std::string(resize_mode_name(mode)) + " " + std::string(resize_coord_name(coord)) + " variant " + std::to_string(variant) + " " + std::string(dtype_name(t)) + " " + x.d.to_string() + " -> " + y.d.to_string();
          ASSERT_TRUE(resize(h, p, x.d, x.p(), y.d, y.p()).is_ok()) << what;
          T want = make(t, sh.y, Lay::kGaps);
          std::vector<double> scales;
          for (std::size_t d = 0; d < sh.x.size(); ++d) scales.push_back(static_cast<double>(sh.y[d]) / static_cast<double>(sh.x[d]));
          ref::resize(p, scales, x.d, x.p(), want.d, want.p());
          int bad = 0;
          Idx i(sh.y.size(), 0);
          for (i64 e = 0; e < y.d.numel(); ++e) {
            const double w = value(want, offset(want.d, i)), got = value(y, offset(y.d, i));
            const double tol = mode == ResizeMode::kNearest ? 0 : t == DType::kBF16 ? 0x1p-7 * (std::fabs(w) + 1) : t == DType::kF32 ? 1e-5 : 1e-12;
            if (!(std::fabs(got - w) <= tol) && ++bad <= 3) ADD_FAILURE() << what << " at element " << e << ": got " << got << " want " << w;
            for (std::size_t k = i.size(); k-- > 0;) {  // the next index, last dim fastest
              if (++i[k] < sh.y[k]) break;
              i[k] = 0;
            }
          }
        }
}

TEST(Resize, BadArguments) {
  Handle h;
  T x = make(DType::kI32, {1, 1, 2, 2}), y = make(DType::kI32, {1, 1, 4, 4});
  ResizeParams p;
  p.mode = ResizeMode::kLinear;
  EXPECT_EQ(resize(h, p, x.d, x.p(), y.d, y.p()).code(), StatusCode::kUnsupported);
  T xf = make(DType::kF32, {1, 1, 2, 2}), yf = make(DType::kF32, {1, 1, 4, 5});
  p.scales = {1, 1, 2, 2};
  const Status s = resize(h, p, xf.d, xf.p(), yf.d, yf.p());
  EXPECT_NE(s.message().find("scaled by"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tessera::dnn
