// What the CPU can do: read once with cpuid (and xgetbv, to confirm the operating system
// saves the wide registers), then capped by TESSERA_MAX_ISA=generic|avx2|avx512.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// Instruction-set levels kernels are compiled for, lowest first.
//   avx2:   AVX2 + FMA + F16C (Haswell, Zen 1 and later)
//   avx512: AVX-512 F/CD/BW/DQ/VL (Skylake-SP, Zen 4 and later)
enum class Isa : int { kGeneric = 0, kAvx2 = 1, kAvx512 = 2 };
std::string_view isa_name(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);

enum class CpuFeature : int {
  kSse42,
  kAvx,
  kF16c,
  kFma,
  kAvx2,
  kBmi2,
  kAvx512f,
  kAvx512cd,
  kAvx512bw,
  kAvx512dq,
  kAvx512vl,
  kAvx512vnni,
  kAvx512bf16,
  kAvx512fp16,
  kAvxVnni,
  kAmxTile,
  kAmxBf16,
  kAmxInt8,
  kCount
};
std::string_view cpu_feature_name(CpuFeature f);

struct CacheInfo {
  int level = 0;     // 1, 2, 3
  std::string type;  // "data", "instruction", "unified"
  std::int64_t size_bytes = 0;
  int line_bytes = 0;
  int ways = 0;
  int shared_by_threads = 0;
};

struct CpuInfo {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD"
  std::string model;   // brand string
  int family = 0, model_id = 0, stepping = 0;
  bool os_saves_ymm = false, os_saves_zmm = false;  // from XCR0
  std::vector<bool> detected;                // indexed by CpuFeature: what the CPU and OS support
  Isa detected_isa = Isa::kGeneric;          // best level the hardware supports
  Isa max_isa = Isa::kGeneric;               // TESSERA_MAX_ISA cap (kAvx512 when unset)
  std::optional<std::string> max_isa_error;  // a bad TESSERA_MAX_ISA value, reported once
  std::vector<CacheInfo> caches;
  int logical_cpus = 0;  // in this process's affinity mask
  std::int64_t memory_total_bytes = 0, memory_available_bytes = 0;

  Isa isa() const { return detected_isa < max_isa ? detected_isa : max_isa; }  // the level used
  // A feature usable now: detected and within the cap (AVX-512 extensions need kAvx512,
  // AVX2/FMA/F16C need kAvx2).
  bool usable(CpuFeature f) const;
  bool has(CpuFeature f) const { return detected[static_cast<std::size_t>(f)]; }
  // Size of the data (or unified) cache at `level`, or 0 if unknown.
  std::int64_t cache_bytes(int level) const;
  // Size of the last data cache (L3, else L2), or 0 if unknown.
  std::int64_t last_level_cache_bytes() const;
};

// Detected on first call; TESSERA_MAX_ISA is read then too.
const CpuInfo& cpu_info();
// Sets the cap as TESSERA_MAX_ISA would (tests and `tessera selfcheck` walk every level).
// Not thread-safe: call it while no kernel is running.
void set_max_isa(Isa cap);
// Re-reads TESSERA_MAX_ISA.
void reload_isa_cap();

// The ISA levels this CPU supports, lowest first: the levels a test walks with the cap set to
// each one to exercise every kernel path on one machine.
std::vector<Isa> supported_isa_levels();

// Sets the cap for its lifetime and restores the previous cap afterwards (same thread-safety
// rule as set_max_isa).
class ScopedIsaCap {
 public:
  explicit ScopedIsaCap(Isa cap);
  ~ScopedIsaCap();
  ScopedIsaCap(const ScopedIsaCap&) = delete;
  ScopedIsaCap& operator=(const ScopedIsaCap&) = delete;

 private:
  Isa saved_;
};

}  // namespace tessera
