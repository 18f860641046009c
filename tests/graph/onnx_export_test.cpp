// ONNX export: import -> (infer) -> export -> import gives the same IR, for the seed models
// (Conv + Relu with a symbolic batch, If branches with captures, Loop with typed-field
// constants of several types and omitted optional inputs); ONNX's checker (Debian's libonnx,
// test only) accepts the exported files; save_onnx replaces a file whole.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <tessera/graph.hpp>

#include "test_util.hpp"

namespace tessera::graph {
namespace {

std::filesystem::path corpus() {
  const char* root = std::getenv("TESSERA_TEST_DATA");
  return std::filesystem::path(root ? root : "tests") / "fuzz" / "corpus" / "onnx_import";
}

Model import_bytes(const std::string& s) {
  Result<Model> r = import_onnx(std::as_bytes(std::span<const char>(s.data(), s.size())));
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? std::move(r).value() : Model{};
}

TEST(OnnxExport, RoundTripsTheSeedModels) {
  int models = 0;
  for (const auto& e : std::filesystem::directory_iterator(corpus())) {
    if (!e.is_regular_file()) continue;  // crashes/: fuzz inputs, not valid models
    SCOPED_TRACE(e.path().string());
    Result<Model> first = import_onnx(e.path());
    ASSERT_TRUE(first.is_ok()) << first.status().to_string();
    const Status inferred = infer_types(first.value());
    ASSERT_TRUE(inferred.is_ok()) << inferred.to_string();
    Result<std::string> bytes = export_onnx(first.value());
    ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
    Model again = import_bytes(bytes.value());
    ASSERT_TRUE(verify(again).is_ok());
    // The same IR, up to the producer line.
    again.producer_name = first.value().producer_name;
    again.producer_version = first.value().producer_version;
    EXPECT_EQ(to_text(again), to_text(first.value()));
    // The exported model is valid ONNX where Debian's checker (IR 8, opset 17) can judge it:
    // its IR version wants a shape on every graph output.
    const Graph& g = first.value().graph;
    const bool shaped = std::all_of(g.outputs.begin(), g.outputs.end(), [&](ValueId v) { return g.values[static_cast<std::size_t>(v)].type.shape.has_value(); });
    if (first.value().opsets.at("") <= 17 && shaped) {
      onnx::ModelProto mp;
      ASSERT_TRUE(mp.ParseFromString(bytes.value()));
      mp.set_ir_version(std::min<std::int64_t>(mp.ir_version(), 8));  // the newest Debian's checker knows
      EXPECT_NO_THROW(onnx::checker::check_model(mp)) << to_text(again);
    }
    ++models;
  }
  EXPECT_GE(models, 3);
}

TEST(OnnxExport, SaveReplacesTheFileWhole) {
  testing::TempDir dir;
  Result<Model> m = import_onnx(corpus() / "conv_relu.onnx");
  ASSERT_TRUE(m.is_ok());
  const auto path = dir.path() / "out.onnx";
  std::ofstream(path) << "old";
  ASSERT_TRUE(save_onnx(m.value(), path).is_ok());
  Result<Model> back = import_onnx(path);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back.value().graph.nodes.size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  // Into a folder that does not exist: an error, and nothing written.
  const Status s = save_onnx(m.value(), dir.path() / "missing" / "out.onnx");
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.to_string();
  // A model that does not verify is not written.
  Model broken = m.value();
  broken.graph.nodes[1].inputs[0] = 1234;
  EXPECT_EQ(save_onnx(broken, path).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(import_onnx(path).is_ok());
}

}  // namespace
}  // namespace tessera::graph
