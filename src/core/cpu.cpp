// CPU detection: cpuid for features and caches, xgetbv for what the OS saves, sysfs as the
// cache fallback, /proc/meminfo for memory, the affinity mask for the CPU count.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>

#include <cpuid.h>
#include <sched.h>

#include <tessera/core/cpu.hpp>

namespace tessera {
namespace {

constexpr std::string_view kFeatureNames[] = {
    "sse4_2",      "avx",         "f16c",     "fma",      "avx2",     "bmi2",
    "avx512f",     "avx512cd",    "avx512bw", "avx512dq", "avx512vl", "avx512_vnni",
    "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8"};
static_assert(std::size(kFeatureNames) == static_cast<std::size_t>(CpuFeature::kCount));

struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};
Regs cpuid(unsigned leaf, unsigned sub = 0) {
  Regs r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}
bool bit(unsigned v, int b) {
  return (v >> b) & 1u;
}

std::uint64_t xgetbv0() {
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

// Deterministic cache parameters: Intel leaf 4 and AMD leaf 0x8000001D share one layout.
std::vector<CacheInfo> caches_from_cpuid(unsigned leaf) {
  std::vector<CacheInfo> out;
  for (unsigned sub = 0; sub < 16; ++sub) {
    Regs r = cpuid(leaf, sub);
    unsigned type = r.a & 0x1f;
    if (type == 0) break;
    CacheInfo c;
    c.level = static_cast<int>((r.a >> 5) & 7);
    c.type = type == 1 ? "data" : type == 2 ? "instruction" : "unified";
    c.shared_by_threads = static_cast<int>(((r.a >> 14) & 0xfff) + 1);
    c.ways = static_cast<int>(((r.b >> 22) & 0x3ff) + 1);
    int partitions = static_cast<int>(((r.b >> 12) & 0x3ff) + 1);
    c.line_bytes = static_cast<int>((r.b & 0xfff) + 1);
    std::int64_t sets = static_cast<std::int64_t>(r.c) + 1;
    c.size_bytes = static_cast<std::int64_t>(c.ways) * partitions * c.line_bytes * sets;
    out.push_back(c);
  }
  return out;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

std::vector<CacheInfo> caches_from_sysfs() {
  std::vector<CacheInfo> out;
  for (int i = 0; i < 16; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string level = read_line(dir + "level");
    if (level.empty()) break;
    CacheInfo c;
    c.level = std::atoi(level.c_str());
    std::string type = read_line(dir + "type");
    c.type = type == "Data" ? "data" : type == "Instruction" ? "instruction" : "unified";
    std::string size = read_line(dir + "size");  // "48K", "2048K", "32M"
    std::int64_t v = std::atoll(size.c_str());
    if (!size.empty() && size.back() == 'K') v <<= 10;
    if (!size.empty() && size.back() == 'M') v <<= 20;
    c.size_bytes = v;
    c.line_bytes = std::atoi(read_line(dir + "coherency_line_size").c_str());
    c.ways = std::atoi(read_line(dir + "ways_of_associativity").c_str());
    out.push_back(c);
  }
  return out;
}

void read_meminfo(CpuInfo& info) {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kb;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemTotal:") info.memory_total_bytes = kb * 1024;
    if (key == "MemAvailable:") info.memory_available_bytes = kb * 1024;
  }
}

void read_isa_cap(CpuInfo& info) {
  info.max_isa = Isa::kAvx512;
  info.max_isa_error.reset();
  const char* env = std::getenv("TESSERA_MAX_ISA");
  if (env == nullptr || *env == '\0') return;
  if (auto isa = parse_isa(env)) {
    info.max_isa = *isa;
  } else {
    info.max_isa_error =
        std::string("TESSERA_MAX_ISA='") + env + "' is not one of generic, avx2, avx512; ignored";
    std::fprintf(stderr, "tessera: %s\n", info.max_isa_error->c_str());
  }
}

CpuInfo detect() {
  CpuInfo info;
  info.detected.assign(static_cast<std::size_t>(CpuFeature::kCount), false);
  auto set = [&](CpuFeature f, bool v) { info.detected[static_cast<std::size_t>(f)] = v; };

  Regs r0 = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &r0.b, 4);
  std::memcpy(vendor + 4, &r0.d, 4);
  std::memcpy(vendor + 8, &r0.c, 4);
  info.vendor = vendor;
  const unsigned max_leaf = r0.a;
  const unsigned max_ext = cpuid(0x80000000).a;
  if (max_ext >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      Regs r = cpuid(0x80000002 + i);
      std::memcpy(brand + 16 * i, &r, 16);
    }
    info.model = brand;
    while (!info.model.empty() && info.model.back() == ' ') info.model.pop_back();
    std::size_t first = info.model.find_first_not_of(' ');
    info.model = first == std::string::npos ? "" : info.model.substr(first);
  }

  Regs r1 = cpuid(1);
  unsigned base_family = (r1.a >> 8) & 0xf, base_model = (r1.a >> 4) & 0xf;
  info.family =
      static_cast<int>(base_family == 0xf ? base_family + ((r1.a >> 20) & 0xff) : base_family);
  info.model_id =
      static_cast<int>(base_family >= 0x6 ? base_model | (((r1.a >> 16) & 0xf) << 4) : base_model);
  info.stepping = static_cast<int>(r1.a & 0xf);

