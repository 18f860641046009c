// C API of the DNN layer, part 2: pooling, activations, softmax and normalisation through C
// against the same C++ calls (same status; the same bytes in every output, each element written
// over a NaN fill), and their argument checks.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/c/dnn.h>
#include <tessera/c/status.h>
#include <tessera/dnn.hpp>

#include "dnn_capi_test_util.hpp"
#include "test_util.hpp"

namespace dnn_capi_test {
namespace {

using tessera::testing::value_or_fail;

// ---- pooling --------------------------------------------------------------------------------

TEST(DnnCapiPooling, ForwardBackwardAndOutputDescEqualTheCppCalls) {
  CHandle ch;
  CppHandle cpp;
  struct Case {
    dnn::Layout layout;
    DType dtype;
    tsr_dnn_pool_kind kind;
    std::vector<i64> dims, kernel, stride, pad;
    bool ceil;
  };
  using L = dnn::Layout;
  const Case cases[] = {
      {L::kNCHW, DType::kF32, TSR_DNN_POOL_MAX, {2, 5, 9, 8}, {3, 3}, {2, 2}, {1, 1}, true},
      {L::kNHWC,
       DType::kF32,
       TSR_DNN_POOL_AVG_EXCLUDE_PAD,
       {2, 17, 7, 6},
       {3, 2},
       {2, 1},
       {1, 0},
       false},
      {L::kNHWC,
       DType::kBF16,
       TSR_DNN_POOL_AVG_INCLUDE_PAD,
       {1, 16, 6, 6},
       {2, 2},
       {2, 2},
       {0, 0},
       false},
      {L::kNCHW, DType::kF16, TSR_DNN_POOL_MAX, {1, 3, 11}, {3}, {2}, {1}, false},
  };
  for (const Case& t : cases) {
    const dnn::TensorDesc xd = dnn::TensorDesc::make(t.dtype, t.dims, t.layout);
    const tsr_tensor_desc xc = to_c(xd);
    const int sr = static_cast<int>(t.kernel.size());
    tsr_dnn_pool_desc p;
    ASSERT_EQ(tsr_dnn_pool_desc_init(t.kind, sr, t.kernel.data(), &p), TSR_STATUS_OK);
    dnn::PoolDesc pd;
    pd.kind = static_cast<dnn::PoolKind>(t.kind);
    pd.kernel = t.kernel;
    pd.stride = t.stride;
    pd.pad_begin = pd.pad_end = t.pad;
    pd.ceil_mode = t.ceil;
    for (int i = 0; i < sr; ++i) {
      p.stride[i] = t.stride[static_cast<std::size_t>(i)];
      p.pad_begin[i] = p.pad_end[i] = t.pad[static_cast<std::size_t>(i)];
    }
    p.ceil_mode = t.ceil;
    SCOPED_TRACE(xd.to_string() + " kind " + std::to_string(t.kind));

    tsr_tensor_desc yc;
    ASSERT_EQ(tsr_dnn_pooling_output_desc(&p, &xc, &yc), TSR_STATUS_OK) << tsr_last_error_message();
    const dnn::TensorDesc yd = value_or_fail(dnn::pooling_output_desc(pd, xd));
    EXPECT_TRUE(same_desc(yc, yd));

    const Bytes x = random_data(xd, 11), dy = random_data(yd, 12);
    const bool max = t.kind == TSR_DNN_POOL_MAX;
    Bytes y_c = nan_data(yd), y_cpp = y_c;
    std::vector<i64> idx_c(elements(yd), -1), idx_cpp = idx_c;
    tsr_status s = tsr_dnn_pooling_forward(ch, &p, &xc, x.data(), &yc, y_c.data(),
                                           max ? idx_c.data() : nullptr);
    tessera::Status ps = dnn::pooling_forward(cpp.h, pd, xd, x.data(), yd, y_cpp.data(),
                                              max ? idx_cpp.data() : nullptr);
    ASSERT_TRUE(same_outcome("tsr_dnn_pooling_forward", s, ps));
    ASSERT_TRUE(ps.is_ok()) << ps.to_string();
    EXPECT_TRUE(same_written(y_c, y_cpp, yd.dtype));
    EXPECT_EQ(idx_c, idx_cpp);
    if (max) {
      EXPECT_EQ(std::count(idx_c.begin(), idx_c.end(), -1), 0);
    }

    for (bool with_indices : {false, true}) {
      if (with_indices && !max) continue;
      Bytes dx_c = nan_data(xd), dx_cpp = dx_c;
      s = tsr_dnn_pooling_backward(ch, &p, &xc, with_indices ? nullptr : x.data(),
                                   with_indices ? idx_c.data() : nullptr, &yc, dy.data(), &xc,
                                   dx_c.data());
      ps = dnn::pooling_backward(cpp.h, pd, xd, with_indices ? nullptr : x.data(),
                                 with_indices ? idx_cpp.data() : nullptr, yd, dy.data(), xd,
                                 dx_cpp.data());
      ASSERT_TRUE(same_outcome("tsr_dnn_pooling_backward", s, ps));
      ASSERT_TRUE(ps.is_ok()) << ps.to_string();
      EXPECT_TRUE(same_written(dx_c, dx_cpp, xd.dtype));
    }
  }

  // Global pooling through the C descriptor equals the C++ one.
  const dnn::TensorDesc xd = dnn::TensorDesc::make(DType::kF32, {2, 7, 5, 3}, L::kNHWC);
  const tsr_tensor_desc xc = to_c(xd);
  tsr_dnn_pool_desc g;
  ASSERT_EQ(tsr_dnn_pool_desc_global(TSR_DNN_POOL_AVG_INCLUDE_PAD, &xc, &g), TSR_STATUS_OK);
  const dnn::PoolDesc gd = dnn::PoolDesc::global(dnn::PoolKind::kAvgIncludePad, xd);
  const dnn::TensorDesc yd = value_or_fail(dnn::pooling_output_desc(gd, xd));
  const tsr_tensor_desc yc = to_c(yd);
  const Bytes x = random_data(xd, 13);
  Bytes y_c = nan_data(yd), y_cpp = y_c;
  ASSERT_EQ(tsr_dnn_pooling_forward(ch, &g, &xc, x.data(), &yc, y_c.data(), nullptr), TSR_STATUS_OK)
      << tsr_last_error_message();
  ASSERT_TRUE(dnn::pooling_forward(cpp.h, gd, xd, x.data(), yd, y_cpp.data()).is_ok());
  EXPECT_TRUE(same_written(y_c, y_cpp, DType::kF32));
}

// ---- activations ----------------------------------------------------------------------------

TEST(DnnCapiActivation, EveryKindForwardAndBackwardEqualsTheCppCall) {
  CHandle ch;
  CppHandle cpp;
  for (DType t : {DType::kF32, DType::kBF16}) {
    const dnn::TensorDesc xd = dnn::TensorDesc::make(t, {2, 3, 5, 7});
    const tsr_tensor_desc xc = to_c(xd);
    const Bytes x = random_data(xd, 21, -3.0f, 3.0f), dy = random_data(xd, 22);
    for (int k = 0; k <= TSR_DNN_ACT_ABS; ++k) {
      const auto kind = static_cast<tsr_dnn_act_kind>(k);
      SCOPED_TRACE(std::string(tsr_dnn_act_name(kind)) + " " + xd.to_string());
      tsr_dnn_activation act;
      ASSERT_EQ(tsr_dnn_activation_init(kind, &act), TSR_STATUS_OK);
      const dnn::Activation a = dnn::Activation::make(static_cast<dnn::ActKind>(k));
      Bytes y_c = nan_data(xd), y_cpp = y_c;
      tsr_status s = tsr_dnn_activation_forward(ch, &act, &xc, x.data(), &xc, y_c.data());
      tessera::Status ps = dnn::activation_forward(cpp.h, a, xd, x.data(), xd, y_cpp.data());
      ASSERT_TRUE(same_outcome("tsr_dnn_activation_forward", s, ps));
      ASSERT_TRUE(ps.is_ok()) << ps.to_string();
      EXPECT_TRUE(same_written(y_c, y_cpp, t));

      Bytes dx_c = nan_data(xd), dx_cpp = dx_c;
      s = tsr_dnn_activation_backward(ch, &act, &xc, x.data(), &xc, dy.data(), &xc, dx_c.data());
      ps = dnn::activation_backward(cpp.h, a, xd, x.data(), xd, dy.data(), xd, dx_cpp.data());
      ASSERT_TRUE(same_outcome("tsr_dnn_activation_backward", s, ps));
      ASSERT_TRUE(ps.is_ok()) << ps.to_string();
      EXPECT_TRUE(same_written(dx_c, dx_cpp, t));
    }
  }
}

TEST(DnnCapiActivation, PreluAndCreluEqualTheCppCalls) {
  CHandle ch;
  CppHandle cpp;
  const dnn::TensorDesc xd = dnn::TensorDesc::make(DType::kF32, {2, 5, 4, 3}, dnn::Layout::kNHWC);
  const tsr_tensor_desc xc = to_c(xd);
  const Bytes x = random_data(xd, 31), dy = random_data(xd, 32);
  const std::vector<float> slope = random_floats(5, 33, 0.0f, 0.5f);
  for (i64 count : {i64{5}, i64{1}}) {
    SCOPED_TRACE("slope_count " + std::to_string(count));
    Bytes y_c = nan_data(xd), y_cpp = y_c;
    tsr_status s = tsr_dnn_prelu_forward(ch, &xc, x.data(), slope.data(), count, &xc, y_c.data());
    tessera::Status ps =
        dnn::prelu_forward(cpp.h, xd, x.data(), slope.data(), count, xd, y_cpp.data());
    ASSERT_TRUE(same_outcome("tsr_dnn_prelu_forward", s, ps));
    ASSERT_TRUE(ps.is_ok()) << ps.to_string();
    EXPECT_TRUE(same_written(y_c, y_cpp, DType::kF32));

    Bytes dx_c = nan_data(xd), dx_cpp = dx_c;
    std::vector<float> ds_c = nan_floats(static_cast<std::size_t>(count)), ds_cpp = ds_c;
    s = tsr_dnn_prelu_backward(ch, &xc, x.data(), slope.data(), count, &xc, dy.data(), &xc,
                               dx_c.data(), ds_c.data());
    ps = dnn::prelu_backward(cpp.h, xd, x.data(), slope.data(), count, xd, dy.data(), xd,
                             dx_cpp.data(), ds_cpp.data());
    ASSERT_TRUE(same_outcome("tsr_dnn_prelu_backward", s, ps));
    ASSERT_TRUE(ps.is_ok()) << ps.to_string();
    EXPECT_TRUE(same_written(dx_c, dx_cpp, DType::kF32));
    EXPECT_TRUE(same_written(ds_c, ds_cpp));
  }

  const dnn::TensorDesc yd = dnn::TensorDesc::make(DType::kF32, {2, 10, 4, 3}, dnn::Layout::kNHWC);
  const tsr_tensor_desc yc = to_c(yd);
  Bytes y_c = nan_data(yd), y_cpp = y_c;
  tsr_status s = tsr_dnn_crelu_forward(ch, &xc, x.data(), &yc, y_c.data());
  tessera::Status ps = dnn::crelu_forward(cpp.h, xd, x.data(), yd, y_cpp.data());
  ASSERT_TRUE(same_outcome("tsr_dnn_crelu_forward", s, ps));
  ASSERT_TRUE(ps.is_ok()) << ps.to_string();
  EXPECT_TRUE(same_written(y_c, y_cpp, DType::kF32));
  const Bytes dy2 = random_data(yd, 34);
  Bytes dx_c = nan_data(xd), dx_cpp = dx_c;
  s = tsr_dnn_crelu_backward(ch, &xc, x.data(), &yc, dy2.data(), &xc, dx_c.data());
  ps = dnn::crelu_backward(cpp.h, xd, x.data(), yd, dy2.data(), xd, dx_cpp.data());
  ASSERT_TRUE(same_outcome("tsr_dnn_crelu_backward", s, ps));
  ASSERT_TRUE(ps.is_ok()) << ps.to_string();
  EXPECT_TRUE(same_written(dx_c, dx_cpp, DType::kF32));
}

// ---- softmax --------------------------------------------------------------------------------

TEST(DnnCapiSoftmax, ForwardAndBackwardEqualTheCppCalls) {
  CHandle ch;
  CppHandle cpp;
  for (DType t : {DType::kF32, DType::kBF16}) {
    const dnn::TensorDesc xd = dnn::TensorDesc::make(t, {3, 17, 4, 5}, dnn::Layout::kNHWC);
    const tsr_tensor_desc xc = to_c(xd);
    const Bytes x = random_data(xd, 61, -4.0f, 4.0f), dy = random_data(xd, 62);
    for (tsr_dnn_softmax_mode mode : {TSR_DNN_SOFTMAX, TSR_DNN_LOG_SOFTMAX}) {
      for (int axis : {1, -1, 0}) {
        SCOPED_TRACE(xd.to_string() + " mode " + std::to_string(mode) + " axis " +
                     std::to_string(axis));
        const auto m = static_cast<dnn::SoftmaxMode>(mode);
        Bytes y_c = nan_data(xd), y_cpp = y_c;
        tsr_status s = tsr_dnn_softmax_forward(ch, mode, axis, &xc, x.data(), &xc, y_c.data());
        tessera::Status ps = dnn::softmax_forward(cpp.h, m, axis, xd, x.data(), xd, y_cpp.data());
        ASSERT_TRUE(same_outcome("tsr_dnn_softmax_forward", s, ps));
        ASSERT_TRUE(ps.is_ok()) << ps.to_string();
        EXPECT_TRUE(same_written(y_c, y_cpp, t));

        Bytes dx_c = nan_data(xd), dx_cpp = dx_c;
        s = tsr_dnn_softmax_backward(ch, mode, axis, &xc, y_c.data(), &xc, dy.data(), &xc,
                                     dx_c.data());
        ps = dnn::softmax_backward(cpp.h, m, axis, xd, y_cpp.data(), xd, dy.data(), xd,
                                   dx_cpp.data());
        ASSERT_TRUE(same_outcome("tsr_dnn_softmax_backward", s, ps));
        ASSERT_TRUE(ps.is_ok()) << ps.to_string();
        EXPECT_TRUE(same_written(dx_c, dx_cpp, t));
      }
    }
  }
}

// ---- normalisation --------------------------------------------------------------------------

TEST(DnnCapiNorm, BatchNormEqualsTheCppCalls) {
  CHandle ch;
  CppHandle cpp;
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (tsr_dnn_batch_norm_mode mode :
         {TSR_DNN_BATCH_NORM_SPATIAL, TSR_DNN_BATCH_NORM_PER_ACTIVATION}) {
      const dnn::TensorDesc xd = dnn::TensorDesc::make(t, {3, 5, 4, 3}, dnn::Layout::kNHWC);
      const tsr_tensor_desc xc = to_c(xd);
      SCOPED_TRACE(xd.to_string() + " mode " + std::to_string(mode));
      const auto m = static_cast<dnn::BatchNormMode>(mode);
      const std::size_t np = mode == TSR_DNN_BATCH_NORM_SPATIAL ? 5 : 60;
      const Bytes x = random_data(xd, 71), dy = random_data(xd, 72);
      const std::vector<float> scale = random_floats(np, 73, 0.5f, 1.5f),
                               bias = random_floats(np, 74);
      std::vector<float> rm_c = random_floats(np, 75), rv_c = random_floats(np, 76, 0.5f, 2.0f);
      std::vector<float> rm_cpp = rm_c, rv_cpp = rv_c;
      std::vector<float> sm_c = nan_floats(np), si_c = nan_floats(np);
      std::vector<float> sm_cpp = sm_c, si_cpp = si_c;
      Bytes y_c = nan_data(xd), y_cpp = y_c;
      tsr_status s = tsr_dnn_batch_norm_forward_training(
          ch, mode, &xc, x.data(), scale.data(), bias.data(), 1e-5, 0.1, rm_c.data(), rv_c.data(),
          sm_c.data(), si_c.data(), &xc, y_c.data());
      tessera::Status ps = dnn::batch_norm_forward_training(
          cpp.h, m, xd, x.data(), scale.data(), bias.data(), 1e-5, 0.1, rm_cpp.data(),
          rv_cpp.data(), sm_cpp.data(), si_cpp.data(), xd, y_cpp.data());
      ASSERT_TRUE(same_outcome("tsr_dnn_batch_norm_forward_training", s, ps));
      ASSERT_TRUE(ps.is_ok()) << ps.to_string();
      EXPECT_TRUE(same_written(y_c, y_cpp, t));
      EXPECT_TRUE(same_written(rm_c, rm_cpp));
      EXPECT_TRUE(same_written(rv_c, rv_cpp));
      EXPECT_TRUE(same_written(sm_c, sm_cpp));
      EXPECT_TRUE(same_written(si_c, si_cpp));

      y_c = nan_data(xd), y_cpp = y_c;
      s = tsr_dnn_batch_norm_forward_inference(ch, mode, &xc, x.data(), scale.data(), bias.data(),
                                               rm_c.data(), rv_c.data(), 1e-5, &xc, y_c.data());
      ps = dnn::batch_norm_forward_inference(cpp.h, m, xd, x.data(), scale.data(), bias.data(),
                                             rm_cpp.data(), rv_cpp.data(), 1e-5, xd, y_cpp.data());
      ASSERT_TRUE(same_outcome("tsr_dnn_batch_norm_forward_inference", s, ps));
      ASSERT_TRUE(ps.is_ok()) << ps.to_string();
      EXPECT_TRUE(same_written(y_c, y_cpp, t));

      Bytes dx_c = nan_data(xd), dx_cpp = dx_c;
      std::vector<float> ds_c = nan_floats(np), db_c = nan_floats(np);
      std::vector<float> ds_cpp = ds_c, db_cpp = db_c;
      s = tsr_dnn_batch_norm_backward(ch, mode, &xc, x.data(), &xc, dy.data(), scale.data(),
                                      sm_c.data(), si_c.data(), &xc, dx_c.data(), ds_c.data(),
                                      db_c.data());
      ps = dnn::batch_norm_backward(cpp.h, m, xd, x.data(), xd, dy.data(), scale.data(),
                                    sm_cpp.data(), si_cpp.data(), xd, dx_cpp.data(), ds_cpp.data(),
                                    db_cpp.data());
      ASSERT_TRUE(same_outcome("tsr_dnn_batch_norm_backward", s, ps));
      ASSERT_TRUE(ps.is_ok()) << ps.to_string();
      EXPECT_TRUE(same_written(dx_c, dx_cpp, t));
      EXPECT_TRUE(same_written(ds_c, ds_cpp));
      EXPECT_TRUE(same_written(db_c, db_cpp));
    }
  }
}

// Layer, group and instance norm share a shape: statistics per row, parameters per channel
// (or per normalised element for layer norm).
TEST(DnnCapiNorm, LayerGroupAndInstanceNormEqualTheCppCalls) {
  CHandle ch;
  CppHandle cpp;
  const dnn::TensorDesc xd = dnn::TensorDesc::make(DType::kF32, {2, 6, 5, 3});
  const tsr_tensor_desc xc = to_c(xd);
  const Bytes x = random_data(xd, 81), dy = random_data(xd, 82);
  struct Family {
    const char* fwd_name;
    const char* bwd_name;
    std::size_t params, stats;
    std::function<tsr_status(const float*, const float*, Bytes&, float*, float*)> c_fwd;
    std::function<tessera::Status(const float*, const float*, Bytes&, float*, float*)> cpp_fwd;
    std::function<tsr_status(const float*, const float*, const float*, Bytes&, float*, float*)>
        c_bwd;
    std::function<tessera::Status(const float*, const float*, const float*, Bytes&, float*, float*)>
        cpp_bwd;
  };
  const int axis = 2;
  const i64 groups = 3;
  const std::vector<Family> families = {
      {"tsr_dnn_layer_norm_forward", "tsr_dnn_layer_norm_backward", 15, 12,
       [&](const float* sc, const float* bi, Bytes& y, float* mean, float* inv) {
         return tsr_dnn_layer_norm_forward(ch, axis, &xc, x.data(), sc, bi, 1e-5, &xc, y.data(),
                                           mean, inv);
       },
       [&](const float* sc, const float* bi, Bytes& y, float* mean, float* inv) {
         return dnn::layer_norm_forward(cpp.h, axis, xd, x.data(), sc, bi, 1e-5, xd, y.data(), mean,
                                        inv);
       },
       [&](const float* sc, const float* mean, const float* inv, Bytes& dx, float* ds, float* db) {
         return tsr_dnn_layer_norm_backward(ch, axis, &xc, x.data(), &xc, dy.data(), sc, mean, inv,
                                            &xc, dx.data(), ds, db);
       },
       [&](const float* sc, const float* mean, const float* inv, Bytes& dx, float* ds, float* db) {
         return dnn::layer_norm_backward(cpp.h, axis, xd, x.data(), xd, dy.data(), sc, mean, inv,
                                         xd, dx.data(), ds, db);
       }},
      {"tsr_dnn_group_norm_forward", "tsr_dnn_group_norm_backward", 6, 6,
       [&](const float* sc, const float* bi, Bytes& y, float* mean, float* inv) {
         return tsr_dnn_group_norm_forward(ch, groups, &xc, x.data(), sc, bi, 1e-5, &xc, y.data(),
                                           mean, inv);
       },
       [&](const float* sc, const float* bi, Bytes& y, float* mean, float* inv) {
         return dnn::group_norm_forward(cpp.h, groups, xd, x.data(), sc, bi, 1e-5, xd, y.data(),
                                        mean, inv);
       },
       [&](const float* sc, const float* mean, const float* inv, Bytes& dx, float* ds, float* db) {
         return tsr_dnn_group_norm_backward(ch, groups, &xc, x.data(), &xc, dy.data(), sc, mean,
                                            inv, &xc, dx.data(), ds, db);
       },
       [&](const float* sc, const float* mean, const float* inv, Bytes& dx, float* ds, float* db) {
         return dnn::group_norm_backward(cpp.h, groups, xd, x.data(), xd, dy.data(), sc, mean, inv,
                                         xd, dx.data(), ds, db);
       }},
      {"tsr_dnn_instance_norm_forward", "tsr_dnn_instance_norm_backward", 6, 12,
       [&](const float* sc, const float* bi, Bytes& y, float* mean, float* inv) {
         return tsr_dnn_instance_norm_forward(ch, &xc, x.data(), sc, bi, 1e-5, &xc, y.data(), mean,
                                              inv);
       },
       [&](const float* sc, const float* bi, Bytes& y, float* mean, float* inv) {
         return dnn::instance_norm_forward(cpp.h, xd, x.data(), sc, bi, 1e-5, xd, y.data(), mean,
                                           inv);
       },
       [&](const float* sc, const float* mean, const float* inv, Bytes& dx, float* ds, float* db) {
         return tsr_dnn_instance_norm_backward(ch, &xc, x.data(), &xc, dy.data(), sc, mean, inv,
                                               &xc, dx.data(), ds, db);
       },
       [&](const float* sc, const float* mean, const float* inv, Bytes& dx, float* ds, float* db) {
         return dnn::instance_norm_backward(cpp.h, xd, x.data(), xd, dy.data(), sc, mean, inv, xd,
                                            dx.data(), ds, db);
       }},
  };
  for (const Family& f : families) {
    SCOPED_TRACE(f.fwd_name);
    const std::vector<float> scale = random_floats(f.params, 83, 0.5f, 1.5f),
                             bias = random_floats(f.params, 84);
    Bytes y_c = nan_data(xd), y_cpp = y_c;
    std::vector<float> mean_c = nan_floats(f.stats), inv_c = nan_floats(f.stats);
    std::vector<float> mean_cpp = mean_c, inv_cpp = inv_c;
    tsr_status s = f.c_fwd(scale.data(), bias.data(), y_c, mean_c.data(), inv_c.data());
    tessera::Status ps =
        f.cpp_fwd(scale.data(), bias.data(), y_cpp, mean_cpp.data(), inv_cpp.data());
    ASSERT_TRUE(same_outcome(f.fwd_name, s, ps));
    ASSERT_TRUE(ps.is_ok()) << ps.to_string();
    EXPECT_TRUE(same_written(y_c, y_cpp, DType::kF32));
    EXPECT_TRUE(same_written(mean_c, mean_cpp));
    EXPECT_TRUE(same_written(inv_c, inv_cpp));

    Bytes dx_c = nan_data(xd), dx_cpp = dx_c;
    std::vector<float> ds_c = nan_floats(f.params), db_c = nan_floats(f.params);
    std::vector<float> ds_cpp = ds_c, db_cpp = db_c;
    s = f.c_bwd(scale.data(), mean_c.data(), inv_c.data(), dx_c, ds_c.data(), db_c.data());
    ps = f.cpp_bwd(scale.data(), mean_cpp.data(), inv_cpp.data(), dx_cpp, ds_cpp.data(),
                   db_cpp.data());
    ASSERT_TRUE(same_outcome(f.bwd_name, s, ps));
    ASSERT_TRUE(ps.is_ok()) << ps.to_string();
    EXPECT_TRUE(same_written(dx_c, dx_cpp, DType::kF32));
    EXPECT_TRUE(same_written(ds_c, ds_cpp));
    EXPECT_TRUE(same_written(db_c, db_cpp));
  }
}

TEST(DnnCapiNorm, LrnEqualsTheCppCalls) {
  CHandle ch;
  CppHandle cpp;
  const dnn::TensorDesc xd = dnn::TensorDesc::make(DType::kF32, {2, 7, 5, 4}, dnn::Layout::kNHWC);
  const tsr_tensor_desc xc = to_c(xd);
  const Bytes x = random_data(xd, 91), dy = random_data(xd, 92);
  for (tsr_dnn_lrn_mode mode : {TSR_DNN_LRN_ACROSS_CHANNELS, TSR_DNN_LRN_WITHIN_CHANNEL}) {
    SCOPED_TRACE("mode " + std::to_string(mode));
    tsr_dnn_lrn_desc l;
    ASSERT_EQ(tsr_dnn_lrn_desc_init(mode, &l), TSR_STATUS_OK);
    l.size = 3;
    l.alpha = 0.5;
    dnn::LrnDesc ld;
    ld.mode = static_cast<dnn::LrnMode>(mode);
    ld.size = 3;
    ld.alpha = 0.5;
    Bytes y_c = nan_data(xd), y_cpp = y_c;
    tsr_status s = tsr_dnn_lrn_forward(ch, &l, &xc, x.data(), &xc, y_c.data());
    tessera::Status ps = dnn::lrn_forward(cpp.h, ld, xd, x.data(), xd, y_cpp.data());
    ASSERT_TRUE(same_outcome("tsr_dnn_lrn_forward", s, ps));
    ASSERT_TRUE(ps.is_ok()) << ps.to_string();
    EXPECT_TRUE(same_written(y_c, y_cpp, DType::kF32));

    Bytes dx_c = nan_data(xd), dx_cpp = dx_c;
    s = tsr_dnn_lrn_backward(ch, &l, &xc, x.data(), &xc, dy.data(), &xc, dx_c.data());
    ps = dnn::lrn_backward(cpp.h, ld, xd, x.data(), xd, dy.data(), xd, dx_cpp.data());
    ASSERT_TRUE(same_outcome("tsr_dnn_lrn_backward", s, ps));
    ASSERT_TRUE(ps.is_ok()) << ps.to_string();
    EXPECT_TRUE(same_written(dx_c, dx_cpp, DType::kF32));
  }
}

// ---- invalid arguments ----------------------------------------------------------------------

TEST(DnnCapiErrors, PoolingAndActivationArgumentsAreChecked) {
  CHandle h;
  const dnn::TensorDesc xd = dnn::TensorDesc::make(DType::kF32, {1, 2, 4, 4});
  const tsr_tensor_desc x = to_c(xd);
  const Bytes xb = random_data(xd, 51);
  Bytes yb = nan_data(xd);
  const Bytes before = yb;

  tsr_dnn_pool_desc p;
  const i64 k[2] = {2, 2};
  ASSERT_EQ(tsr_dnn_pool_desc_init(TSR_DNN_POOL_MAX, 2, k, &p), TSR_STATUS_OK);
  tsr_tensor_desc y;
  ASSERT_EQ(tsr_dnn_pooling_output_desc(&p, &x, &y), TSR_STATUS_OK);
  tsr_dnn_pool_desc bad = p;
  bad.kind = static_cast<tsr_dnn_pool_kind>(7);
  EXPECT_TRUE(invalid(tsr_dnn_pooling_forward(h, &bad, &x, xb.data(), &y, yb.data(), nullptr),
                      "tsr_dnn_pooling_forward", "pool->kind = 7 is not a tsr_dnn_pool_kind"));
  bad = p;
  bad.spatial_rank = 3;
  EXPECT_TRUE(invalid(tsr_dnn_pooling_forward(h, &bad, &x, xb.data(), &y, yb.data(), nullptr),
                      "tsr_dnn_pooling_forward", "pool->spatial_rank = 3 but x_desc has rank 4"));
  bad = p;
  bad.kernel[0] = 9;
  EXPECT_TRUE(invalid(tsr_dnn_pooling_forward(h, &bad, &x, xb.data(), &y, yb.data(), nullptr),
                      "tsr_dnn_pooling_forward", "larger than the padded input"));
  EXPECT_TRUE(invalid(tsr_dnn_pooling_forward(h, nullptr, &x, xb.data(), &y, yb.data(), nullptr),
                      "tsr_dnn_pooling_forward", "pool is null"));
  EXPECT_TRUE(invalid(
      tsr_dnn_pooling_backward(h, &p, &x, xb.data(), nullptr, nullptr, xb.data(), &x, yb.data()),
      "tsr_dnn_pooling_backward", "dy_desc is null"));
  tsr_tensor_desc out;
  std::memset(&out, 0x5a, sizeof out);
  const tsr_tensor_desc out_before = out;
  EXPECT_TRUE(invalid(tsr_dnn_pooling_output_desc(&bad, &x, &out), "tsr_dnn_pooling_output_desc",
                      "larger than the padded input"));
  EXPECT_EQ(std::memcmp(&out, &out_before, sizeof out), 0);

  tsr_dnn_activation act;
  ASSERT_EQ(tsr_dnn_activation_init(TSR_DNN_ACT_ELU, &act), TSR_STATUS_OK);
  const std::string fn = "tsr_dnn_activation_forward";
  EXPECT_TRUE(invalid(tsr_dnn_activation_forward(h, nullptr, &x, xb.data(), &x, yb.data()), fn,
                      "act is null"));
  tsr_dnn_activation bad_act = act;
  bad_act.kind = TSR_DNN_ACT_INT_RANGE_;
  EXPECT_TRUE(invalid(tsr_dnn_activation_forward(h, &bad_act, &x, xb.data(), &x, yb.data()), fn,
                      "act->kind = -2147483648 is not a tsr_dnn_act_kind"));
  tsr_tensor_desc wide = x;
  wide.dims[3] = 5;
  EXPECT_TRUE(invalid(tsr_dnn_activation_forward(h, &act, &x, xb.data(), &wide, yb.data()), fn,
                      "y dims [1,2,4,5] differ from x dims"));
  tsr_tensor_desc deep = x;
  deep.rank = 9;
  EXPECT_TRUE(invalid(tsr_dnn_activation_forward(h, &act, &deep, xb.data(), &x, yb.data()), fn,
                      "x_desc->rank = 9 must be in 0..8"));
  EXPECT_TRUE(invalid(tsr_dnn_prelu_forward(h, &x, xb.data(), nullptr, 2, &x, yb.data()),
                      "tsr_dnn_prelu_forward", "slope is null"));
  EXPECT_TRUE(invalid(tsr_dnn_crelu_forward(h, &x, xb.data(), &x, yb.data()),
                      "tsr_dnn_crelu_forward", "dim 1 doubled"));
  EXPECT_EQ(yb, before);
}

TEST(DnnCapiErrors, SoftmaxAndNormArgumentsAreChecked) {
  CHandle h;
  const dnn::TensorDesc xd = dnn::TensorDesc::make(DType::kF32, {2, 3, 4, 4});
  const tsr_tensor_desc x = to_c(xd);
  const Bytes xb = random_data(xd, 101);
  Bytes yb = nan_data(xd);
  const Bytes before = yb;
  const std::vector<float> p = random_floats(48, 102, 0.5f, 1.0f);
  std::vector<float> stats = nan_floats(48);
  const std::vector<float> stats_before = stats;

  EXPECT_TRUE(invalid(tsr_dnn_softmax_forward(h, static_cast<tsr_dnn_softmax_mode>(2), 1, &x,
                                              xb.data(), &x, yb.data()),
                      "tsr_dnn_softmax_forward",
                      "mode = 2 is not a tsr_dnn_softmax_mode (0 to 1)"));
  EXPECT_TRUE(invalid(tsr_dnn_softmax_backward(h, TSR_DNN_SOFTMAX_INT_RANGE_, 1, &x, xb.data(), &x,
                                               xb.data(), &x, yb.data()),
                      "tsr_dnn_softmax_backward", "mode = -2147483648"));
  EXPECT_TRUE(invalid(tsr_dnn_softmax_forward(h, TSR_DNN_SOFTMAX, 4, &x, xb.data(), &x, yb.data()),
                      "tsr_dnn_softmax_forward", "axis 4 is out of range"));
  tsr_tensor_desc deep = x;
  deep.rank = 9;
  EXPECT_TRUE(
      invalid(tsr_dnn_softmax_forward(h, TSR_DNN_SOFTMAX, 1, &x, xb.data(), &deep, yb.data()),
              "tsr_dnn_softmax_forward", "y_desc->rank = 9 must be in 0..8"));

  EXPECT_TRUE(invalid(
      tsr_dnn_batch_norm_forward_training(h, static_cast<tsr_dnn_batch_norm_mode>(5), &x, xb.data(),
                                          p.data(), p.data(), 1e-5, 0.1, nullptr, nullptr,
                                          stats.data(), stats.data(), &x, yb.data()),
      "tsr_dnn_batch_norm_forward_training", "mode = 5 is not a tsr_dnn_batch_norm_mode (0 to 1)"));
  tsr_tensor_desc wide = x;
  wide.dims[3] = 5;
  EXPECT_TRUE(invalid(
      tsr_dnn_batch_norm_forward_inference(h, TSR_DNN_BATCH_NORM_SPATIAL, &x, xb.data(), p.data(),
                                           p.data(), p.data(), p.data(), 1e-5, &wide, yb.data()),
      "tsr_dnn_batch_norm_forward_inference", "differ from x dims"));
  EXPECT_TRUE(invalid(tsr_dnn_batch_norm_backward(h, TSR_DNN_BATCH_NORM_SPATIAL, &x, xb.data(),
                                                  nullptr, xb.data(), p.data(), p.data(), p.data(),
                                                  &x, yb.data(), stats.data(), stats.data()),
                      "tsr_dnn_batch_norm_backward", "dy_desc is null"));
  EXPECT_TRUE(invalid(tsr_dnn_layer_norm_forward(h, 7, &x, xb.data(), p.data(), p.data(), 1e-5, &x,
                                                 yb.data(), stats.data(), stats.data()),
                      "tsr_dnn_layer_norm_forward", "axis 7 is outside"));
  EXPECT_TRUE(invalid(tsr_dnn_group_norm_forward(h, 2, &x, xb.data(), p.data(), p.data(), 1e-5, &x,
                                                 yb.data(), stats.data(), stats.data()),
                      "tsr_dnn_group_norm_forward", "divide the 3 channels"));
  tsr_tensor_desc bf = x;
  bf.dtype = TSR_DTYPE_BF16;
  EXPECT_TRUE(invalid(tsr_dnn_instance_norm_forward(h, &x, xb.data(), p.data(), p.data(), 1e-5, &bf,
                                                    yb.data(), stats.data(), stats.data()),
                      "tsr_dnn_instance_norm_forward", "y dtype bf16 differs"));

  tsr_dnn_lrn_desc l;
  ASSERT_EQ(tsr_dnn_lrn_desc_init(TSR_DNN_LRN_ACROSS_CHANNELS, &l), TSR_STATUS_OK);
  tsr_dnn_lrn_desc bad = l;
  bad.mode = static_cast<tsr_dnn_lrn_mode>(3);
  EXPECT_TRUE(invalid(tsr_dnn_lrn_forward(h, &bad, &x, xb.data(), &x, yb.data()),
                      "tsr_dnn_lrn_forward", "lrn->mode = 3 is not a tsr_dnn_lrn_mode (0 to 1)"));
  EXPECT_TRUE(invalid(tsr_dnn_lrn_backward(h, nullptr, &x, xb.data(), &x, xb.data(), &x, yb.data()),
                      "tsr_dnn_lrn_backward", "lrn is null"));
  EXPECT_TRUE(invalid(tsr_dnn_lrn_desc_init(static_cast<tsr_dnn_lrn_mode>(2), &l),
                      "tsr_dnn_lrn_desc_init", "mode = 2"));
  bad = l;
  bad.size = 0;
  EXPECT_TRUE(invalid(tsr_dnn_lrn_forward(h, &bad, &x, xb.data(), &x, yb.data()),
                      "tsr_dnn_lrn_forward", "size = 0 must be in"));
  EXPECT_EQ(yb, before);
  EXPECT_EQ(std::memcmp(stats.data(), stats_before.data(), stats.size() * 4), 0);
}

}  // namespace
}  // namespace dnn_capi_test
