// export_json / import_json: round trips, replacement, and malformed documents that must be
// refused with a located message while the database stays as it was.
#include <nlohmann/json.hpp>

#include "tune/tune_test_util.hpp"

namespace tessera::tune {
namespace {

using nlohmann::json;
using testing_util::gemm_key;
using testing_util::gemm_record;
using testing_util::open_ok;
using testing_util::ScratchDir;
using testing_util::value_of;

// Several libraries, devices and parameter shapes, with awkward text in the key.
void fill(TuneDb& db) {
  ASSERT_TRUE(db.record(gemm_record()).is_ok());
  ASSERT_TRUE(
      db.record(gemm_record(gemm_key("f32 m=1 n=1 k=1", "cpu \"quoted\" \\ né 🚀"))).is_ok());
  TuneRecord fft;
  fft.key = {"fft", "r2c_1d", "f32 n=1000 batch=3", "gpu gfx942", "0.1.0", "run_to_run"};
  fft.created_at = 1234567890;
  fft.candidates = {
      {"stockham_radix_8_5", R"({"factors": [8, 5, 5, 5], "twiddles": "table"})", 3.25, 0.125, 31,
       true, ""},
      {"bluestein", R"({"inner": 2048})", 7.0, 0.5, 31, true, "fallback"},
      {"radix_2", "null", 0.0, 0.0, 0, false, "1000 is not a power of two"},
  };
  ASSERT_TRUE(db.record(fft).is_ok());
}

std::string export_ok(TuneDb& db, const Filter& filter = {}) {
  auto text = db.export_json(filter);
  EXPECT_TRUE(text.is_ok()) << text.status().to_string();
  return text.is_ok() ? *text : std::string();
}

TEST(TuneJson, ExportFormat) {
  TuneDb db = open_ok(":memory:");
  fill(db);
  json doc = json::parse(export_ok(db));
  EXPECT_EQ(doc["format"], "tessera-tune");
  EXPECT_EQ(doc["version"], 1);
  ASSERT_EQ(doc["entries"].size(), 3u);
  const json& fft = doc["entries"][2];
  EXPECT_EQ(fft["library"], "fft");
  EXPECT_EQ(fft["solution"], "stockham_radix_8_5");
  EXPECT_EQ(fft["params"]["factors"], json({8, 5, 5, 5}));  // params are JSON, not strings
  EXPECT_EQ(fft["created_at"], 1234567890);
  EXPECT_EQ(fft["candidates"][2]["accepted"], false);
  EXPECT_EQ(fft["candidates"][2]["reason"], "1000 is not a power of two");
  EXPECT_EQ(fft["candidates"][2]["params"], nullptr);

  json only_fft = json::parse(export_ok(db, {.library = "fft"}));
  EXPECT_EQ(only_fft["entries"].size(), 1u);
  json empty = json::parse(export_ok(db, {.library = "none"}));
  EXPECT_TRUE(empty["entries"].is_array());
  EXPECT_TRUE(empty["entries"].empty());
}

TEST(TuneJson, ExportImportRoundTripIsExact) {
  ScratchDir dir;
  TuneDb source = open_ok(dir.file("a.sqlite"));
  fill(source);
  const std::string text = export_ok(source);

  TuneDb fresh = open_ok(dir.file("b.sqlite"));
  auto n = fresh.import_json(text);
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  EXPECT_EQ(*n, 3);
  auto a = source.list();
  auto b = fresh.list();
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(*a, *b);  // keys, winners, params, times, reasons, created_at: all identical
  EXPECT_EQ(export_ok(fresh), text);

  // Importing again replaces the equal keys instead of adding.
  ASSERT_TRUE(fresh.import_json(text).is_ok());
  EXPECT_EQ(value_of(fresh.count()), 3);
}

TEST(TuneJson, ImportReplacesEntriesWithEqualKeys) {
  TuneDb db = open_ok(":memory:");
  fill(db);
  TuneDb other = open_ok(":memory:");
  TuneRecord newer = gemm_record();
  newer.candidates = {{"gemm_f32_avx512_8x24", "", 11.0, 0.2, 12, true, ""}};
  ASSERT_TRUE(other.record(newer).is_ok());
  auto n = db.import_json(export_ok(other));
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(value_of(db.count()), 3);
  auto got = db.lookup(gemm_key());
  ASSERT_TRUE(got.is_ok() && got->has_value());
  EXPECT_EQ((*got)->solution, "gemm_f32_avx512_8x24");
  EXPECT_EQ((*got)->candidates.size(), 1u);
}

TEST(TuneJson, EmptyDocumentImportsNothing) {
  TuneDb db = open_ok(":memory:");
  auto n = db.import_json(R"({"format": "tessera-tune", "version": 1, "entries": []})");
  ASSERT_TRUE(n.is_ok()) << n.status().to_string();
  EXPECT_EQ(*n, 0);
}

// A valid export to break in one place at a time.
json valid_document() {
  TuneDb db = open_ok(":memory:");
  fill(db);
  return json::parse(export_ok(db));
}

TEST(TuneJson, MalformedImportsAreRefusedWithTheirLocation) {
  struct Case {
    const char* what;
    std::string text;
    const char* message;
  };
  auto edited = [](auto edit) {
    json doc = valid_document();
    edit(doc);
    return doc.dump();
  };
  std::string deep = R"({"format": "tessera-tune", "version": 1, "entries": )" +
                     std::string(5000, '[') + std::string(5000, ']') + "}";
  const Case cases[] = {
      {"empty input", "", "not JSON"},
      {"not JSON", "format: tessera-tune\nentries: 3\n", "not JSON"},
      {"truncated", edited([](json&) {}).substr(0, 150), "not JSON"},
      {"NaN literal",
       std::string(R"({"format": "tessera-tune", "version": 1, "entries": [)") +
           R"({"median_us": NaN}]})",
       "not JSON"},
      {"not an object", "[1, 2, 3]", "document: expected an object"},
      {"wrong format tag", edited([](json& d) { d["format"] = "miopen-perfdb"; }),
       "format: expected \"tessera-tune\", got \"miopen-perfdb\""},
      {"format missing", edited([](json& d) { d.erase("format"); }), "format: missing"},
      {"newer version", edited([](json& d) { d["version"] = 2; }),
       "version: unsupported version 2"},
      {"version a string", edited([](json& d) { d["version"] = "1"; }),
       "version: expected an integer"},
      {"entries not an array", edited([](json& d) { d["entries"] = json::object(); }),
       "entries: expected an array"},
      {"entry not an object", edited([](json& d) { d["entries"][1] = 42; }),
       "entries[1]: expected an object"},
      {"unknown top-level field", edited([](json& d) { d["extra"] = true; }),
       "document: unknown field 'extra'"},
      {"missing key field", edited([](json& d) { d["entries"][1].erase("device"); }),
       "entries[1].device: missing"},
      {"missing candidates", edited([](json& d) { d["entries"][2].erase("candidates"); }),
       "entries[2].candidates: missing"},
      {"missing candidate field",
       edited([](json& d) { d["entries"][0]["candidates"][2].erase("samples"); }),
       "entries[0].candidates[2].samples: missing"},
      {"time is a string",
       edited([](json& d) { d["entries"][2]["candidates"][1]["median_us"] = "fast"; }),
       "entries[2].candidates[1].median_us: expected a number"},
      {"time is null",
       edited([](json& d) { d["entries"][2]["candidates"][0]["spread_us"] = nullptr; }),
       "entries[2].candidates[0].spread_us: expected a number"},
      {"samples fractional",
       edited([](json& d) { d["entries"][0]["candidates"][0]["samples"] = 2.5; }),
       "entries[0].candidates[0].samples: expected an integer"},
      {"accepted not a bool",
       edited([](json& d) { d["entries"][0]["candidates"][0]["accepted"] = 1; }),
       "entries[0].candidates[0].accepted: expected true or false"},
      {"library not a string", edited([](json& d) { d["entries"][0]["library"] = 7; }),
       "entries[0].library: expected a string"},
      {"unknown candidate field",
       edited([](json& d) { d["entries"][1]["candidates"][0]["median_ms"] = 3; }),
       "entries[1].candidates[0]: unknown field 'median_ms'"},
      {"negative time",
       edited([](json& d) { d["entries"][2]["candidates"][1]["median_us"] = -0.5; }),
       "entries[2].candidates[1].median_us: must be finite and >= 0"},
      {"negative spread",
       edited([](json& d) { d["entries"][0]["candidates"][1]["spread_us"] = -1; }),
       "entries[0].candidates[1].spread_us: must be finite and >= 0"},
      {"huge number", std::string(R"({"format": "tessera-tune", "version": 1e999, "entries": []})"),
       "not JSON"},
      {"samples overflow", edited([](json& d) {
         d["entries"][0]["candidates"][0]["samples"] = std::uint64_t{18000000000000000000u};
       }),
       "entries[0].candidates[0].samples: out of range"},
      {"empty solution", edited([](json& d) { d["entries"][0]["solution"] = ""; }),
       "entries[0].solution: must not be empty"},
      {"empty key field", edited([](json& d) { d["entries"][1]["version"] = ""; }),
       "entries[1].version: must not be empty"},
      {"no accepted candidate", edited([](json& d) {
         for (json& c : d["entries"][2]["candidates"]) {
           c["accepted"] = false;
           c["reason"] = "slow";
         }
       }),
       "entries[2].candidates: no candidate is accepted"},
      {"rejected without reason",
       edited([](json& d) { d["entries"][2]["candidates"][2]["reason"] = ""; }),
       "entries[2].candidates[2].reason: a rejected candidate needs a reason"},
      {"winner not a candidate", edited([](json& d) { d["entries"][2]["solution"] = "radix_3"; }),
       "entries[2].solution: 'radix_3' with params"},
      {"duplicate key", edited([](json& d) { d["entries"].push_back(d["entries"][0]); }),
       "entries[3]: same key as entries[0]"},
      {"negative created_at", edited([](json& d) { d["entries"][0]["created_at"] = -5; }),
       "entries[0].created_at: must be >= 0"},
      {"deep nesting", deep, "nested deeper than"},
  };

  ScratchDir dir;
  TuneDb db = open_ok(dir.file("tune.sqlite"));
  ASSERT_TRUE(db.record(gemm_record(gemm_key("f32 m=7 n=7 k=7"))).is_ok());
  const std::string before = export_ok(db);
  for (const Case& c : cases) {
    auto n = db.import_json(c.text);
    ASSERT_FALSE(n.is_ok()) << c.what;
    EXPECT_EQ(n.status().code(), StatusCode::kParseError)
        << c.what << ": " << n.status().to_string();
    EXPECT_NE(n.status().message().find(c.message), std::string::npos)
        << c.what << ": expected '" << c.message << "' in '" << n.status().message() << "'";
    EXPECT_NE(n.status().message().find(dir.file("tune.sqlite")), std::string::npos)
        << n.status().message();
    EXPECT_EQ(export_ok(db), before) << c.what << " changed the database";
  }
}

TEST(TuneJson, ErrorInALateEntryWritesNothing) {
  json doc = valid_document();
  doc["entries"][2]["candidates"][0]["median_us"] = "slow";
  TuneDb db = open_ok(":memory:");
  auto n = db.import_json(doc.dump());
  ASSERT_FALSE(n.is_ok());
  EXPECT_EQ(value_of(db.count()), 0);  // entries[0] and [1] were valid, but nothing was written
}

}  // namespace
}  // namespace tessera::tune
