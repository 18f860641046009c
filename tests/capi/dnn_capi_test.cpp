// C API of the DNN layer (tessera/c/dnn.h), part 1: the handle, the descriptor helpers,
// convolution (every algorithm and direction, post-ops, Find mode) against the C++ calls, and
// invalid arguments (status, a message naming the function and the problem, nothing written).
// Part 2 (dnn_capi_ops_test.cpp) covers pooling, activations, softmax and normalisation.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/c/dnn.h>
#include <tessera/c/status.h>
#include <tessera/dnn.hpp>

#include "dnn_capi_test_util.hpp"
#include "test_util.hpp"

extern "C" int capi_dnn_c_smoke(void);  // dnn_c_smoke.c, compiled as C

namespace dnn_capi_test {
namespace {

using tessera::testing::TempDir;
using tessera::testing::value_or_fail;

// ---- handle and descriptor helpers ----------------------------------------------------------

TEST(DnnCapiHandle, CreateDestroyAndSettings) {
  EXPECT_TRUE(invalid(tsr_dnn_create_handle(nullptr), "tsr_dnn_create_handle", "handle is null"));
  EXPECT_EQ(tsr_dnn_destroy_handle(nullptr), TSR_STATUS_OK);

  tsr_dnn_handle h = nullptr;
  ASSERT_EQ(tsr_dnn_create_handle(&h), TSR_STATUS_OK);
  int threads = -1;
  EXPECT_EQ(tsr_dnn_get_num_threads(h, &threads), TSR_STATUS_OK);
  EXPECT_EQ(threads, 0);
  EXPECT_EQ(tsr_dnn_set_num_threads(h, 3), TSR_STATUS_OK);
  EXPECT_EQ(tsr_dnn_get_num_threads(h, &threads), TSR_STATUS_OK);
  EXPECT_EQ(threads, 3);
  EXPECT_TRUE(invalid(tsr_dnn_set_num_threads(h, -2), "tsr_dnn_set_num_threads", "-2"));
  EXPECT_EQ(tsr_dnn_get_num_threads(h, &threads), TSR_STATUS_OK);
  EXPECT_EQ(threads, 3);

  const char* path = nullptr;
  EXPECT_EQ(tsr_dnn_get_tune_db(h, &path), TSR_STATUS_OK);
  EXPECT_STREQ(path, "");
  EXPECT_EQ(tsr_dnn_set_tune_db(h, "/tmp/x.sqlite"), TSR_STATUS_OK);
  EXPECT_EQ(tsr_dnn_get_tune_db(h, &path), TSR_STATUS_OK);
  EXPECT_STREQ(path, "/tmp/x.sqlite");
  EXPECT_EQ(tsr_dnn_set_tune_db(h, nullptr), TSR_STATUS_OK);
  EXPECT_EQ(tsr_dnn_get_tune_db(h, &path), TSR_STATUS_OK);
  EXPECT_STREQ(path, "");

  int use = -1;
  EXPECT_EQ(tsr_dnn_get_use_tune_db(h, &use), TSR_STATUS_OK);
  EXPECT_EQ(use, 1);
  EXPECT_EQ(tsr_dnn_set_use_tune_db(h, 0), TSR_STATUS_OK);
  EXPECT_EQ(tsr_dnn_get_use_tune_db(h, &use), TSR_STATUS_OK);
  EXPECT_EQ(use, 0);
  EXPECT_EQ(tsr_dnn_set_use_tune_db(h, 7), TSR_STATUS_OK);
  EXPECT_EQ(tsr_dnn_get_use_tune_db(h, &use), TSR_STATUS_OK);
  EXPECT_EQ(use, 1);

  EXPECT_TRUE(invalid(tsr_dnn_get_num_threads(h, nullptr), "tsr_dnn_get_num_threads",
                      "num_threads is null"));
  EXPECT_TRUE(invalid(tsr_dnn_get_tune_db(h, nullptr), "tsr_dnn_get_tune_db", "path is null"));
  EXPECT_TRUE(
      invalid(tsr_dnn_get_use_tune_db(h, nullptr), "tsr_dnn_get_use_tune_db", "use is null"));
  EXPECT_EQ(tsr_dnn_destroy_handle(h), TSR_STATUS_OK);

  EXPECT_TRUE(
      invalid(tsr_dnn_set_num_threads(nullptr, 1), "tsr_dnn_set_num_threads", "handle is null"));
  EXPECT_TRUE(invalid(tsr_dnn_get_num_threads(nullptr, &threads), "tsr_dnn_get_num_threads",
                      "handle is null"));
  EXPECT_TRUE(invalid(tsr_dnn_set_tune_db(nullptr, ""), "tsr_dnn_set_tune_db", "handle is null"));
  EXPECT_TRUE(
      invalid(tsr_dnn_get_tune_db(nullptr, &path), "tsr_dnn_get_tune_db", "handle is null"));
  EXPECT_TRUE(
      invalid(tsr_dnn_set_use_tune_db(nullptr, 1), "tsr_dnn_set_use_tune_db", "handle is null"));
  EXPECT_TRUE(
      invalid(tsr_dnn_get_use_tune_db(nullptr, &use), "tsr_dnn_get_use_tune_db", "handle is null"));
}

TEST(DnnCapiDesc, PackedDescriptorsMatchTheCppOnes) {
  const std::vector<std::vector<i64>> shapes = {
      {},           {7},           {3, 5},          {2, 3, 5},
      {2, 3, 4, 5}, {1, 16, 0, 7}, {2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6, 7, 2}};
  for (const auto& dims : shapes)
    for (dnn::Layout l : {dnn::Layout::kNCHW, dnn::Layout::kNHWC})
      for (DType t : {DType::kF32, DType::kBF16, DType::kF16, DType::kI32}) {
        tsr_tensor_desc c;
        std::memset(&c, 0x5a, sizeof c);
        ASSERT_EQ(tsr_dnn_tensor_desc_packed(static_cast<tsr_dtype>(static_cast<int>(t)),
                                             static_cast<int32_t>(dims.size()), dims.data(),
                                             static_cast<tsr_dnn_layout>(static_cast<int>(l)), &c),
                  TSR_STATUS_OK)
            << tsr_last_error_message();
        EXPECT_TRUE(same_desc(c, dnn::TensorDesc::make(t, dims, l)))
            << dnn::TensorDesc::make(t, dims, l).to_string();
      }
  tsr_tensor_desc c;
  ASSERT_EQ(tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 0, nullptr, TSR_DNN_LAYOUT_NHWC, &c),
            TSR_STATUS_OK);
  EXPECT_EQ(c.rank, 0);
}

TEST(DnnCapiDesc, PackedDescriptorRejectsBadArgumentsAndWritesNothing) {
  const i64 dims[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::string fn = "tsr_dnn_tensor_desc_packed";
  tsr_tensor_desc c, before;
  std::memset(&c, 0x5a, sizeof c);
  before = c;
  auto untouched = [&] { return std::memcmp(&c, &before, sizeof c) == 0; };
  EXPECT_TRUE(invalid(tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 9, dims, TSR_DNN_LAYOUT_NCHW, &c),
                      fn, "rank = 9 must be in 0..8"));
  EXPECT_TRUE(invalid(tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, -1, dims, TSR_DNN_LAYOUT_NCHW, &c),
                      fn, "rank = -1"));
  EXPECT_TRUE(invalid(
      tsr_dnn_tensor_desc_packed(static_cast<tsr_dtype>(99), 2, dims, TSR_DNN_LAYOUT_NCHW, &c), fn,
      "dtype = 99 is not a tsr_dtype (0 to 10)"));
  EXPECT_TRUE(
      invalid(tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 2, dims, TSR_DNN_LAYOUT_INT_RANGE_, &c), fn,
              "layout = -2147483648 is not a tsr_dnn_layout (0 to 1)"));
  EXPECT_TRUE(
      invalid(tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 2, nullptr, TSR_DNN_LAYOUT_NCHW, &c), fn,
              "dims is null"));
  const i64 neg[3] = {2, -3, 4};
  EXPECT_TRUE(invalid(tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 3, neg, TSR_DNN_LAYOUT_NCHW, &c),
                      fn, "dims[1] = -3 must be >= 0"));
  const i64 huge[3] = {i64{1} << 40, i64{1} << 40, 2};
  EXPECT_TRUE(invalid(tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 3, huge, TSR_DNN_LAYOUT_NHWC, &c),
                      fn, "overflows"));
  EXPECT_TRUE(untouched());
  EXPECT_TRUE(
      invalid(tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 2, dims, TSR_DNN_LAYOUT_NCHW, nullptr), fn,
              "desc is null"));
}

