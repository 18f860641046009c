#include "engine.hpp"

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "blocking_key.hpp"
#include "tessera/hal/hal.hpp"
#include "tessera/tune/tune_db.hpp"

namespace tessera::blas::engine {
namespace {

std::mutex g_mutex;
std::optional<Blocking> g_override;
std::map<std::string, Blocking> g_cache;

std::int64_t round_down(std::int64_t v, std::int64_t m) { return std::max(m, v / m * m); }

// {"mc":352,"kc":368,"nc":4080} -> Blocking; nullopt when malformed or out of range.
std::optional<Blocking> parse_params(const std::string& params, int mr, int nr, int ku) {
  Blocking b;
  try {
    const auto j = nlohmann::json::parse(params);
    b.mc = j.at("mc").get<std::int64_t>();
    b.kc = j.at("kc").get<std::int64_t>();
    b.nc = j.at("nc").get<std::int64_t>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (b.mc < mr || b.mc % mr || b.nc < nr || b.nc % nr || b.kc < ku || b.kc % ku ||
      b.kc > (1 << 16) || b.mc > (1 << 16) || b.nc > (1 << 20))
    return std::nullopt;
  b.source = "tuned";
  return b;
}

std::optional<Blocking> tuned_blocking(const char* kernel_name, int mr, int nr, int ku) {
  // Never create a database just to find it empty.
  const std::string path = tune::default_db_path();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  auto db = tune::TuneDb::open(path);
  if (!db.is_ok()) return std::nullopt;
  auto rec = db->lookup(blocking_key(kernel_name));
  if (!rec.is_ok() || !rec->has_value()) return std::nullopt;
  auto b = parse_params((*rec)->params, mr, nr, ku);
  if (!b) {
    TESSERA_VLOG(kTune) << "blas: ignoring malformed blocking '" << (*rec)->params << "' for "
                        << kernel_name;
  }
  return b;
}

}  // namespace

tune::TuneKey blocking_key(const char* kernel_name) {
  return {"blas", "gemm_blocking", kernel_name, hal::cpu_device().fingerprint(), "1",
          "bitwise"};
}

std::string blocking_json(const Blocking& b) {
  return nlohmann::json{{"mc", b.mc}, {"kc", b.kc}, {"nc", b.nc}}.dump();
}

std::string blocking_params(const Blocking& b) {
  return "mc=" + std::to_string(b.mc) + " kc=" + std::to_string(b.kc) +
         " nc=" + std::to_string(b.nc);
}

Blocking heuristic_blocking(int mr, int nr, int ku, std::size_t a_bytes, std::size_t b_bytes) {
  const CpuInfo& cpu = cpu_info();
  std::int64_t l1 = cpu.cache_bytes(1), l2 = cpu.cache_bytes(2), l3 = cpu.cache_bytes(3);
  if (l1 <= 0) l1 = 32 << 10;
  if (l2 <= 0) l2 = 256 << 10;
  if (l3 <= 0) l3 = 4 << 20;
  const auto ab = static_cast<std::int64_t>(a_bytes), bb = static_cast<std::int64_t>(b_bytes);
  Blocking b;
  // Sized as if elements were at most 4 bytes: KC counts k-steps per C-tile update, which
  // cost the same for f64 tiles, and f64 A blocks may fill L2 (measured on Zen 4: f64 with the
  // byte-true sizes, MC 368 x KC 176, runs about 15 % slower than MC 352 x KC 368).
  const std::int64_t ab4 = std::min<std::int64_t>(ab, 4), bb4 = std::min<std::int64_t>(bb, 4);
  b.kc = round_down(l1 * 55 / 100 / (nr * bb4), std::max(16, ku));
  b.mc = round_down(l2 / 2 / (b.kc * ab4), mr);
  b.nc = round_down(std::min<std::int64_t>(l3 / 4, 8 << 20) / (b.kc * bb), nr);
  b.nc = std::min<std::int64_t>(b.nc, round_down(8192, nr));
  return b;
}

Blocking blocking_for(const char* kernel_name, int mr, int nr, int ku, std::size_t a_bytes,
                      std::size_t b_bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_override) {
    Blocking b = *g_override;
    b.mc = std::max<std::int64_t>(mr, b.mc / mr * mr);
    b.nc = std::max<std::int64_t>(nr, b.nc / nr * nr);
    b.kc = std::max<std::int64_t>(ku, b.kc / ku * ku);
    return b;
  }
  auto it = g_cache.find(kernel_name);
  if (it != g_cache.end()) return it->second;
  Blocking b;
  if (auto tuned = tuned_blocking(kernel_name, mr, nr, ku)) {
    b = *tuned;
  } else {
    b = heuristic_blocking(mr, nr, ku, a_bytes, b_bytes);
  }
  TESSERA_VLOG(kDispatch) << "blas: " << kernel_name << " blocking " << blocking_params(b)
                          << " (" << b.source << ")";
  g_cache.emplace(kernel_name, b);
  return b;
}

namespace {
std::atomic<bool> g_small_path{true};
}
void set_small_path_enabled(bool enabled) { g_small_path.store(enabled); }
bool small_path_enabled() { return g_small_path.load(std::memory_order_relaxed); }

void set_blocking_override(const Blocking* blocking) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (blocking) g_override = *blocking;
  else g_override.reset();
}

void forget_cached_blocking() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_cache.clear();
}

void* thread_scratch(std::size_t bytes) {
  struct Scratch {
    void* ptr = nullptr;
    std::size_t size = 0;
    ~Scratch() { std::free(ptr); }
  };
  thread_local Scratch s;
  if (s.size < bytes) {
    std::free(s.ptr);
    s.size = round_up(static_cast<std::int64_t>(bytes), 4096);
    s.ptr = std::aligned_alloc(4096, s.size);
    if (s.ptr == nullptr) {
      s.size = 0;
      throw std::bad_alloc();
    }
  }
  return s.ptr;
}

}  // namespace tessera::blas::engine
