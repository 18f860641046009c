// The contract of a TuneRecord (tune_db.hpp), checked before anything is written, and the
// resolution of its winner.
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "internal.hpp"

namespace tessera::tune::detail {
namespace {

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. Text must be valid
// UTF-8 to be exported as JSON.
bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    std::uint32_t min = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      extra = 1, min = 0x80, cp = c & 0x1fu;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2, min = 0x800, cp = c & 0x0fu;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3, min = 0x10000, cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(extra) >= s.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += static_cast<std::size_t>(extra) + 1;
  }
  return true;
}

Status check_text(std::string_view field, std::string_view value, bool required) {
  if (required && value.empty())
    return invalid_argument(std::string(field) + ": must not be empty");
  if (!is_valid_utf8(value)) return invalid_argument(std::string(field) + ": not valid UTF-8");
  return Status::ok();
}

Status check_time(const std::string& field, double value) {
  if (!std::isfinite(value) || value < 0.0) {
    std::ostringstream os;
    os << field << ": must be finite and >= 0 (got " << value << ")";
    return invalid_argument(os.str());
  }
  return Status::ok();
}

Status check_candidate(Candidate& c, std::size_t index) {
  const std::string at = "candidates[" + std::to_string(index) + "].";
  TESSERA_RETURN_IF_ERROR(check_text(at + "solution", c.solution, true));
  TESSERA_RETURN_IF_ERROR(check_text(at + "reason", c.reason, false));
  auto params = canonical_params(c.params);
  if (!params.is_ok()) return invalid_argument(at + "params: " + params.status().message());
  c.params = std::move(params).value();
  TESSERA_RETURN_IF_ERROR(check_time(at + "median_us", c.median_us));
  TESSERA_RETURN_IF_ERROR(check_time(at + "spread_us", c.spread_us));
  if (c.samples < 0)
    return invalid_argument(at + "samples: must be >= 0 (got " + std::to_string(c.samples) + ")");
  if (c.accepted && c.samples == 0)
    return invalid_argument(at + "samples: an accepted candidate must have been measured (>= 1)");
  if (c.samples == 0 && (c.median_us != 0.0 || c.spread_us != 0.0))
    return invalid_argument(at + "median_us: must be 0 for a candidate never measured (samples 0)");
  if (!c.accepted && c.reason.empty())
    return invalid_argument(at + "reason: a rejected candidate needs a reason");
  return Status::ok();
}

}  // namespace

bool nesting_within(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

Result<std::string> canonical_params(std::string_view params) {
  if (params.empty()) return std::string("{}");
  if (!nesting_within(params, kMaxJsonDepth))
    return invalid_argument("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  nlohmann::json value = nlohmann::json::parse(params, nullptr, false);
  if (value.is_discarded()) return invalid_argument("not valid JSON");
  return value.dump();
}

Status validate_and_resolve(TuneRecord& record) {
  const TuneKey& k = record.key;
  TESSERA_RETURN_IF_ERROR(check_text("library", k.library, true));
  TESSERA_RETURN_IF_ERROR(check_text("primitive", k.primitive, true));
  TESSERA_RETURN_IF_ERROR(check_text("signature", k.signature, true));
  TESSERA_RETURN_IF_ERROR(check_text("device", k.device, true));
  TESSERA_RETURN_IF_ERROR(check_text("version", k.version, true));
  TESSERA_RETURN_IF_ERROR(check_text("determinism", k.determinism, true));
  TESSERA_RETURN_IF_ERROR(check_text("solution", record.solution, false));
  if (record.created_at < 0) return invalid_argument("created_at: must be >= 0");
  if (!record.params.empty()) {
    if (record.solution.empty()) return invalid_argument("params: given without a solution");
    auto params = canonical_params(record.params);
    if (!params.is_ok()) return invalid_argument("params: " + params.status().message());
    record.params = std::move(params).value();
  }
  for (std::size_t i = 0; i < record.candidates.size(); ++i)
    TESSERA_RETURN_IF_ERROR(check_candidate(record.candidates[i], i));

  // The winner: the fastest accepted candidate that matches what the caller named, first on ties.
  const Candidate* best = nullptr;
  bool any_accepted = false;
  for (const Candidate& c : record.candidates) {
    if (!c.accepted) continue;
    any_accepted = true;
    if (!record.solution.empty() && c.solution != record.solution) continue;
    if (!record.params.empty() && c.params != record.params) continue;
    if (best == nullptr || c.median_us < best->median_us) best = &c;
  }
  if (!any_accepted) return invalid_argument("candidates: no candidate is accepted");
  if (best == nullptr) {
    std::string what = "'" + record.solution + "'";
    if (!record.params.empty()) what += " with params " + record.params;
    return invalid_argument("solution: " + what + " is not an accepted candidate");
  }
  if (record.solution.empty()) {
    record.solution = best->solution;
    record.params = best->params;
  } else if (record.params.empty()) {
    record.params = best->params;
  }
  return Status::ok();
}

std::string describe_key(const TuneKey& key) {
  return key.library + "/" + key.primitive + " [" + key.signature + "] on '" + key.device + "' v" +
         key.version + " (" + key.determinism + ")";
}

}  // namespace tessera::tune::detail