TEST(DnnCapiDesc, InitialisersGiveTheCppDefaults) {
  for (int k = 0; k <= TSR_DNN_ACT_ABS; ++k) {
    tsr_dnn_activation a;
    ASSERT_EQ(tsr_dnn_activation_init(static_cast<tsr_dnn_act_kind>(k), &a), TSR_STATUS_OK);
    const dnn::Activation want = dnn::Activation::make(static_cast<dnn::ActKind>(k));
    EXPECT_EQ(static_cast<int>(a.kind), k);
    EXPECT_EQ(a.alpha, want.alpha);
    EXPECT_EQ(a.beta, want.beta);
    EXPECT_EQ(tsr_dnn_act_name(static_cast<tsr_dnn_act_kind>(k)),
              std::string(dnn::act_name(static_cast<dnn::ActKind>(k))));
  }
  EXPECT_STREQ(tsr_dnn_act_name(TSR_DNN_ACT_GELU_TANH), "gelu_tanh");
  EXPECT_STREQ(tsr_dnn_act_name(static_cast<tsr_dnn_act_kind>(18)), "unknown activation");
  EXPECT_STREQ(tsr_dnn_conv_algo_name(TSR_DNN_CONV_ALGO_WINOGRAD_F4X3), "winograd_f4x3");
  EXPECT_STREQ(tsr_dnn_conv_algo_name(TSR_DNN_CONV_ALGO_INT_RANGE_), "unknown algorithm");
  tsr_dnn_activation a{};
  EXPECT_TRUE(invalid(tsr_dnn_activation_init(static_cast<tsr_dnn_act_kind>(18), &a),
                      "tsr_dnn_activation_init", "kind = 18 is not a tsr_dnn_act_kind (0 to 17)"));
  EXPECT_EQ(a.kind, TSR_DNN_ACT_IDENTITY);

  tsr_dnn_conv_desc c;
  ASSERT_EQ(tsr_dnn_conv_desc_init(3, &c), TSR_STATUS_OK);
  EXPECT_EQ(c.spatial_rank, 3);
  EXPECT_EQ(c.groups, 1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.stride[i], 1);
    EXPECT_EQ(c.dilation[i], 1);
    EXPECT_EQ(c.pad_begin[i], 0);
    EXPECT_EQ(c.pad_end[i], 0);
  }
  EXPECT_TRUE(invalid(tsr_dnn_conv_desc_init(4, &c), "tsr_dnn_conv_desc_init",
                      "spatial_rank = 4 must be 1, 2 or 3"));

  const i64 kernel[2] = {3, 2};
  tsr_dnn_pool_desc p;
  ASSERT_EQ(tsr_dnn_pool_desc_init(TSR_DNN_POOL_AVG_EXCLUDE_PAD, 2, kernel, &p), TSR_STATUS_OK);
  EXPECT_EQ(p.kind, TSR_DNN_POOL_AVG_EXCLUDE_PAD);
  EXPECT_EQ(p.kernel[0], 3);
  EXPECT_EQ(p.kernel[1], 2);
  EXPECT_EQ(p.stride[0], 1);
  EXPECT_EQ(p.dilation[1], 1);
  EXPECT_EQ(p.pad_end[1], 0);
  EXPECT_EQ(p.ceil_mode, 0);
  EXPECT_TRUE(invalid(tsr_dnn_pool_desc_init(static_cast<tsr_dnn_pool_kind>(3), 2, kernel, &p),
                      "tsr_dnn_pool_desc_init", "kind = 3 is not a tsr_dnn_pool_kind"));
  EXPECT_TRUE(invalid(tsr_dnn_pool_desc_init(TSR_DNN_POOL_MAX, 2, nullptr, &p),
                      "tsr_dnn_pool_desc_init", "kernel is null"));

  const tsr_tensor_desc x = to_c(dnn::TensorDesc::make(DType::kF32, {2, 3, 5, 6, 7}));
  ASSERT_EQ(tsr_dnn_pool_desc_global(TSR_DNN_POOL_MAX, &x, &p), TSR_STATUS_OK);
  EXPECT_EQ(p.spatial_rank, 3);
  EXPECT_EQ(p.kernel[0], 5);
  EXPECT_EQ(p.kernel[1], 6);
  EXPECT_EQ(p.kernel[2], 7);
  EXPECT_EQ(p.stride[2], 1);
  const tsr_tensor_desc x2 = to_c(dnn::TensorDesc::make(DType::kF32, {2, 3}));
  EXPECT_TRUE(invalid(tsr_dnn_pool_desc_global(TSR_DNN_POOL_MAX, &x2, &p),
                      "tsr_dnn_pool_desc_global", "rank 2"));

  tsr_dnn_lrn_desc l;
  ASSERT_EQ(tsr_dnn_lrn_desc_init(TSR_DNN_LRN_WITHIN_CHANNEL, &l), TSR_STATUS_OK);
  const dnn::LrnDesc ld;
  EXPECT_EQ(l.mode, TSR_DNN_LRN_WITHIN_CHANNEL);
  EXPECT_EQ(l.size, ld.size);
  EXPECT_EQ(l.alpha, ld.alpha);
  EXPECT_EQ(l.beta, ld.beta);
  EXPECT_EQ(l.k, ld.k);

  tsr_dnn_find_options o;
  ASSERT_EQ(tsr_dnn_find_options_init(&o), TSR_STATUS_OK);
  const dnn::FindOptions fo;
  EXPECT_EQ(o.min_seconds_per_algo, fo.min_seconds_per_algo);
  EXPECT_EQ(o.min_samples, fo.min_samples);
  EXPECT_EQ(o.record, 1);
  EXPECT_EQ(o.include_reference, 0);
  EXPECT_TRUE(
      invalid(tsr_dnn_find_options_init(nullptr), "tsr_dnn_find_options_init", "options is null"));
}

