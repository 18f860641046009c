// Fuzz target: TuneDb::import_json on arbitrary bytes. It must never crash; whatever it accepts
// must export and import again (the round trip the CLI relies on).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <tessera/tune/tune_db.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static tessera::tune::TuneDb db = tessera::tune::TuneDb::open(":memory:").value_or_throw();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto imported = db.import_json(text);
  if (!imported.is_ok()) return 0;
  auto exported = db.export_json();
  if (!exported.is_ok()) std::abort();
  auto again = db.import_json(*exported);
  auto count = db.count();
  if (!again.is_ok() || !count.is_ok() || *again != *count) std::abort();
  auto records = db.list();
  if (!records.is_ok()) std::abort();
  for (const auto& r : *records) (void)tessera::tune::explain(r);
  if (!db.clear().is_ok()) std::abort();
  return 0;
}
