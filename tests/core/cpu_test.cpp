#include <cstdlib>

#include <gtest/gtest.h>

#include <tessera/core/cpu.hpp>

namespace tessera {
namespace {

TEST(Cpu, DetectsSomethingPlausible) {
  const CpuInfo& cpu = cpu_info();
  EXPECT_FALSE(cpu.vendor.empty());
  EXPECT_GE(cpu.logical_cpus, 1);
  EXPECT_GT(cpu.memory_total_bytes, 0);
  EXPECT_GT(cpu.cache_bytes(1), 0) << "no L1 data cache found";
  EXPECT_GE(cpu.cache_bytes(2), cpu.cache_bytes(1));
  EXPECT_EQ(cpu.last_level_cache_bytes(), cpu.cache_bytes(3) > 0 ? cpu.cache_bytes(3) : cpu.cache_bytes(2));
  EXPECT_TRUE(cpu.has(CpuFeature::kSse42)) << "x86-64-v2 is the floor tessera assumes";
  // The level follows from the features.
  if (cpu.detected_isa >= Isa::kAvx2) {
    EXPECT_TRUE(cpu.has(CpuFeature::kAvx2) && cpu.has(CpuFeature::kFma) &&
                cpu.has(CpuFeature::kF16c));
    EXPECT_TRUE(cpu.os_saves_ymm);
  }
  if (cpu.detected_isa == Isa::kAvx512) {
    EXPECT_TRUE(cpu.has(CpuFeature::kAvx512bw) && cpu.has(CpuFeature::kAvx512vl));
    EXPECT_TRUE(cpu.os_saves_zmm);
  }
  if (cpu.has(CpuFeature::kAvx512bf16)) {
    EXPECT_TRUE(cpu.has(CpuFeature::kAvx512f));
  }
}

TEST(Cpu, MaxIsaCapsWhatIsUsable) {
  const CpuInfo& cpu = cpu_info();
  const Isa saved = cpu.max_isa;
  setenv("TESSERA_MAX_ISA", "generic", 1);
  reload_isa_cap();
  EXPECT_EQ(cpu.isa(), Isa::kGeneric);
  EXPECT_FALSE(cpu.usable(CpuFeature::kAvx2));
  EXPECT_FALSE(cpu.usable(CpuFeature::kAvx512f));
  EXPECT_EQ(cpu.usable(CpuFeature::kSse42), cpu.has(CpuFeature::kSse42));
  setenv("TESSERA_MAX_ISA", "avx2", 1);
  reload_isa_cap();
  EXPECT_EQ(cpu.isa(), std::min(Isa::kAvx2, cpu.detected_isa));
  EXPECT_FALSE(cpu.usable(CpuFeature::kAvx512bf16));
  EXPECT_EQ(cpu.usable(CpuFeature::kAvx2), cpu.has(CpuFeature::kAvx2));
  setenv("TESSERA_MAX_ISA", "sse9", 1);
  reload_isa_cap();
  ASSERT_TRUE(cpu.max_isa_error.has_value());
  EXPECT_NE(cpu.max_isa_error->find("sse9"), std::string::npos);
  EXPECT_EQ(cpu.isa(), cpu.detected_isa);
  unsetenv("TESSERA_MAX_ISA");
  reload_isa_cap();
  EXPECT_EQ(cpu.isa(), cpu.detected_isa);
  set_max_isa(saved);
}

TEST(Cpu, ScopedCapRestoresAndLevelsEndAtDetected) {
  const std::vector<Isa> levels = supported_isa_levels();
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.front(), Isa::kGeneric);
  EXPECT_EQ(levels.back(), cpu_info().detected_isa);
  const Isa before = cpu_info().max_isa;
  {
    ScopedIsaCap cap(Isa::kGeneric);
    EXPECT_EQ(cpu_info().isa(), Isa::kGeneric);
  }
  EXPECT_EQ(cpu_info().max_isa, before);
}

TEST(Cpu, IsaNames) {
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512})
    EXPECT_EQ(parse_isa(isa_name(isa)), isa);
  EXPECT_FALSE(parse_isa("AVX2").has_value());
  EXPECT_EQ(cpu_feature_name(CpuFeature::kAvx512bf16), "avx512_bf16");
}

}  // namespace
}  // namespace tessera