// ---- convolution ----------------------------------------------------------------------------

struct ConvCase {
  dnn::Layout layout = dnn::Layout::kNCHW;
  DType dtype = DType::kF32;
  i64 n = 1, c = 4, k = 4, groups = 1;
  std::vector<i64> in = {6, 6}, ker = {3, 3}, stride = {1, 1}, dil = {1, 1}, pb = {1, 1},
                   pe = {1, 1};

  dnn::ConvDesc desc() const { return {stride, dil, pb, pe, groups}; }
  tsr_dnn_conv_desc c_desc() const {
    tsr_dnn_conv_desc d;
    EXPECT_EQ(tsr_dnn_conv_desc_init(static_cast<int32_t>(in.size()), &d), TSR_STATUS_OK);
    for (std::size_t i = 0; i < in.size(); ++i) {
      d.stride[i] = stride[i];
      d.dilation[i] = dil[i];
      d.pad_begin[i] = pb[i];
      d.pad_end[i] = pe[i];
    }
    d.groups = groups;
    return d;
  }
  dnn::TensorDesc x() const {
    std::vector<i64> d = {n, c};
    d.insert(d.end(), in.begin(), in.end());
    return dnn::TensorDesc::make(dtype, d, layout);
  }
  dnn::TensorDesc w() const {
    std::vector<i64> d = {k, c / groups};
    d.insert(d.end(), ker.begin(), ker.end());
    return dnn::TensorDesc::make(dtype, d, layout);
  }
  dnn::TensorDesc y() const { return value_or_fail(dnn::conv_output_desc(desc(), x(), w())); }
  std::string name() const { return x().to_string() + " * " + w().to_string(); }
};

std::vector<ConvCase> conv_cases() {
  using L = dnn::Layout;
  std::vector<ConvCase> v;
  v.push_back({L::kNCHW, DType::kF32, 2, 8, 16, 1, {6, 7}});
  v.push_back({L::kNHWC, DType::kF32, 1, 16, 16, 1, {9, 8}});
  v.push_back({L::kNHWC, DType::kF32, 2, 6, 4, 2, {7, 5}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {0, 1}});
  v.push_back({L::kNHWC, DType::kF32, 1, 16, 16, 16, {8, 8}});
  v.push_back({L::kNCHW, DType::kF32, 1, 16, 8, 1, {5, 5}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}});
  v.push_back({L::kNCHW, DType::kF32, 2, 3, 5, 1, {11}, {3}, {2}, {1}, {1}, {1}});
  v.push_back({L::kNHWC,
               DType::kF32,
               1,
               4,
               4,
               1,
               {4, 5, 3},
               {3, 3, 3},
               {1, 1, 1},
               {1, 1, 1},
               {1, 1, 1},
               {1, 1, 1}});
  v.push_back({L::kNHWC, DType::kBF16, 1, 8, 8, 1, {6, 6}});
  v.push_back({L::kNCHW, DType::kF16, 1, 3, 4, 1, {5, 4}});
  return v;
}

constexpr int kAlgoCount = TSR_DNN_CONV_ALGO_REFERENCE + 1;

TEST(DnnCapiConv, OutputDescMatchesTheCppOne) {
  for (const ConvCase& cc : conv_cases()) {
    const tsr_tensor_desc x = to_c(cc.x()), w = to_c(cc.w());
    const tsr_dnn_conv_desc d = cc.c_desc();
    tsr_tensor_desc y;
    ASSERT_EQ(tsr_dnn_conv_output_desc(&d, &x, &w, &y), TSR_STATUS_OK) << tsr_last_error_message();
    EXPECT_TRUE(same_desc(y, cc.y())) << cc.name();
  }
}

TEST(DnnCapiConv, ForwardEqualsTheCppCallBitwiseForEveryAlgorithm) {
  CHandle ch;
  CppHandle cpp;
  for (const ConvCase& cc : conv_cases()) {
    const dnn::TensorDesc xd = cc.x(), wd = cc.w(), yd = cc.y();
    const tsr_tensor_desc xc = to_c(xd), wc = to_c(wd), yc = to_c(yd);
    const tsr_dnn_conv_desc d = cc.c_desc();
    const Bytes x = random_data(xd, 1), w = random_data(wd, 2);
    for (int a = 0; a < kAlgoCount; ++a) {
      SCOPED_TRACE(cc.name() + " algo " +
                   tsr_dnn_conv_algo_name(static_cast<tsr_dnn_conv_algo>(a)));
      Bytes y_c = nan_data(yd), y_cpp = y_c;
      const tsr_status s =
          tsr_dnn_conv_forward(ch, &d, &xc, x.data(), &wc, w.data(), &yc, y_c.data(), nullptr,
                               static_cast<tsr_dnn_conv_algo>(a));
      const tessera::Status ps = dnn::conv_forward(cpp.h, cc.desc(), xd, x.data(), wd, w.data(), yd,
                                                   y_cpp.data(), {}, static_cast<dnn::ConvAlgo>(a));
      EXPECT_TRUE(same_outcome("tsr_dnn_conv_forward", s, ps));
      if (ps.is_ok()) {
        EXPECT_TRUE(same_written(y_c, y_cpp, yd.dtype));
      }
      if (a == TSR_DNN_CONV_ALGO_AUTO || a == TSR_DNN_CONV_ALGO_REFERENCE) {
        EXPECT_TRUE(ps.is_ok());
      }
    }
  }
}

