// Fuzz target for ONNX import: any bytes must import or fail with one of the expected status
// codes, never crash; whatever imports must pass verify(), survive type inference (an error
// at most), print, and go through the graph passes of level 2 (without an evaluator: no node
// is computed; every convolution made channels-last) to a model that verifies, and expand
// back to ai.onnx (or fail cleanly) to a model that verifies.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include <tessera/graph.hpp>
#include <tessera/graph/passes.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using tessera::StatusCode;
  auto model = tessera::graph::import_onnx(std::as_bytes(std::span(data, size)));
  if (!model.is_ok()) {
    const StatusCode c = model.status().code();
    if (c != StatusCode::kParseError && c != StatusCode::kInvalidArgument && c != StatusCode::kUnsupported &&
        c != StatusCode::kOutOfMemory)
      std::abort();
    return 0;
  }
  if (!tessera::graph::verify(model.value()).is_ok()) std::abort();
  const tessera::Status inferred = tessera::graph::infer_types(model.value());
  if (!inferred.is_ok() && inferred.code() != StatusCode::kInvalidArgument) std::abort();
  if (!tessera::graph::verify(model.value()).is_ok()) std::abort();
  if (tessera::graph::to_text(model.value()).empty()) std::abort();
  if (!inferred.is_ok()) return 0;
  tessera::graph::OptimizeOptions options;  // every convolution channels-last: the layout pass runs too
  options.conv_layout = [](const tessera::graph::Graph&, const tessera::graph::Node&) { return tessera::graph::LayoutAdvice{true, "fuzz"}; };
  auto optimised = tessera::graph::optimize(model.value(), options);
  if (!optimised.is_ok()) return 0;
  if (!tessera::graph::verify(model.value()).is_ok()) std::abort();
  tessera::graph::Model portable = model.value();
  if (tessera::graph::expand_fused_ops(portable).is_ok() && !tessera::graph::verify(portable).is_ok()) std::abort();
  return 0;
}
