// Diagnostic logging, switched on per category by TESSERA_VERBOSE.
//
//   TESSERA_VERBOSE=dispatch,tune   every kernel choice and refusal, tuning-db traffic
//   TESSERA_VERBOSE=all             everything
//
// Categories: dispatch (kernel selection and refusals with reasons), trace (library calls),
// alloc (allocator traffic), tune (tuning database), hal (backends and streams).
// Lines go to stderr as "tessera[dispatch] ...", one write per line.
#pragma once

#include <cstdint>
#include <sstream>
#include <string_view>

namespace tessera::log {

enum class Category : std::uint32_t {
  kDispatch = 1u << 0,
  kTrace = 1u << 1,
  kAlloc = 1u << 2,
  kTune = 1u << 3,
  kHal = 1u << 4,
  kBench = 1u << 5,  // one replayable `tessera bench ...` command per library call
};

// Parses "dispatch,trace" / "all"; unknown names are reported once on stderr and ignored.
std::uint32_t parse_categories(std::string_view spec);
// The categories enabled by TESSERA_VERBOSE, read once.
std::uint32_t enabled_mask();
// Replaces the enabled set (tests, and the CLI's --verbose).
void set_enabled_mask(std::uint32_t mask);
inline bool enabled(Category c) {
  return (enabled_mask() & static_cast<std::uint32_t>(c)) != 0;
}
std::string_view category_name(Category c);

// Collects one line and writes it to stderr when destroyed.
class Line {
 public:
  explicit Line(Category c);
  ~Line();
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;
  template <typename T>
  Line& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

}  // namespace tessera::log

// TESSERA_VLOG(kDispatch) << "gemm: chose " << name;  (costs one load when disabled)
#define TESSERA_VLOG(category)                                        \
  if (!::tessera::log::enabled(::tessera::log::Category::category)) { \
  } else                                                              \
    ::tessera::log::Line(::tessera::log::Category::category)
