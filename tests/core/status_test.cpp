#include <gtest/gtest.h>

#include <tessera/core/log.hpp>
#include <tessera/core/status.hpp>

namespace tessera {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return invalid_argument("value " + std::to_string(v) + " is not positive");
  return v;
}

Result<int> doubled(int v) {
  TESSERA_ASSIGN_OR_RETURN(int x, parse_positive(v));
  return 2 * x;
}

Status check_all(std::initializer_list<int> vs) {
  for (int v : vs) TESSERA_RETURN_IF_ERROR(parse_positive(v).status());
  return Status::ok();
}

TEST(Status, CodesMessagesAndContext) {
  EXPECT_TRUE(Status::ok().is_ok());
  EXPECT_EQ(Status::ok().to_string(), "ok");
  Status s = not_found("no such file").with_context("reading x.npy");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.to_string(), "not found: reading x.npy: no such file");
  EXPECT_TRUE(Status::ok().with_context("ignored").is_ok());
  EXPECT_EQ(static_cast<int>(StatusCode::kInternal), 8);  // the C ABI depends on the values
}

TEST(Status, ResultAndMacros) {
  EXPECT_EQ(*doubled(4), 8);
  Result<int> bad = doubled(-1);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "value -1 is not positive");
  EXPECT_TRUE(check_all({1, 2}).is_ok());
  EXPECT_EQ(check_all({1, 0, 2}).message(), "value 0 is not positive");
}

TEST(Status, ErrorCarriesTheCode) {
  try {
    doubled(0).value_or_throw();
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(e.message(), "value 0 is not positive");
    EXPECT_STREQ(e.what(), "invalid argument: value 0 is not positive");
  }
  EXPECT_THROW(unsupported("x").throw_if_error(), Error);
  EXPECT_NO_THROW(Status::ok().throw_if_error());
}

TEST(StatusDeathTest, AssertAbortsWithTheCondition) {
  EXPECT_DEATH(TESSERA_ASSERT(1 + 1 == 3, "arithmetic"), "1 \\+ 1 == 3");
  EXPECT_DEATH((void)Result<int>(invalid_argument("nope")).value(), "nope");
}

TEST(Log, CategoriesParseAndGateOutput) {
  using log::Category;
  EXPECT_EQ(log::parse_categories("dispatch,trace"),
            static_cast<std::uint32_t>(Category::kDispatch) |
                static_cast<std::uint32_t>(Category::kTrace));
  EXPECT_EQ(log::parse_categories("all"), ~0u);
  EXPECT_EQ(log::parse_categories(""), 0u);
  EXPECT_EQ(log::parse_categories("bogus,tune"), static_cast<std::uint32_t>(Category::kTune));
  const std::uint32_t saved = log::enabled_mask();
  log::set_enabled_mask(static_cast<std::uint32_t>(Category::kDispatch));
  ::testing::internal::CaptureStderr();
  int evaluated = 0;
  TESSERA_VLOG(kDispatch) << "chose "
                          << "gemm_f32_avx512_6x32";
  TESSERA_VLOG(kTrace) << "hidden " << ++evaluated;
  std::string out = ::testing::internal::GetCapturedStderr();
  log::set_enabled_mask(saved);
  EXPECT_EQ(out, "tessera[dispatch] chose gemm_f32_avx512_6x32\n");
  EXPECT_EQ(evaluated, 0) << "a disabled category must not evaluate its arguments";
}

}  // namespace
}  // namespace tessera