TEST(DnnCapiConv, ForwardPostOpsEqualTheCppCall) {
  CHandle ch;
  CppHandle cpp;
  const std::vector<ConvCase> cases = conv_cases();
  for (const ConvCase& cc : {cases[0], cases[1], cases[7]}) {
    const dnn::TensorDesc xd = cc.x(), wd = cc.w(), yd = cc.y();
    const tsr_tensor_desc xc = to_c(xd), wc = to_c(wd), yc = to_c(yd);
    const tsr_dnn_conv_desc d = cc.c_desc();
    const Bytes x = random_data(xd, 3), w = random_data(wd, 4), res = random_data(yd, 5);
    const std::vector<float> bias = random_floats(static_cast<std::size_t>(cc.k), 6);
    for (tsr_dnn_act_kind kind : {TSR_DNN_ACT_RELU, TSR_DNN_ACT_LEAKY_RELU, TSR_DNN_ACT_CLIP}) {
      for (bool aliased : {false, true}) {
        SCOPED_TRACE(cc.name() + " " + tsr_dnn_act_name(kind) + (aliased ? " residual = y" : ""));
        tsr_dnn_post_ops post{};
        ASSERT_EQ(tsr_dnn_activation_init(kind, &post.act), TSR_STATUS_OK);
        post.bias = bias.data();
        Bytes y_c = aliased ? res : nan_data(yd), y_cpp = y_c;
        post.residual = aliased ? y_c.data() : res.data();
        dnn::PostOps po;
        po.act = dnn::Activation::make(static_cast<dnn::ActKind>(kind));
        po.bias = bias.data();
        po.residual = aliased ? y_cpp.data() : res.data();
        const tsr_status s = tsr_dnn_conv_forward(ch, &d, &xc, x.data(), &wc, w.data(), &yc,
                                                  y_c.data(), &post, TSR_DNN_CONV_ALGO_AUTO);
        const tessera::Status ps =
            dnn::conv_forward(cpp.h, cc.desc(), xd, x.data(), wd, w.data(), yd, y_cpp.data(), po);
        ASSERT_TRUE(same_outcome("tsr_dnn_conv_forward", s, ps));
        ASSERT_TRUE(ps.is_ok()) << ps.to_string();
        EXPECT_TRUE(same_written(y_c, y_cpp, yd.dtype));
      }
    }
  }
}

