// Fuzz target for the .npy parser: any input must parse or fail cleanly; whatever parses must
// survive a write and re-read unchanged, and writing it again must give the same bytes.
#include <cstdint>
#include <cstdlib>
#include <span>

#include <tessera/core/npy.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tessera::Result<tessera::Tensor> parsed = tessera::parse_npy(std::span(data, size));
  if (!parsed.is_ok()) {
    const tessera::StatusCode code = parsed.status().code();
    if (code != tessera::StatusCode::kParseError && code != tessera::StatusCode::kOutOfMemory)
      std::abort();
    return 0;
  }
  tessera::Result<std::string> bytes = tessera::to_npy_bytes(parsed.value());
  if (!bytes.is_ok()) std::abort();
  tessera::Result<tessera::Tensor> again = tessera::parse_npy(bytes.value());
  if (!again.is_ok() || !tessera::bitwise_equal(parsed.value(), again.value())) std::abort();
  tessera::Result<std::string> rewritten = tessera::to_npy_bytes(again.value());
  if (!rewritten.is_ok() || rewritten.value() != bytes.value()) std::abort();
  return 0;
}
