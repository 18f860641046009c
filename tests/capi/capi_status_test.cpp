// C API: status codes, names, the thread-local error message, the exception guard and the
// handle settings.
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <tessera/c/blas.h>
#include <tessera/c/status.h>
#include <tessera/core/status.hpp>

#include "../../src/capi/capi.hpp"
#include "capi_test_util.hpp"

extern "C" int capi_c_smoke(void);  // c_smoke.c, compiled as C

namespace {

using capi_test::Handle;
using capi_test::invalid;
using tessera::StatusCode;

TEST(CapiStatus, CodesMatchTheCppStatusCodes) {
  const std::pair<tsr_status, StatusCode> pairs[] = {
      {TSR_STATUS_OK, StatusCode::kOk},
      {TSR_STATUS_INVALID_ARGUMENT, StatusCode::kInvalidArgument},
      {TSR_STATUS_UNSUPPORTED, StatusCode::kUnsupported},
      {TSR_STATUS_OUT_OF_MEMORY, StatusCode::kOutOfMemory},
      {TSR_STATUS_NOT_FOUND, StatusCode::kNotFound},
      {TSR_STATUS_PARSE_ERROR, StatusCode::kParseError},
      {TSR_STATUS_IO_ERROR, StatusCode::kIoError},
      {TSR_STATUS_UNAVAILABLE, StatusCode::kUnavailable},
      {TSR_STATUS_INTERNAL, StatusCode::kInternal},
  };
  for (auto [c, cpp] : pairs) {
    EXPECT_EQ(static_cast<int>(c), static_cast<int>(cpp));
    EXPECT_EQ(std::string(tsr_status_name(c)), tessera::status_code_name(cpp));
  }
  EXPECT_STREQ(tsr_status_name(TSR_STATUS_INVALID_ARGUMENT), "invalid argument");
  EXPECT_STREQ(tsr_status_name(static_cast<tsr_status>(42)), "unknown status");
}

TEST(CapiStatus, MessageIsPerThreadAndKeptUntilTheNextFailure) {
  std::thread([] {
    EXPECT_STREQ(tsr_last_error_message(), "");  // a fresh thread has seen no failure
    Handle h;
    EXPECT_EQ(tsr_blas_set_num_threads(h, -1), TSR_STATUS_INVALID_ARGUMENT);
    const std::string first = tsr_last_error_message();
    EXPECT_EQ(first.rfind("tsr_blas_set_num_threads: ", 0), 0u) << first;
    EXPECT_NE(first.find("num_threads = -1"), std::string::npos) << first;

    EXPECT_EQ(tsr_blas_set_num_threads(h, 1), TSR_STATUS_OK);  // success keeps the message
    EXPECT_EQ(first, tsr_last_error_message());

    std::thread([] {  // another thread's failure does not touch this thread's message
      EXPECT_STREQ(tsr_last_error_message(), "");
      EXPECT_EQ(tsr_blas_set_num_threads(nullptr, 1), TSR_STATUS_INVALID_ARGUMENT);
      EXPECT_STREQ(tsr_last_error_message(), "tsr_blas_set_num_threads: handle is null");
    })
        .join();
    EXPECT_EQ(first, tsr_last_error_message());
  }).join();
}

TEST(CapiStatus, ExceptionsBecomeStatuses) {
  using tessera::capi::guard;
  EXPECT_EQ(guard("f", []() -> tessera::Status { throw std::bad_alloc(); }),
            TSR_STATUS_OUT_OF_MEMORY);
  EXPECT_STREQ(tsr_last_error_message(), "f: out of memory");
  EXPECT_EQ(
      guard("f",
            []() -> tessera::Status { throw tessera::Error(tessera::not_found("no such key")); }),
      TSR_STATUS_NOT_FOUND);
  EXPECT_STREQ(tsr_last_error_message(), "f: no such key");
  EXPECT_EQ(guard("f", []() -> tessera::Status { throw std::runtime_error("boom"); }),
            TSR_STATUS_INTERNAL);
  EXPECT_STREQ(tsr_last_error_message(), "f: boom");
  EXPECT_EQ(guard("f", []() -> tessera::Status { throw 7; }), TSR_STATUS_INTERNAL);
  EXPECT_STREQ(tsr_last_error_message(), "f: unknown exception");
  EXPECT_EQ(guard("g", [] { return tessera::unsupported("not here"); }), TSR_STATUS_UNSUPPORTED);
  EXPECT_STREQ(tsr_last_error_message(), "g: not here");
}

TEST(CapiStatus, RepeatedRoutineNameIsDropped) {
  using tessera::capi::record;
  record("tsr_blas_sgemm", tessera::invalid_argument("sgemm: lda = 1 must be >= 2"));
  EXPECT_STREQ(tsr_last_error_message(), "tsr_blas_sgemm: lda = 1 must be >= 2");
  record("tsr_blas_sgemm", tessera::invalid_argument("blas handle: bad"));
  EXPECT_STREQ(tsr_last_error_message(), "tsr_blas_sgemm: blas handle: bad");
  EXPECT_EQ(record("x", tessera::Status::ok()), TSR_STATUS_OK);
  EXPECT_STREQ(tsr_last_error_message(), "tsr_blas_sgemm: blas handle: bad");
}

TEST(CapiHandle, CreateDestroyAndSettings) {
  EXPECT_TRUE(invalid(tsr_blas_create_handle(nullptr), "tsr_blas_create_handle", "handle"));
  EXPECT_EQ(tsr_blas_destroy_handle(nullptr), TSR_STATUS_OK);

  Handle h;
  int threads = -1;
  EXPECT_EQ(tsr_blas_get_num_threads(h, &threads), TSR_STATUS_OK);
  EXPECT_EQ(threads, 0);
  EXPECT_EQ(tsr_blas_set_num_threads(h, 2), TSR_STATUS_OK);
  EXPECT_EQ(tsr_blas_get_num_threads(h, &threads), TSR_STATUS_OK);
  EXPECT_EQ(threads, 2);
  EXPECT_TRUE(invalid(tsr_blas_set_num_threads(h, -3), "tsr_blas_set_num_threads", "-3"));
  EXPECT_EQ(tsr_blas_get_num_threads(h, &threads), TSR_STATUS_OK);
  EXPECT_EQ(threads, 2);
  EXPECT_TRUE(invalid(tsr_blas_get_num_threads(h, nullptr), "tsr_blas_get_num_threads",
                      "num_threads is null"));

  tsr_blas_determinism mode = TSR_BLAS_DETERMINISM_ANY;
  EXPECT_EQ(tsr_blas_get_determinism(h, &mode), TSR_STATUS_OK);
  EXPECT_EQ(mode, TSR_BLAS_DETERMINISM_BITWISE);
  EXPECT_EQ(tsr_blas_set_determinism(h, TSR_BLAS_DETERMINISM_ANY), TSR_STATUS_OK);
  EXPECT_EQ(tsr_blas_get_determinism(h, &mode), TSR_STATUS_OK);
  EXPECT_EQ(mode, TSR_BLAS_DETERMINISM_ANY);
  EXPECT_TRUE(invalid(tsr_blas_set_determinism(h, static_cast<tsr_blas_determinism>(5)),
                      "tsr_blas_set_determinism", "mode = 5"));
  EXPECT_EQ(tsr_blas_get_determinism(h, &mode), TSR_STATUS_OK);
  EXPECT_EQ(mode, TSR_BLAS_DETERMINISM_ANY);

  alignas(64) static unsigned char block[4096];
  EXPECT_TRUE(
      invalid(tsr_blas_set_workspace(h, block + 8, 64), "tsr_blas_set_workspace", "aligned"));
  EXPECT_TRUE(invalid(tsr_blas_set_workspace(h, nullptr, 64), "tsr_blas_set_workspace", "null"));
  EXPECT_EQ(tsr_blas_set_workspace(h, block, sizeof block), TSR_STATUS_OK);
  std::size_t bytes = 0;
  EXPECT_EQ(tsr_blas_get_workspace_size(h, &bytes), TSR_STATUS_OK);
  EXPECT_GE(bytes, sizeof block);
  EXPECT_EQ(tsr_blas_set_workspace(h, nullptr, 0), TSR_STATUS_OK);
  EXPECT_TRUE(invalid(tsr_blas_get_workspace_size(h, nullptr), "tsr_blas_get_workspace_size",
                      "bytes is null"));

  for (auto fn :
       {+[](tsr_blas_handle x) { return tsr_blas_set_num_threads(x, 1); },
        +[](tsr_blas_handle x) { return tsr_blas_set_determinism(x, TSR_BLAS_DETERMINISM_ANY); },
        +[](tsr_blas_handle x) { return tsr_blas_set_workspace(x, nullptr, 0); }})
    EXPECT_EQ(fn(nullptr), TSR_STATUS_INVALID_ARGUMENT);
}

TEST(CapiHeader, CompilesAndRunsAsC) {
  EXPECT_EQ(capi_c_smoke(), 0) << tsr_last_error_message();
}

}  // namespace