TEST(DnnCapiConv, PlansEqualTheCppPlanAndConvForward) {
  CHandle ch;
  CppHandle cpp;
  for (const ConvCase& cc : conv_cases()) {
    SCOPED_TRACE(cc.name());
    const dnn::TensorDesc xd = cc.x(), wd = cc.w(), yd = cc.y();
    const tsr_tensor_desc xc = to_c(xd), wc = to_c(wd), yc = to_c(yd);
    const tsr_dnn_conv_desc d = cc.c_desc();
    const Bytes x = random_data(xd, 7), res = random_data(yd, 9);
    Bytes w = random_data(wd, 8);
    const std::vector<float> bias = random_floats(static_cast<std::size_t>(cc.k), 10);
    tsr_dnn_conv_plan plan = nullptr;
    ASSERT_EQ(tsr_dnn_conv_plan_create(ch, &d, &xc, &wc, w.data(), &yc, TSR_DNN_CONV_ALGO_AUTO, &plan),
              TSR_STATUS_OK)
        << tsr_last_error_message();
    tsr_dnn_conv_algo algo;
    ASSERT_EQ(tsr_dnn_conv_plan_algo(plan, &algo), TSR_STATUS_OK);
    tsr_dnn_post_ops post{};
    ASSERT_EQ(tsr_dnn_activation_init(TSR_DNN_ACT_RELU, &post.act), TSR_STATUS_OK);
    post.bias = bias.data();
    post.residual = res.data();
    dnn::PostOps po;
    po.act = dnn::Activation::make(dnn::ActKind::kRelu);
    po.bias = bias.data();
    po.residual = res.data();
    Bytes want = nan_data(yd), got = want;
    ASSERT_TRUE(dnn::conv_forward(cpp.h, cc.desc(), xd, x.data(), wd, w.data(), yd, want.data(), po,
                                  static_cast<dnn::ConvAlgo>(static_cast<int>(algo)))
                    .is_ok());
    std::fill(w.begin(), w.end(), std::uint8_t{0});  // the plan keeps its own copy
    ASSERT_EQ(tsr_dnn_conv_plan_run(ch, plan, x.data(), got.data(), &post), TSR_STATUS_OK)
        << tsr_last_error_message();
    EXPECT_TRUE(same_written(got, want, yd.dtype));
    const Bytes before = got;
    EXPECT_EQ(tsr_dnn_conv_plan_run(ch, plan, nullptr, got.data(), nullptr), TSR_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(tsr_dnn_conv_plan_run(ch, nullptr, x.data(), got.data(), nullptr), TSR_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(tsr_last_error_message()).find("plan is null"), std::string::npos);
    EXPECT_EQ(got, before);
    EXPECT_EQ(tsr_dnn_conv_plan_destroy(plan), TSR_STATUS_OK);
  }
  EXPECT_EQ(tsr_dnn_conv_plan_destroy(nullptr), TSR_STATUS_OK);
  tsr_dnn_conv_plan plan = nullptr;
  const ConvCase cc = conv_cases()[0];
  const tsr_tensor_desc xc = to_c(cc.x()), wc = to_c(cc.w()), yc = to_c(cc.y());
  tsr_dnn_conv_desc bad = cc.c_desc();
  bad.groups = 3;
  const Bytes w = random_data(cc.w(), 1);
  EXPECT_EQ(tsr_dnn_conv_plan_create(ch, &bad, &xc, &wc, w.data(), &yc, TSR_DNN_CONV_ALGO_AUTO, &plan),
            TSR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(tsr_dnn_conv_plan_create(ch, &bad, &xc, &wc, w.data(), &yc, TSR_DNN_CONV_ALGO_AUTO, nullptr),
            TSR_STATUS_INVALID_ARGUMENT);
}

TEST(DnnCapiConv, BackwardDataAndWeightsEqualTheCppCallsBitwise) {
  CHandle ch;
  CppHandle cpp;
  for (const ConvCase& cc : conv_cases()) {
    const dnn::TensorDesc xd = cc.x(), wd = cc.w(), yd = cc.y();
    const tsr_tensor_desc xc = to_c(xd), wc = to_c(wd), yc = to_c(yd);
    const tsr_dnn_conv_desc d = cc.c_desc();
    const Bytes x = random_data(xd, 7), w = random_data(wd, 8), dy = random_data(yd, 9);
    for (int a = 0; a < kAlgoCount; ++a) {
      const auto algo = static_cast<tsr_dnn_conv_algo>(a);
      SCOPED_TRACE(cc.name() + " algo " + tsr_dnn_conv_algo_name(algo));
      Bytes dx_c = nan_data(xd), dx_cpp = dx_c;
      tsr_status s =
          tsr_dnn_conv_backward_data(ch, &d, &wc, w.data(), &yc, dy.data(), &xc, dx_c.data(), algo);
      tessera::Status ps =
          dnn::conv_backward_data(cpp.h, cc.desc(), wd, w.data(), yd, dy.data(), xd, dx_cpp.data(),
                                  static_cast<dnn::ConvAlgo>(a));
      EXPECT_TRUE(same_outcome("tsr_dnn_conv_backward_data", s, ps));
      if (ps.is_ok()) {
        EXPECT_TRUE(same_written(dx_c, dx_cpp, xd.dtype));
      }

      Bytes dw_c = nan_data(wd), dw_cpp = dw_c;
      std::vector<float> db_c = nan_floats(static_cast<std::size_t>(cc.k)), db_cpp = db_c;
      s = tsr_dnn_conv_backward_weights(ch, &d, &xc, x.data(), &yc, dy.data(), &wc, dw_c.data(),
                                        db_c.data(), algo);
      ps = dnn::conv_backward_weights(cpp.h, cc.desc(), xd, x.data(), yd, dy.data(), wd,
                                      dw_cpp.data(), db_cpp.data(), static_cast<dnn::ConvAlgo>(a));
      EXPECT_TRUE(same_outcome("tsr_dnn_conv_backward_weights", s, ps));
      if (ps.is_ok()) {
        EXPECT_TRUE(same_written(dw_c, dw_cpp, wd.dtype));
        EXPECT_TRUE(same_written(db_c, db_cpp));
      }
      if (a == TSR_DNN_CONV_ALGO_AUTO || a == TSR_DNN_CONV_ALGO_REFERENCE) {
        EXPECT_TRUE(ps.is_ok());
      }
    }
  }
}

TEST(DnnCapiConv, FindReturnsRankedCandidatesWithReasonsAndChooseUsesThem) {
  TempDir dir;
  const std::string db = dir.file("tune.sqlite");
  CHandle ch;
  ASSERT_EQ(tsr_dnn_set_tune_db(ch, db.c_str()), TSR_STATUS_OK);
  ASSERT_EQ(tsr_dnn_set_use_tune_db(ch, 1), TSR_STATUS_OK);
  ConvCase cc{dnn::Layout::kNHWC,
              DType::kF32,
              1,
              16,
              16,
              1,
              {8, 8},
              {1, 1},
              {1, 1},
              {1, 1},
              {0, 0},
              {0, 0}};
  const dnn::TensorDesc xd = cc.x(), wd = cc.w(), yd = cc.y();
  const tsr_tensor_desc xc = to_c(xd), wc = to_c(wd), yc = to_c(yd);
  const tsr_dnn_conv_desc d = cc.c_desc();
  tsr_dnn_find_options o;
  ASSERT_EQ(tsr_dnn_find_options_init(&o), TSR_STATUS_OK);
  o.min_seconds_per_algo = 0;

  tsr_dnn_conv_candidate cand[TSR_DNN_MAX_CONV_CANDIDATES];
  std::memset(cand, 0x5a, sizeof cand);
  int32_t count = -1;
  ASSERT_EQ(tsr_dnn_find_convolution(ch, TSR_DNN_CONV_FORWARD, &d, &xc, &wc, &yc, &o, cand,
                                     TSR_DNN_MAX_CONV_CANDIDATES, &count),
            TSR_STATUS_OK)
      << tsr_last_error_message();
  ASSERT_GT(count, 1);
  EXPECT_TRUE(std::filesystem::exists(db));
  EXPECT_EQ(cand[0].accepted, 1);
  bool saw_refusal = false;
  for (int32_t i = 0; i < count; ++i) {
    const tsr_dnn_conv_candidate& c = cand[i];
    EXPECT_GE(static_cast<int>(c.algo), 1);
    EXPECT_LT(static_cast<int>(c.algo), kAlgoCount);
    EXPECT_GT(std::strlen(c.impl), 0u);
    EXPECT_LT(std::strlen(c.impl), sizeof c.impl);
    EXPECT_LT(std::strlen(c.reason), sizeof c.reason);
    if (c.accepted) {
      EXPECT_EQ(c.reason[0], '\0');
      EXPECT_GE(c.samples, o.min_samples);
      EXPECT_GE(c.spread_us, 0.0);
      if (i > 0) {
        EXPECT_EQ(cand[i - 1].accepted, 1) << "accepted candidates come first";
        EXPECT_LE(cand[i - 1].median_us, c.median_us);
      }
    } else {
      EXPECT_GT(std::strlen(c.reason), 0u) << c.impl;
      saw_refusal = true;
    }
  }
  EXPECT_TRUE(saw_refusal);  // e.g. Winograd refuses a 1x1 kernel

  // The same candidates and reasons as the C++ call (timings, and so the order of the
  // accepted ones, differ from run to run).
  CppHandle cpp;
  dnn::FindOptions fo;
  fo.min_seconds_per_algo = 0;
  fo.record = false;
  const auto found = value_or_fail(
      dnn::find_convolution(cpp.h, dnn::ConvDir::kForward, cc.desc(), xd, wd, yd, fo));
  ASSERT_EQ(static_cast<std::size_t>(count), found.size());
  for (const dnn::ConvCandidate& f : found) {
    int32_t match = 0;
    for (int32_t i = 0; i < count; ++i) {
      if (f.impl != cand[i].impl) continue;
      ++match;
      EXPECT_EQ(static_cast<int>(cand[i].algo), static_cast<int>(f.algo));
      EXPECT_EQ(cand[i].accepted != 0, f.accepted) << f.impl;
      EXPECT_EQ(std::string(cand[i].reason), f.reason.substr(0, sizeof cand[i].reason - 1));
    }
    EXPECT_EQ(match, 1) << f.impl;
  }

  // Immediate mode now uses the recorded winner.
  tsr_dnn_conv_choice choice;
  ASSERT_EQ(tsr_dnn_choose_convolution(ch, TSR_DNN_CONV_FORWARD, &d, &xc, &wc, &yc, &choice),
            TSR_STATUS_OK)
      << tsr_last_error_message();
  EXPECT_STREQ(choice.source, "tune-db");
  EXPECT_STREQ(choice.impl, cand[0].impl);
  EXPECT_EQ(choice.algo, cand[0].algo);
  ASSERT_EQ(tsr_dnn_set_use_tune_db(ch, 0), TSR_STATUS_OK);
  ASSERT_EQ(tsr_dnn_choose_convolution(ch, TSR_DNN_CONV_FORWARD, &d, &xc, &wc, &yc, &choice),
            TSR_STATUS_OK);
  EXPECT_STREQ(choice.source, "heuristic");
  const dnn::ConvChoice want =
      value_or_fail(dnn::choose_convolution(cpp.h, dnn::ConvDir::kForward, cc.desc(), xd, wd, yd));
  EXPECT_EQ(choice.impl, want.impl);

  // A smaller array receives the best candidates; capacity 0 only records.
  o.record = 0;
  ASSERT_EQ(
      tsr_dnn_find_convolution(ch, TSR_DNN_CONV_FORWARD, &d, &xc, &wc, &yc, &o, cand, 2, &count),
      TSR_STATUS_OK);
  EXPECT_EQ(count, 2);
  EXPECT_EQ(cand[0].accepted, 1);
  ASSERT_EQ(
      tsr_dnn_find_convolution(ch, TSR_DNN_CONV_FORWARD, &d, &xc, &wc, &yc, &o, nullptr, 0, &count),
      TSR_STATUS_OK);
  EXPECT_EQ(count, 0);

  // The backward directions, described by (dx, w, dy) and (x, dw, dy).
  for (tsr_dnn_conv_dir dir2 : {TSR_DNN_CONV_BACKWARD_DATA, TSR_DNN_CONV_BACKWARD_WEIGHTS}) {
    count = -1;
    ASSERT_EQ(tsr_dnn_find_convolution(ch, dir2, &d, &xc, &wc, &yc, &o, cand,
                                       TSR_DNN_MAX_CONV_CANDIDATES, &count),
              TSR_STATUS_OK)
        << tsr_last_error_message();
    EXPECT_GT(count, 0);
    EXPECT_EQ(cand[0].accepted, 1);
  }
}

// ---- invalid arguments ----------------------------------------------------------------------

// Every function that takes a handle rejects a null one before touching anything.
TEST(DnnCapiErrors, NullHandleIsRejectedByEveryFunction) {
  const dnn::TensorDesc xd = dnn::TensorDesc::make(DType::kF32, {1, 2, 4, 4});
  const tsr_tensor_desc x = to_c(xd);
  std::vector<float> buf(64, 1.0f), out(64, -7.0f);
  const std::vector<float> before = out;
  float* o = out.data();
  const float* b = buf.data();
  i64 idx[64] = {};
  tsr_dnn_conv_desc conv;
  ASSERT_EQ(tsr_dnn_conv_desc_init(2, &conv), TSR_STATUS_OK);
  tsr_dnn_pool_desc pool;
  const i64 k2[2] = {2, 2};
  ASSERT_EQ(tsr_dnn_pool_desc_init(TSR_DNN_POOL_MAX, 2, k2, &pool), TSR_STATUS_OK);
  tsr_dnn_activation act;
  ASSERT_EQ(tsr_dnn_activation_init(TSR_DNN_ACT_RELU, &act), TSR_STATUS_OK);
  tsr_dnn_lrn_desc lrn;
  ASSERT_EQ(tsr_dnn_lrn_desc_init(TSR_DNN_LRN_ACROSS_CHANNELS, &lrn), TSR_STATUS_OK);
  tsr_dnn_conv_choice choice;
  tsr_dnn_conv_candidate cand[2];
  int32_t count = 0;
  const tsr_dnn_handle n = nullptr;
  const std::vector<std::pair<const char*, std::function<tsr_status()>>> calls = {
      {"tsr_dnn_conv_forward",
       [&] {
         return tsr_dnn_conv_forward(n, &conv, &x, b, &x, b, &x, o, nullptr,
                                     TSR_DNN_CONV_ALGO_AUTO);
       }},
      {"tsr_dnn_conv_backward_data",
       [&] {
         return tsr_dnn_conv_backward_data(n, &conv, &x, b, &x, b, &x, o, TSR_DNN_CONV_ALGO_AUTO);
       }},
      {"tsr_dnn_conv_backward_weights",
       [&] {
         return tsr_dnn_conv_backward_weights(n, &conv, &x, b, &x, b, &x, o, nullptr,
                                              TSR_DNN_CONV_ALGO_AUTO);
       }},
      {"tsr_dnn_conv_plan_create",
       [&] {
         tsr_dnn_conv_plan plan = nullptr;
         return tsr_dnn_conv_plan_create(n, &conv, &x, &x, b, &x, TSR_DNN_CONV_ALGO_AUTO, &plan);
       }},
      {"tsr_dnn_conv_plan_run", [&] { return tsr_dnn_conv_plan_run(n, nullptr, b, o, nullptr); }},
      {"tsr_dnn_choose_convolution",
       [&] {
         return tsr_dnn_choose_convolution(n, TSR_DNN_CONV_FORWARD, &conv, &x, &x, &x, &choice);
       }},
      {"tsr_dnn_find_convolution",
       [&] {
         return tsr_dnn_find_convolution(n, TSR_DNN_CONV_FORWARD, &conv, &x, &x, &x, nullptr, cand,
                                         2, &count);
       }},
      {"tsr_dnn_pooling_forward",
       [&] { return tsr_dnn_pooling_forward(n, &pool, &x, b, &x, o, idx); }},
      {"tsr_dnn_pooling_backward",
       [&] { return tsr_dnn_pooling_backward(n, &pool, &x, b, idx, &x, b, &x, o); }},
      {"tsr_dnn_activation_forward",
       [&] { return tsr_dnn_activation_forward(n, &act, &x, b, &x, o); }},
      {"tsr_dnn_activation_backward",
       [&] { return tsr_dnn_activation_backward(n, &act, &x, b, &x, b, &x, o); }},
      {"tsr_dnn_prelu_forward", [&] { return tsr_dnn_prelu_forward(n, &x, b, b, 1, &x, o); }},
      {"tsr_dnn_prelu_backward",
       [&] { return tsr_dnn_prelu_backward(n, &x, b, b, 1, &x, b, &x, o, o); }},
      {"tsr_dnn_crelu_forward", [&] { return tsr_dnn_crelu_forward(n, &x, b, &x, o); }},
      {"tsr_dnn_crelu_backward", [&] { return tsr_dnn_crelu_backward(n, &x, b, &x, b, &x, o); }},
      {"tsr_dnn_softmax_forward",
       [&] { return tsr_dnn_softmax_forward(n, TSR_DNN_SOFTMAX, 1, &x, b, &x, o); }},
      {"tsr_dnn_softmax_backward",
       [&] { return tsr_dnn_softmax_backward(n, TSR_DNN_SOFTMAX, 1, &x, b, &x, b, &x, o); }},
      {"tsr_dnn_batch_norm_forward_training",
       [&] {
         return tsr_dnn_batch_norm_forward_training(n, TSR_DNN_BATCH_NORM_SPATIAL, &x, b, b, b,
                                                    1e-5, 0.1, nullptr, nullptr, o, o, &x, o);
       }},
      {"tsr_dnn_batch_norm_forward_inference",
       [&] {
         return tsr_dnn_batch_norm_forward_inference(n, TSR_DNN_BATCH_NORM_SPATIAL, &x, b, b, b, b,
                                                     b, 1e-5, &x, o);
       }},
      {"tsr_dnn_batch_norm_backward",
       [&] {
         return tsr_dnn_batch_norm_backward(n, TSR_DNN_BATCH_NORM_SPATIAL, &x, b, &x, b, b, b, b,
                                            &x, o, o, o);
       }},
      {"tsr_dnn_layer_norm_forward",
       [&] { return tsr_dnn_layer_norm_forward(n, 1, &x, b, b, b, 1e-5, &x, o, o, o); }},
      {"tsr_dnn_layer_norm_backward",
       [&] { return tsr_dnn_layer_norm_backward(n, 1, &x, b, &x, b, b, b, b, &x, o, o, o); }},
      {"tsr_dnn_group_norm_forward",
       [&] { return tsr_dnn_group_norm_forward(n, 1, &x, b, b, b, 1e-5, &x, o, o, o); }},
      {"tsr_dnn_group_norm_backward",
       [&] { return tsr_dnn_group_norm_backward(n, 1, &x, b, &x, b, b, b, b, &x, o, o, o); }},
      {"tsr_dnn_instance_norm_forward",
       [&] { return tsr_dnn_instance_norm_forward(n, &x, b, b, b, 1e-5, &x, o, o, o); }},
      {"tsr_dnn_instance_norm_backward",
       [&] { return tsr_dnn_instance_norm_backward(n, &x, b, &x, b, b, b, b, &x, o, o, o); }},
      {"tsr_dnn_lrn_forward", [&] { return tsr_dnn_lrn_forward(n, &lrn, &x, b, &x, o); }},
      {"tsr_dnn_lrn_backward", [&] { return tsr_dnn_lrn_backward(n, &lrn, &x, b, &x, b, &x, o); }},
  };
  for (const auto& [name, call] : calls) {
    EXPECT_TRUE(invalid(call(), name, "handle is null"));
    EXPECT_EQ(std::string(tsr_last_error_message()), std::string(name) + ": handle is null");
  }
  EXPECT_EQ(out, before);
  EXPECT_EQ(count, 0);
}

struct ConvBadArgs : ::testing::Test {
  CHandle h;
  ConvCase cc;
  dnn::TensorDesc xd = cc.x(), wd = cc.w(), yd = cc.y();
  tsr_tensor_desc x = to_c(xd), w = to_c(wd), y = to_c(yd);
  tsr_dnn_conv_desc conv = cc.c_desc();
  Bytes xb = random_data(xd, 41), wb = random_data(wd, 42);
  Bytes yb = nan_data(yd);
  const Bytes before = yb;

  tsr_status forward(const tsr_tensor_desc* xp, const tsr_tensor_desc* wp,
                     const tsr_tensor_desc* yp, const tsr_dnn_post_ops* post = nullptr,
                     tsr_dnn_conv_algo algo = TSR_DNN_CONV_ALGO_AUTO,
                     const tsr_dnn_conv_desc* c = nullptr) {
    return tsr_dnn_conv_forward(h, c ? c : &conv, xp, xb.data(), wp, wb.data(), yp, yb.data(), post,
                                algo);
  }
  bool untouched() const { return yb == before; }
};

TEST_F(ConvBadArgs, WhatCCannotExpressIsRejectedWithAMessage) {
  const std::string fn = "tsr_dnn_conv_forward";
  EXPECT_TRUE(invalid(forward(nullptr, &w, &y), fn, "x_desc is null"));
  EXPECT_TRUE(invalid(forward(&x, &w, nullptr), fn, "y_desc is null"));
  EXPECT_TRUE(invalid(tsr_dnn_conv_forward(h, nullptr, &x, xb.data(), &w, wb.data(), &y, yb.data(),
                                           nullptr, TSR_DNN_CONV_ALGO_AUTO),
                      fn, "conv is null"));
  tsr_tensor_desc bad = x;
  bad.rank = 9;
  EXPECT_TRUE(invalid(forward(&bad, &w, &y), fn, "x_desc->rank = 9 must be in 0..8"));
  bad.rank = -1;
  EXPECT_TRUE(invalid(forward(&x, &bad, &y), fn, "w_desc->rank = -1 must be in 0..8"));
  bad = y;
  bad.dtype = static_cast<tsr_dtype>(11);
  EXPECT_TRUE(
      invalid(forward(&x, &w, &bad), fn, "y_desc->dtype = 11 is not a tsr_dtype (0 to 10)"));
  EXPECT_TRUE(invalid(forward(&x, &w, &y, nullptr, static_cast<tsr_dnn_conv_algo>(42)), fn,
                      "algo = 42 is not a tsr_dnn_conv_algo (0 to 8)"));
  EXPECT_TRUE(invalid(forward(&x, &w, &y, nullptr, TSR_DNN_CONV_ALGO_INT_RANGE_), fn,
                      "algo = -2147483648"));
  tsr_dnn_post_ops post{};
  post.act.kind = static_cast<tsr_dnn_act_kind>(-1);
  EXPECT_TRUE(invalid(forward(&x, &w, &y, &post), fn,
                      "post->act.kind = -1 is not a tsr_dnn_act_kind (0 to 17)"));
  tsr_dnn_conv_desc c = conv;
  c.spatial_rank = 4;
  EXPECT_TRUE(invalid(forward(&x, &w, &y, nullptr, TSR_DNN_CONV_ALGO_AUTO, &c), fn,
                      "conv->spatial_rank = 4 must be 1, 2 or 3"));
  c.spatial_rank = 1;
  EXPECT_TRUE(invalid(forward(&x, &w, &y, nullptr, TSR_DNN_CONV_ALGO_AUTO, &c), fn,
                      "conv->spatial_rank = 1 but x_desc has rank 4 (2 spatial dims)"));
  EXPECT_TRUE(untouched());
}

TEST_F(ConvBadArgs, WhatCppRejectsComesBackWithItsMessage) {
  const std::string fn = "tsr_dnn_conv_forward";
  tsr_tensor_desc bad = y;
  bad.dims[3] += 1;
  EXPECT_TRUE(
      invalid(forward(&x, &w, &bad), fn, "y spatial dim 1 = 7 but the convolution gives 6"));
  // The C++ routine's own "conv_forward: " prefix is not repeated.
  EXPECT_EQ(std::string(tsr_last_error_message()),
            "tsr_dnn_conv_forward: y spatial dim 1 = 7 but the convolution gives 6");
  bad = x;
  bad.dims[2] = -1;
  EXPECT_TRUE(invalid(forward(&bad, &w, &y), fn, "must be >= 0"));
  tsr_dnn_conv_desc c = conv;
  c.groups = 3;
  EXPECT_TRUE(
      invalid(forward(&x, &w, &y, nullptr, TSR_DNN_CONV_ALGO_AUTO, &c), fn, "divisible by groups"));
  c = conv;
  c.stride[1] = 0;
  EXPECT_TRUE(invalid(forward(&x, &w, &y, nullptr, TSR_DNN_CONV_ALGO_AUTO, &c), fn,
                      "stride = [1,0]; each must be >= 1"));
  tsr_tensor_desc xi = x, wi = w, yi = y;
  xi.dtype = wi.dtype = yi.dtype = TSR_DTYPE_I32;
  EXPECT_TRUE(fails(forward(&xi, &wi, &yi), TSR_STATUS_UNSUPPORTED, fn, "supported: f32"));
  EXPECT_TRUE(fails(forward(&x, &w, &y, nullptr, TSR_DNN_CONV_ALGO_DEPTHWISE), TSR_STATUS_UNSUPPORTED, fn,
                    "depthwise"));
  EXPECT_TRUE(untouched());

  // Output descriptors and choices are not written on failure either.
  tsr_tensor_desc out;
  std::memset(&out, 0x5a, sizeof out);
  const tsr_tensor_desc out_before = out;
  c = conv;
  c.groups = 3;
  EXPECT_TRUE(
      invalid(tsr_dnn_conv_output_desc(&c, &x, &w, &out), "tsr_dnn_conv_output_desc", "groups"));
  EXPECT_TRUE(invalid(tsr_dnn_conv_output_desc(&conv, &x, &w, nullptr), "tsr_dnn_conv_output_desc",
                      "y_desc is null"));
  EXPECT_EQ(std::memcmp(&out, &out_before, sizeof out), 0);
  tsr_dnn_conv_choice choice;
  std::memset(&choice, 0x5a, sizeof choice);
  const tsr_dnn_conv_choice choice_before = choice;
  EXPECT_TRUE(invalid(
      tsr_dnn_choose_convolution(h, static_cast<tsr_dnn_conv_dir>(3), &conv, &x, &w, &y, &choice),
      "tsr_dnn_choose_convolution", "dir = 3 is not a tsr_dnn_conv_dir (0 to 2)"));
  EXPECT_TRUE(
      invalid(tsr_dnn_choose_convolution(h, TSR_DNN_CONV_FORWARD, &conv, &x, &w, &y, nullptr),
              "tsr_dnn_choose_convolution", "choice is null"));
  EXPECT_EQ(std::memcmp(&choice, &choice_before, sizeof choice), 0);
}

TEST_F(ConvBadArgs, FindWritesNothingOnError) {
  TempDir dir;
  const std::string db = dir.file("tune.sqlite");
  ASSERT_EQ(tsr_dnn_set_tune_db(h, db.c_str()), TSR_STATUS_OK);
  const std::string fn = "tsr_dnn_find_convolution";
  tsr_dnn_conv_candidate cand[4];
  std::memset(cand, 0x5a, sizeof cand);
  tsr_dnn_conv_candidate cand_before[4];
  std::memcpy(cand_before, cand, sizeof cand);
  int32_t count = -1;
  EXPECT_TRUE(invalid(tsr_dnn_find_convolution(h, static_cast<tsr_dnn_conv_dir>(-1), &conv, &x, &w,
                                               &y, nullptr, cand, 4, &count),
                      fn, "dir = -1"));
  EXPECT_TRUE(invalid(tsr_dnn_find_convolution(h, TSR_DNN_CONV_FORWARD, &conv, &x, &w, &y, nullptr,
                                               cand, -1, &count),
                      fn, "capacity = -1 must be >= 0"));
  EXPECT_TRUE(invalid(tsr_dnn_find_convolution(h, TSR_DNN_CONV_FORWARD, &conv, &x, &w, &y, nullptr,
                                               nullptr, 4, &count),
                      fn, "candidates is null"));
  EXPECT_TRUE(invalid(tsr_dnn_find_convolution(h, TSR_DNN_CONV_FORWARD, &conv, &x, &w, &y, nullptr,
                                               cand, 4, nullptr),
                      fn, "count is null"));
  tsr_dnn_find_options o;
  ASSERT_EQ(tsr_dnn_find_options_init(&o), TSR_STATUS_OK);
  o.min_samples = 0;
  EXPECT_TRUE(invalid(
      tsr_dnn_find_convolution(h, TSR_DNN_CONV_FORWARD, &conv, &x, &w, &y, &o, cand, 4, &count), fn,
      "min_samples must be >= 1"));
  tsr_tensor_desc bad = y;
  bad.dims[1] = 5;
  EXPECT_TRUE(invalid(tsr_dnn_find_convolution(h, TSR_DNN_CONV_FORWARD, &conv, &x, &w, &bad,
                                               nullptr, cand, 4, &count),
                      fn, "must start with N = 1, K = 4"));
  EXPECT_EQ(count, -1);
  EXPECT_EQ(std::memcmp(cand, cand_before, sizeof cand), 0);
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(DnnCapiHeader, CompilesAndRunsAsC) {
  EXPECT_EQ(capi_dnn_c_smoke(), 0) << tsr_last_error_message();
}

}  // namespace
}  // namespace dnn_capi_test
