// export_json / import_json: the JSON exchange format of docs/tune.md,
//   {"format": "tessera-tune", "version": 1, "entries": [ {key fields, solution, params,
//    created_at, candidates: [ {solution, params, median_us, spread_us, samples, accepted,
//    reason} ]} ]}
// An import is validated completely before anything is written; errors name their location.
#include <array>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include <tessera/core/log.hpp>

#include "internal.hpp"

namespace tessera::tune {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr char kFormatTag[] = "tessera-tune";
constexpr int kFormatVersion = 1;

// Reads one JSON object field by field; the first problem is kept with its location.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string location)
      : object_(object), location_(std::move(location)) {}

  Status check_fields(std::initializer_list<std::string_view> known) const {
    for (const auto& item : object_.items()) {
      bool found = false;
      for (std::string_view k : known) found = found || item.key() == k;
      if (!found) return error_at("", "unknown field '" + item.key() + "'");
    }
    return Status::ok();
  }

  Result<const json*> field(std::string_view name) const {
    auto it = object_.find(name);
    if (it == object_.end()) return error_at(name, "missing");
    return &*it;
  }

  Result<std::string> string(std::string_view name) const {
    TESSERA_ASSIGN_OR_RETURN(const json* v, field(name));
    if (!v->is_string()) return error_at(name, "expected a string");
    return v->get<std::string>();
  }

  Result<double> number(std::string_view name) const {
    TESSERA_ASSIGN_OR_RETURN(const json* v, field(name));
    if (!v->is_number()) return error_at(name, "expected a number");
    return v->get<double>();
  }

  Result<std::int64_t> integer(std::string_view name) const {
    TESSERA_ASSIGN_OR_RETURN(const json* v, field(name));
    if (v->is_number_unsigned()) {
      if (v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
        return error_at(name, "out of range");
      return static_cast<std::int64_t>(v->get<std::uint64_t>());
    }
    if (!v->is_number_integer()) return error_at(name, "expected an integer");
    return v->get<std::int64_t>();
  }

  Result<bool> boolean(std::string_view name) const {
    TESSERA_ASSIGN_OR_RETURN(const json* v, field(name));
    if (!v->is_boolean()) return error_at(name, "expected true or false");
    return v->get<bool>();
  }

  // Any JSON value, returned as its canonical text.
  Result<std::string> json_text(std::string_view name) const {
    TESSERA_ASSIGN_OR_RETURN(const json* v, field(name));
    return v->dump();
  }

  Result<const json*> array(std::string_view name) const {
    TESSERA_ASSIGN_OR_RETURN(const json* v, field(name));
    if (!v->is_array()) return error_at(name, "expected an array");
    return v;
  }

  Status error_at(std::string_view name, std::string message) const {
    std::string where = location_;
    if (!name.empty()) where += (where.empty() ? "" : ".") + std::string(name);
    if (where.empty()) where = "document";
    return parse_error(where + ": " + message);
  }

 private:
  const json& object_;
  std::string location_;
};

Result<Candidate> parse_candidate(const json& value, const std::string& location) {
  if (!value.is_object()) return parse_error(location + ": expected an object");
  ObjectReader in(value, location);
  TESSERA_RETURN_IF_ERROR(in.check_fields(
      {"solution", "params", "median_us", "spread_us", "samples", "accepted", "reason"}));
  Candidate c;
  TESSERA_ASSIGN_OR_RETURN(c.solution, in.string("solution"));
  TESSERA_ASSIGN_OR_RETURN(c.params, in.json_text("params"));
  TESSERA_ASSIGN_OR_RETURN(c.median_us, in.number("median_us"));
  TESSERA_ASSIGN_OR_RETURN(c.spread_us, in.number("spread_us"));
  TESSERA_ASSIGN_OR_RETURN(c.samples, in.integer("samples"));
  TESSERA_ASSIGN_OR_RETURN(c.accepted, in.boolean("accepted"));
  TESSERA_ASSIGN_OR_RETURN(c.reason, in.string("reason"));
  return c;
}

Result<TuneRecord> parse_entry(const json& value, const std::string& location) {
  if (!value.is_object()) return parse_error(location + ": expected an object");
  ObjectReader in(value, location);
  TESSERA_RETURN_IF_ERROR(
      in.check_fields({"library", "primitive", "signature", "device", "version", "determinism",
                       "solution", "params", "created_at", "candidates"}));
  TuneRecord r;
  TESSERA_ASSIGN_OR_RETURN(r.key.library, in.string("library"));
  TESSERA_ASSIGN_OR_RETURN(r.key.primitive, in.string("primitive"));
  TESSERA_ASSIGN_OR_RETURN(r.key.signature, in.string("signature"));
  TESSERA_ASSIGN_OR_RETURN(r.key.device, in.string("device"));
  TESSERA_ASSIGN_OR_RETURN(r.key.version, in.string("version"));
  TESSERA_ASSIGN_OR_RETURN(r.key.determinism, in.string("determinism"));
  TESSERA_ASSIGN_OR_RETURN(r.solution, in.string("solution"));
  if (r.solution.empty()) return in.error_at("solution", "must not be empty");
  TESSERA_ASSIGN_OR_RETURN(r.params, in.json_text("params"));
  TESSERA_ASSIGN_OR_RETURN(r.created_at, in.integer("created_at"));
  TESSERA_ASSIGN_OR_RETURN(const json* candidates, in.array("candidates"));
  for (std::size_t i = 0; i < candidates->size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(
        Candidate c,
        parse_candidate((*candidates)[i], location + ".candidates[" + std::to_string(i) + "]"));
    r.candidates.push_back(std::move(c));
  }
  // The contract of record() (messages are relative to the entry).
  Status s = detail::validate_and_resolve(r);
  if (!s.is_ok()) return parse_error(location + "." + s.message());
  return r;
}

Result<std::vector<TuneRecord>> parse_document(std::string_view text) {
  if (!detail::nesting_within(text, detail::kMaxJsonDepth))
    return parse_error("document: nested deeper than " + std::to_string(detail::kMaxJsonDepth) +
                       " levels");
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, ..." without the bracketed id.
    if (auto end = what.find("] "); what.rfind("[json.", 0) == 0 && end != std::string::npos)
      what.erase(0, end + 2);
    return parse_error("not JSON: " + what);
  }
  if (!doc.is_object()) return parse_error("document: expected an object");
  ObjectReader in(doc, "");
  TESSERA_RETURN_IF_ERROR(in.check_fields({"format", "version", "entries"}));
  TESSERA_ASSIGN_OR_RETURN(std::string format, in.string("format"));
  if (format != kFormatTag)
    return parse_error("format: expected \"" + std::string(kFormatTag) + "\", got \"" + format +
                       "\"");
  TESSERA_ASSIGN_OR_RETURN(std::int64_t version, in.integer("version"));
  if (version != kFormatVersion)
    return parse_error("version: unsupported version " + std::to_string(version) +
                       " (this tessera reads " + std::to_string(kFormatVersion) + ")");
  TESSERA_ASSIGN_OR_RETURN(const json* entries, in.array("entries"));

