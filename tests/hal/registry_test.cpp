#include <cstdlib>

#include <gtest/gtest.h>

#include <tessera/core/tensor.hpp>
#include <tessera/hal/hal.hpp>

#include "test_util.hpp"

namespace tessera {
namespace {

// Before the registry loads (on first use): also try the test plug-ins built beside libtessera.
const bool kPluginsRequested = [] {
  setenv("TESSERA_HAL_PLUGINS", "testdev,badabi,notaplugin,missing", 1);
  return true;
}();

const hal::BackendStatus& status_of(const std::string& name) {
  for (const auto& st : hal::backends())
    if (st.name == name) return st;
  ADD_FAILURE() << "backend " << name << " not listed";
  static hal::BackendStatus none;
  return none;
}

TEST(Registry, CpuComesFirstAndAlwaysWorks) {
  ASSERT_TRUE(kPluginsRequested);
  const auto& list = hal::backends();
  ASSERT_GE(list.size(), 3u);
  EXPECT_EQ(list[0].name, "cpu");
  EXPECT_TRUE(list[0].available);
  EXPECT_EQ(list[1].name, "cuda");
  EXPECT_EQ(list[2].name, "hip");
  hal::Device& cpu = hal::cpu_device();
  EXPECT_EQ(cpu.loc(), (DeviceLoc{DeviceType::kCpu, 0}));
  EXPECT_FALSE(cpu.properties().name.empty());
  EXPECT_GE(cpu.properties().compute_units, 1);
  EXPECT_EQ(cpu.fingerprint(), hal::cpu_device().fingerprint());
  EXPECT_NE(cpu.fingerprint().find("isa "), std::string::npos);
}

TEST(Registry, LoadsAWorkingPlugin) {
  const auto& st = status_of("testdev");
  ASSERT_TRUE(st.available) << st.detail;
  EXPECT_NE(st.detail.find("libtessera_testdev.so"), std::string::npos);
  hal::Device* d = testing::value_or_fail(hal::find_device("testdev:1"));
  EXPECT_EQ(d->properties().name, "tessera test device 1");
  EXPECT_EQ(d->properties().warp_size, 64);
  Tensor t = testing::value_or_fail(Tensor::empty({4}, DType::kF32, d->allocator()));
  EXPECT_EQ(t.device(), (DeviceLoc{DeviceType::kOther, 1}));
  EXPECT_EQ(d->allocator().stats().bytes_in_use, 64u);
}

TEST(Registry, ReportsWhyPluginsAreUnavailable) {
  const auto& bad = status_of("badabi");
  EXPECT_FALSE(bad.available);
  EXPECT_NE(bad.detail.find("ABI version 9999"), std::string::npos) << bad.detail;
  const auto& notp = status_of("notaplugin");
  EXPECT_FALSE(notp.available);
  EXPECT_NE(notp.detail.find("is not a tessera plug-in"), std::string::npos) << notp.detail;
  const auto& missing = status_of("missing");
  EXPECT_FALSE(missing.available);
  EXPECT_NE(missing.detail.find("libtessera_missing.so not found"), std::string::npos)
      << missing.detail;
}

TEST(Registry, FindDeviceErrorsNameTheProblem) {
  EXPECT_EQ(testing::value_or_fail(hal::find_device("cpu")), &hal::cpu_device());
  EXPECT_EQ(testing::value_or_fail(hal::find_device("cpu:0")), &hal::cpu_device());
  auto r = hal::find_device("cpu:1");
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("has 1 device"), std::string::npos);
  r = hal::find_device("tpu:0");
  EXPECT_NE(r.status().message().find("no backend named 'tpu'"), std::string::npos);
  r = hal::find_device("cpu:x");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  r = hal::find_device("badabi:0");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tessera
