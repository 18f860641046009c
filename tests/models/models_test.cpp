// torchvision models and a transformer encoder exported to ONNX by Debian's PyTorch at test
// time (export_torchvision.py, a ctest fixture): tessera's outputs against PyTorch's (max abs
// error <= 1e-4 max |output|), at batch 1 and at batch 2 through the symbolic batch dim; and
// tessera's type inference on the real graphs against ONNX's own shape inference (Debian's
// libonnx; opsets 13 and 14).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <tessera/core/npy.hpp>
#include <tessera/session.hpp>

namespace tessera {
namespace {

std::filesystem::path model_dir(const std::string& name) {
  const char* root = std::getenv("TESSERA_MODELS_DIR");
  return std::filesystem::path(root ? root : "tests/models") / name;
}

class Models : public ::testing::TestWithParam<std::string> {};

TEST_P(Models, MatchPyTorch) {
  const auto dir = model_dir(GetParam());
  Result<exec::Session> s = exec::Session::open(dir / "model.onnx");
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  const Tensor x = read_npy((dir / "input.npy").string()).value_or_throw();
  const auto expected = read_npy((dir / "expected.npy").string()).value_or_throw().to_vector<float>();
  float largest = 0;
  for (float v : expected) largest = std::max(largest, std::fabs(v));
  ASSERT_GT(largest, 0.0f);

  auto out = s.value().run({{"input", x}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const auto got = out.value()[0].tensor.to_vector<float>();
  ASSERT_EQ(got.size(), expected.size());
  float worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - expected[i]));
  EXPECT_LE(worst, 1e-4f * largest) << "max |output| " << largest;

  // The same input twice through the symbolic batch dim: both rows as PyTorch's.
  std::vector<std::int64_t> dims2 = x.shape().dims();
  dims2[0] = 2;
  Tensor x2 = Tensor::empty(Shape(dims2), DType::kF32).value_or_throw();
  for (int n = 0; n < 2; ++n) std::memcpy(x2.data<float>() + n * x.numel(), x.data(), x.nbytes());
  auto out2 = s.value().run({{"input", x2}});
  ASSERT_TRUE(out2.is_ok()) << out2.status().to_string();
  const auto got2 = out2.value()[0].tensor.to_vector<float>();
  ASSERT_EQ(got2.size(), 2 * expected.size());
  for (std::size_t i = 0; i < got2.size(); ++i) {
    ASSERT_LE(std::fabs(got2[i] - expected[i % expected.size()]), 1e-4f * largest) << i;
  }
}

// The memory plan: after the first run with some input dims (which records sizes) the runs use
// one arena. Their outputs are bitwise those of a session without a plan, on other input
// values too; outputs handed back are not in the arena (a later run leaves them alone); the
// arena is at most half the naive sum of the intermediate tensors.
TEST_P(Models, PlannedArenaMatchesUnplannedRuns) {
  const auto dir = model_dir(GetParam());
  exec::SessionOptions no_plan;
  no_plan.plan_memory = false;
  exec::Session planned = exec::Session::open(dir / "model.onnx").value_or_throw();
  exec::Session plain = exec::Session::open(dir / "model.onnx", no_plan).value_or_throw();
  const Tensor x = read_npy((dir / "input.npy").string()).value_or_throw();
  Tensor y = x.clone().value_or_throw();
  for (std::int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = 0.25f - 0.5f * y.data<float>()[i];
  std::vector<float> first;
  Tensor kept;
  int run = 0;
  for (const Tensor* in : std::initializer_list<const Tensor*>{&x, &y, &x, &y}) {
    auto a = planned.run({{"input", *in}});
    auto b = plain.run({{"input", *in}});
    ASSERT_TRUE(a.is_ok() && b.is_ok()) << a.status().to_string() << b.status().to_string();
    const auto got = a.value()[0].tensor.to_vector<float>(), want = b.value()[0].tensor.to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << "run " << run;
    if (run++ == 0) {
      first = got;
      kept = a.value()[0].tensor;
    }
  }
  const auto later = kept.to_vector<float>();
  EXPECT_EQ(std::memcmp(later.data(), first.data(), later.size() * sizeof(float)), 0) << "a later run changed an output";
  const exec::MemoryPlanReport p = planned.memory_plan();
  EXPECT_TRUE(p.made);
  EXPECT_GT(p.planned, 0);
  EXPECT_LE(p.arena_bytes * 2, p.naive_bytes) << "arena " << p.arena_bytes << " of " << p.naive_bytes;
  EXPECT_FALSE(plain.memory_plan().made);
}

TEST_P(Models, TypesAgreeWithOnnxShapeInference) {
  const auto path = model_dir(GetParam()) / "model.onnx";
  graph::Model m = graph::import_onnx(path).value_or_throw();
  ASSERT_TRUE(graph::infer_types(m).is_ok());
  onnx::ModelProto mp;
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(mp.ParseFromIstream(&in));
  mp.mutable_graph()->clear_value_info();
  onnx::shape_inference::InferShapes(mp);
  int compared = 0;
  for (const auto& vi : mp.graph().value_info()) {
    const graph::ValueId id = m.graph.find(vi.name());
    ASSERT_NE(id, graph::kNoValue) << vi.name();
    const graph::ValueType& ours = m.graph.values[static_cast<std::size_t>(id)].type;
    const auto& tt = vi.type().tensor_type();
    EXPECT_EQ(static_cast<int>(ours.elem), tt.elem_type()) << vi.name();
    if (!tt.has_shape()) continue;
    ASSERT_TRUE(ours.shape.has_value()) << vi.name();
    ASSERT_EQ(static_cast<int>(ours.shape->size()), tt.shape().dim_size()) << vi.name() << ": " << graph::to_text(ours);
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      const graph::Dim& o = (*ours.shape)[static_cast<std::size_t>(i)];
      if (d.has_dim_value() && o.has_size()) {
        EXPECT_EQ(o.size, d.dim_value()) << vi.name() << ": " << graph::to_text(ours);
      } else if (d.dim_param() == "N") {  // the batch: carried as N, or unknown (Flatten's product)
        EXPECT_TRUE(o.symbol == "N" || (!o.has_size() && o.symbol.empty())) << vi.name() << ": " << graph::to_text(ours);
      }  // (ONNX's own unk__ symbols: tessera may know the size, e.g. the rank that Shape returns)
    }
    ++compared;
  }
  EXPECT_GE(compared, static_cast<int>(m.graph.nodes.size()) / 2);
}

INSTANTIATE_TEST_SUITE_P(Torchvision, Models, ::testing::Values("resnet18", "mobilenet_v2", "squeezenet1_1", "transformer"));

}  // namespace
}  // namespace tessera