  std::vector<TuneRecord> records;
  std::map<std::array<std::string, 6>, std::size_t> seen;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const std::string location = "entries[" + std::to_string(i) + "]";
    TESSERA_ASSIGN_OR_RETURN(TuneRecord r, parse_entry((*entries)[i], location));
    const TuneKey& k = r.key;
    auto [it, inserted] =
        seen.emplace(std::array<std::string, 6>{k.library, k.primitive, k.signature, k.device,
                                                k.version, k.determinism},
                     i);
    if (!inserted)
      return parse_error(location + ": same key as entries[" + std::to_string(it->second) + "]");
    records.push_back(std::move(r));
  }
  return records;
}

// Stored params are canonical JSON; a file edited by another tool might not be.
Result<ordered_json> params_value(const std::string& text, const TuneKey& key) {
  ordered_json value = ordered_json::parse(text, nullptr, false);
  if (value.is_discarded() || !detail::nesting_within(text, detail::kMaxJsonDepth))
    return parse_error("stored params of " + detail::describe_key(key) + " are not JSON");
  return value;
}

}  // namespace

Result<std::string> TuneDb::export_json(const Filter& filter) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<TuneRecord> records, list(filter));
  ordered_json entries = ordered_json::array();
  for (const TuneRecord& r : records) {
    ordered_json candidates = ordered_json::array();
    for (const Candidate& c : r.candidates) {
      TESSERA_ASSIGN_OR_RETURN(ordered_json params, params_value(c.params, r.key));
      candidates.push_back({{"solution", c.solution},
                            {"params", std::move(params)},
                            {"median_us", c.median_us},
                            {"spread_us", c.spread_us},
                            {"samples", c.samples},
                            {"accepted", c.accepted},
                            {"reason", c.reason}});
    }
    TESSERA_ASSIGN_OR_RETURN(ordered_json params, params_value(r.params, r.key));
    entries.push_back({{"library", r.key.library},
                       {"primitive", r.key.primitive},
                       {"signature", r.key.signature},
                       {"device", r.key.device},
                       {"version", r.key.version},
                       {"determinism", r.key.determinism},
                       {"solution", r.solution},
                       {"params", std::move(params)},
                       {"created_at", r.created_at},
                       {"candidates", std::move(candidates)}});
  }
  ordered_json doc = {
      {"format", kFormatTag}, {"version", kFormatVersion}, {"entries", std::move(entries)}};
  try {
    return doc.dump(2) + "\n";
  } catch (const ordered_json::exception& e) {
    // Text written into the file by another tool that is not UTF-8.
    return parse_error(std::string("cannot export: ") + e.what())
        .with_context("tuning database " + path_);
  }
}

Result<std::int64_t> TuneDb::import_json(std::string_view text) {
  auto records = parse_document(text);
  if (!records.is_ok()) {
    TESSERA_VLOG(kTune) << "import refused: " << records.status().message();
    return records.status().with_context("tuning database " + path_ + ": import");
  }
  if (records->empty()) return std::int64_t{0};
  TESSERA_RETURN_IF_ERROR(write_records(*records));
  TESSERA_VLOG(kTune) << "imported " << records->size() << " entries into " << path_;
  return static_cast<std::int64_t>(records->size());
}

}  // namespace tessera::tune