  std::uint64_t xcr0 = bit(r1.c, 27) ? xgetbv0() : 0;  // OSXSAVE
  info.os_saves_ymm = (xcr0 & 0x6) == 0x6;
  info.os_saves_zmm = info.os_saves_ymm && (xcr0 & 0xe0) == 0xe0;
  const bool amx_state = (xcr0 & 0x60000) == 0x60000;

  set(CpuFeature::kSse42, bit(r1.c, 20));
  set(CpuFeature::kAvx, bit(r1.c, 28) && info.os_saves_ymm);
  set(CpuFeature::kF16c, bit(r1.c, 29) && info.os_saves_ymm);
  set(CpuFeature::kFma, bit(r1.c, 12) && info.os_saves_ymm);
  if (max_leaf >= 7) {
    Regs r7 = cpuid(7, 0);
    Regs r71 = r7.a >= 1 ? cpuid(7, 1) : Regs{};
    const bool z = info.os_saves_zmm;
    set(CpuFeature::kAvx2, bit(r7.b, 5) && info.os_saves_ymm);
    set(CpuFeature::kBmi2, bit(r7.b, 8));
    set(CpuFeature::kAvx512f, bit(r7.b, 16) && z);
    set(CpuFeature::kAvx512dq, bit(r7.b, 17) && z);
    set(CpuFeature::kAvx512cd, bit(r7.b, 28) && z);
    set(CpuFeature::kAvx512bw, bit(r7.b, 30) && z);
    set(CpuFeature::kAvx512vl, bit(r7.b, 31) && z);
    set(CpuFeature::kAvx512vnni, bit(r7.c, 11) && z);
    set(CpuFeature::kAvx512fp16, bit(r7.d, 23) && z);
    set(CpuFeature::kAvx512bf16, bit(r71.a, 5) && z);
    set(CpuFeature::kAvxVnni, bit(r71.a, 4) && info.os_saves_ymm);
    set(CpuFeature::kAmxTile, bit(r7.d, 24) && amx_state);
    set(CpuFeature::kAmxBf16, bit(r7.d, 22) && amx_state);
    set(CpuFeature::kAmxInt8, bit(r7.d, 25) && amx_state);
  }
  if (info.has(CpuFeature::kAvx2) && info.has(CpuFeature::kFma) && info.has(CpuFeature::kF16c))
    info.detected_isa = Isa::kAvx2;
  if (info.detected_isa == Isa::kAvx2 && info.has(CpuFeature::kAvx512f) &&
      info.has(CpuFeature::kAvx512cd) && info.has(CpuFeature::kAvx512bw) &&
      info.has(CpuFeature::kAvx512dq) && info.has(CpuFeature::kAvx512vl))
    info.detected_isa = Isa::kAvx512;

  const bool amd = info.vendor == "AuthenticAMD";
  if (amd && max_ext >= 0x8000001D && bit(cpuid(0x80000001).c, 22))
    info.caches = caches_from_cpuid(0x8000001D);
  else if (!amd && max_leaf >= 4)
    info.caches = caches_from_cpuid(4);
  if (info.caches.empty()) info.caches = caches_from_sysfs();

  cpu_set_t set_mask;
  CPU_ZERO(&set_mask);
  info.logical_cpus =
      sched_getaffinity(0, sizeof set_mask, &set_mask) == 0 ? CPU_COUNT(&set_mask) : 1;
  read_meminfo(info);
  read_isa_cap(info);
  return info;
}

CpuInfo& mutable_info() {
  static CpuInfo info = detect();
  return info;
}

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kGeneric:
      return "generic";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "?";
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512})
    if (isa_name(isa) == name) return isa;
  return std::nullopt;
}

std::string_view cpu_feature_name(CpuFeature f) {
  return kFeatureNames[static_cast<std::size_t>(f)];
}

bool CpuInfo::usable(CpuFeature f) const {
  if (!has(f)) return false;
  switch (f) {
    case CpuFeature::kSse42:
    case CpuFeature::kBmi2:
      return true;
    case CpuFeature::kAvx:
    case CpuFeature::kF16c:
    case CpuFeature::kFma:
    case CpuFeature::kAvx2:
    case CpuFeature::kAvxVnni:
      return isa() >= Isa::kAvx2;
    default:
      return isa() >= Isa::kAvx512;  // AVX-512 and AMX extensions
  }
}

std::int64_t CpuInfo::cache_bytes(int level) const {
  for (const CacheInfo& c : caches)
    if (c.level == level && c.type != "instruction") return c.size_bytes;
  return 0;
}

std::int64_t CpuInfo::last_level_cache_bytes() const {
  const std::int64_t l3 = cache_bytes(3);
  return l3 > 0 ? l3 : cache_bytes(2);
}

const CpuInfo& cpu_info() {
  return mutable_info();
}

void reload_isa_cap() {
  read_isa_cap(mutable_info());
}

std::vector<Isa> supported_isa_levels() {
  std::vector<Isa> levels;
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512})
    if (isa <= cpu_info().detected_isa) levels.push_back(isa);
  return levels;
}

ScopedIsaCap::ScopedIsaCap(Isa cap) : saved_(cpu_info().max_isa) {
  set_max_isa(cap);
}
ScopedIsaCap::~ScopedIsaCap() {
  set_max_isa(saved_);
}

void set_max_isa(Isa cap) {
  mutable_info().max_isa = cap;
  mutable_info().max_isa_error.reset();
}

}  // namespace tessera
