#include <gtest/gtest.h>

#include <tessera/blas.hpp>

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
