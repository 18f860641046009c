#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include <tessera/core/log.hpp>

namespace tessera::log {
namespace {

constexpr std::pair<std::string_view, Category> kCategories[] = {
    {"dispatch", Category::kDispatch}, {"trace", Category::kTrace}, {"alloc", Category::kAlloc},
    {"tune", Category::kTune},         {"hal", Category::kHal},
    {"bench", Category::kBench},
};

std::atomic<std::uint32_t>& mask_storage() {
  static std::atomic<std::uint32_t> mask{[] {
    // TESSERA_LOG is an alias of TESSERA_VERBOSE; the categories of both are enabled.
    std::uint32_t bits = 0;
    for (const char* var : {"TESSERA_VERBOSE", "TESSERA_LOG"})
      if (const char* env = std::getenv(var)) bits |= parse_categories(env);
    return bits;
  }()};
  return mask;
}

}  // namespace

std::uint32_t parse_categories(std::string_view spec) {
  std::uint32_t mask = 0;
  while (!spec.empty()) {
    std::size_t comma = spec.find(',');
    std::string_view name = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (name.empty()) continue;
    if (name == "all" || name == "1") {
      mask = ~0u;
      continue;
    }
    bool known = false;
    for (auto& [n, c] : kCategories)
      if (n == name) {
        mask |= static_cast<std::uint32_t>(c);
        known = true;
      }
    if (!known)
      std::fprintf(stderr, "tessera: TESSERA_VERBOSE/TESSERA_LOG: unknown category '%.*s' ignored\n",
                   static_cast<int>(name.size()), name.data());
  }
  return mask;
}

std::uint32_t enabled_mask() {
  return mask_storage().load(std::memory_order_relaxed);
}
void set_enabled_mask(std::uint32_t mask) {
  mask_storage().store(mask, std::memory_order_relaxed);
}

std::string_view category_name(Category c) {
  for (auto& [n, cat] : kCategories)
    if (cat == c) return n;
  return "?";
}

Line::Line(Category c) {
  // Bench lines are commands to paste into a shell, so they carry no prefix.
  if (c != Category::kBench) stream_ << "tessera[" << category_name(c) << "] ";
}

Line::~Line() {
  stream_ << '\n';
  std::string s = stream_.str();
  // One write() keeps lines from different threads whole.
  ssize_t ignored = ::write(STDERR_FILENO, s.data(), s.size());
  (void)ignored;
}

}  // namespace tessera::log
