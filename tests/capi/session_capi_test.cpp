// The C API of sessions: the C smoke test (compiled as C99) on the default model; the same
// numbers as a C++ session; every bad call a status with a message naming the problem.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tessera/c/session.h>
#include <tessera/session.hpp>

extern "C" int capi_session_c_smoke(const char* path);

namespace {

TEST(SessionCApi, CSmokeTestPasses) { EXPECT_EQ(capi_session_c_smoke(TESSERA_DEFAULT_MODEL), 0); }

TEST(SessionCApi, SameNumbersAsTheCppSession) {
  tsr_session s = nullptr;
  ASSERT_EQ(tsr_session_open(TESSERA_DEFAULT_MODEL, 1, &s), TSR_STATUS_OK) << tsr_last_error_message();
  std::vector<float> x(3 * 32 * 32);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) / 13.0f;
  // Strided input: every other float of a buffer twice as long.
  std::vector<float> strided(2 * x.size());
  for (std::size_t i = 0; i < x.size(); ++i) strided[2 * i] = x[i];
  tsr_tensor_desc d{};
  d.dtype = TSR_DTYPE_F32;
  d.rank = 4;
  const std::int64_t dims[4] = {1, 3, 32, 32}, strides[4] = {2 * 3 * 32 * 32, 2 * 32 * 32, 2 * 32, 2};
  for (int i = 0; i < 4; ++i) {
    d.dims[i] = dims[i];
    d.strides[i] = strides[i];
  }
  const char* name = "image";
  const void* data = strided.data();
  ASSERT_EQ(tsr_session_run(s, 1, &name, &d, &data), TSR_STATUS_OK) << tsr_last_error_message();
  tsr_tensor_desc out{};
  const void* out_data = nullptr;
  ASSERT_EQ(tsr_session_output(s, 0, &out, &out_data), TSR_STATUS_OK) << tsr_last_error_message();

  auto cpp = tessera::exec::Session::open(TESSERA_DEFAULT_MODEL).value_or_throw();
  auto ref = cpp.run({{"image", tessera::Tensor::from_vector<float>(tessera::Shape{1, 3, 32, 32}, x).value_or_throw()}}).value_or_throw();
  const auto want = ref[0].tensor.to_vector<float>();
  ASSERT_EQ(out.dims[1], 10);
  std::vector<float> got(10);
  std::memcpy(got.data(), out_data, sizeof(float) * 10);
  EXPECT_EQ(got, want);
  EXPECT_EQ(tsr_session_destroy(s), TSR_STATUS_OK);
}

void expect_error(tsr_status st, tsr_status code, const std::string& needle) {
  EXPECT_EQ(st, code);
  EXPECT_NE(std::string(tsr_last_error_message()).find(needle), std::string::npos) << tsr_last_error_message();
}

TEST(SessionCApi, BadCallsNameTheProblem) {
  tsr_session s = reinterpret_cast<tsr_session>(0x1);
  expect_error(tsr_session_open("/nonexistent.onnx", 0, &s), TSR_STATUS_NOT_FOUND, "tsr_session_open: import_onnx: cannot open");
  EXPECT_EQ(s, nullptr);
  expect_error(tsr_session_open(nullptr, 0, &s), TSR_STATUS_INVALID_ARGUMENT, "model_path is null");
  expect_error(tsr_session_open(TESSERA_DEFAULT_MODEL, -1, &s), TSR_STATUS_INVALID_ARGUMENT, "threads -1");
  std::int32_t n = 0;
  expect_error(tsr_session_input_count(nullptr, &n), TSR_STATUS_INVALID_ARGUMENT, "session is null");
  ASSERT_EQ(tsr_session_open(TESSERA_DEFAULT_MODEL, 0, &s), TSR_STATUS_OK);
  const char* name = nullptr;
  expect_error(tsr_session_output_name(s, 3, &name), TSR_STATUS_INVALID_ARGUMENT, "output 3 is out of range (the model has 1)");
  tsr_tensor_desc out{};
  const void* data = nullptr;
  expect_error(tsr_session_output(s, 0, &out, &data), TSR_STATUS_INVALID_ARGUMENT, "has not run yet");
  expect_error(tsr_session_run(s, 0, nullptr, nullptr, nullptr), TSR_STATUS_INVALID_ARGUMENT, "input 'image' is missing");
  const char* wrong = "picture";
  const std::int64_t dims[4] = {1, 3, 32, 32};
  tsr_tensor_desc d{};
  ASSERT_EQ(tsr_dnn_tensor_desc_packed(TSR_DTYPE_F32, 4, dims, TSR_DNN_LAYOUT_NCHW, &d), TSR_STATUS_OK);
  std::vector<float> x(3 * 32 * 32, 0.5f);
  const void* xp = x.data();
  expect_error(tsr_session_run(s, 1, &wrong, &d, &xp), TSR_STATUS_INVALID_ARGUMENT, "'picture' is not an input of the model");
  const void* null_data = nullptr;
  const char* image = "image";
  expect_error(tsr_session_run(s, 1, &image, &d, &null_data), TSR_STATUS_INVALID_ARGUMENT, "data is null");
  EXPECT_EQ(tsr_session_destroy(s), TSR_STATUS_OK);
  EXPECT_EQ(tsr_session_destroy(nullptr), TSR_STATUS_OK);
}

}  // namespace
