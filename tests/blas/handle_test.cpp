#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <tessera/blas.hpp>
#include <tessera/hal/hal.hpp>

namespace tessera::blas {
namespace {

TEST(BlasHandle, Defaults) {
  Handle h;
  EXPECT_EQ(h.stream(), nullptr);
  EXPECT_EQ(h.determinism(), Determinism::kBitwise);
  EXPECT_EQ(h.num_threads(), 0);
  EXPECT_EQ(h.set_num_threads(-1).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(h.set_num_threads(1).is_ok());
  EXPECT_EQ(h.num_threads(), 1);
}

TEST(BlasHandle, WorkspaceChecks) {
  Handle h;
  EXPECT_EQ(h.set_workspace(nullptr, 64).code(), StatusCode::kInvalidArgument);
  alignas(64) static char block[256];
  EXPECT_EQ(h.set_workspace(block + 1, 64).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(h.set_workspace(block, sizeof block).is_ok());
  EXPECT_GE(h.workspace_bytes(), sizeof block);
}

}  // namespace
}  // namespace tessera::blas

namespace tessera::blas {
namespace {

// A call on a handle with a stream runs after the work enqueued on that stream before it.
TEST(BlasHandle, CallsAreOrderedAfterTheStream) {
  auto stream = hal::cpu_device().create_stream();
  ASSERT_TRUE(stream.is_ok()) << stream.status().to_string();
  Handle h(stream->get());
  std::vector<float> a(4, 0.0f), b(4, 1.0f), c(4, -1.0f);
  ASSERT_TRUE((*stream)
                  ->enqueue([&] {
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                    std::fill(a.begin(), a.end(), 2.0f);  // A = 2 before the gemm may read it
                    return Status::ok();
                  })
                  .is_ok());
  ASSERT_TRUE(gemm<float>(h, Op::kNoTrans, Op::kNoTrans, 2, 2, 2, 1.0f, a.data(), 2, b.data(), 2,
                          0.0f, c.data(), 2).is_ok());
  for (float v : c) EXPECT_EQ(v, 4.0f);
}

// A failed stream task surfaces as the call's error and nothing is written.
TEST(BlasHandle, StreamErrorIsReported) {
  auto stream = hal::cpu_device().create_stream();
  ASSERT_TRUE(stream.is_ok());
  Handle h(stream->get());
  ASSERT_TRUE((*stream)->enqueue([] { return internal_error("earlier task failed"); }).is_ok());
  std::vector<float> a(4, 1.0f), c(4, -1.0f);
  Status s = gemm<float>(h, Op::kNoTrans, Op::kNoTrans, 2, 2, 2, 1.0f, a.data(), 2, a.data(), 2,
                         0.0f, c.data(), 2);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("earlier task failed"), std::string::npos) << s.message();
  for (float v : c) EXPECT_EQ(v, -1.0f);
}

}  // namespace
}  // namespace tessera::blas
