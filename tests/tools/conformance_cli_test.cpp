// `tessera conformance` on node-test folders made here: a passing test, a test whose expected
// output is wrong, an unsupported op, a missing data file and an excluded test; the summary line,
// the exit code, the exclusion file (reasons required, prefixes) and --write-exclusions.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_run.hpp"
#include "onnx_builder.hpp"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

std::string f32_tensor(const std::vector<std::int64_t>& dims, const std::vector<float>& v) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t.add_dims(d);
  for (float x : v) t.add_float_data(x);
  return t.SerializeAsString();
}

// DIR/name: y = op(x) on a [4] f32 input, with x and the expected y given.
void make_test(const fs::path& dir, const std::string& name, const std::string& op, const std::vector<float>& x,
               const std::vector<float>& y) {
  OnnxBuilder b(17, name);
  b.input("x", {"4"});
  b.output("y", {"4"});
  b.node(op, {"x"}, {"y"});
  write(dir / name / "model.onnx", b.bytes());
  write(dir / name / "test_data_set_0" / "input_0.pb", f32_tensor({4}, x));
  write(dir / name / "test_data_set_0" / "output_0.pb", f32_tensor({4}, y));
}

struct Suite {
  TempDir tmp;
  fs::path dir = tmp.path() / "node";
  Suite() {
    make_test(dir, "test_relu", "Relu", {-1, 0, 2, -3}, {0, 0, 2, 0});
    make_test(dir, "test_neg_wrong", "Neg", {1, 2, 3, 4}, {-1, -2, -3, -5});
    make_test(dir, "test_acosh_like", "ImageDecoder", {1, 2, 3, 4}, {0, 1, 1, 2});
    make_test(dir, "test_relu_nodata", "Relu", {1, 2, 3, 4}, {1, 2, 3, 4});
    fs::remove(dir / "test_relu_nodata" / "test_data_set_0" / "output_0.pb");
  }
  std::string exclusions(const std::string& text) const {
    write(tmp.path() / "ex.txt", text);
    return (tmp.path() / "ex.txt").string();
  }
};

TEST(ConformanceCli, CountsPassesAndFailuresWithReasons) {
  Suite s;
  const Outcome r = run("conformance " + s.dir.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("1 passed, 3 failed, 0 skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL test_neg_wrong  test_data_set_0: output 'y'[3] is -4, expected -5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL test_acosh_like  session: node 0 'ImageDecoder1' (ImageDecoder): the op ImageDecoder is not supported"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL test_relu_nodata  test_data_set_0: no output_0.pb"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("test_relu "), std::string::npos) << r.out;
  const Outcome v = run("conformance --verbose " + s.dir.string() + " --filter relu");
  EXPECT_NE(v.out.find("PASS test_relu\n"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("1 passed, 1 failed, 0 skipped"), std::string::npos) << v.out;
}

TEST(ConformanceCli, ExclusionsSkipAndAreRewritten) {
  Suite s;
  const std::string ex = s.exclusions("# comment\ntest_neg_wrong  the expected output is wrong\ntest_acosh*  ImageDecoder is not built\n"
                                      "test_relu_nodata\tno output file  # trailing comment\n");
  const Outcome r = run("conformance " + s.dir.string() + " --exclude " + ex);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 passed, 0 failed, 3 skipped"), std::string::npos) << r.out;

  const std::string fewer = s.exclusions("test_acosh_like  ImageDecoder is not built\n");
  const std::string written = s.tmp.file("written.txt");
  const Outcome w = run("conformance " + s.dir.string() + " --exclude " + fewer + " --write-exclusions " + written);
  EXPECT_EQ(w.code, 1);
  std::ifstream in(written);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("test_acosh_like  ImageDecoder is not built\n"), std::string::npos) << text;
  EXPECT_NE(text.find("test_neg_wrong  test_data_set_0: output 'y'[3] is -4, expected -5\n"), std::string::npos) << text;
  const Outcome again = run("conformance " + s.dir.string() + " --exclude " + written);
  EXPECT_EQ(again.code, 0) << again.out;
}

TEST(ConformanceCli, BadArgumentsAreOneLineErrors) {
  Suite s;
  const Outcome no_reason = run("conformance " + s.dir.string() + " --exclude " + s.exclusions("test_relu\n"));
  EXPECT_NE(no_reason.code, 0);
  EXPECT_NE(no_reason.err.find(":1: 'test_relu' has no reason"), std::string::npos) << no_reason.err;
  const Outcome no_dir = run("conformance " + s.tmp.file("absent"));
  EXPECT_NE(no_dir.code, 0);
  EXPECT_NE(no_dir.err.find("is not a folder of ONNX node tests"), std::string::npos) << no_dir.err;
  const Outcome none = run("conformance " + s.dir.string() + " --filter zzz");
  EXPECT_NE(none.code, 0);
  EXPECT_NE(none.err.find("no tests"), std::string::npos) << none.err;
  write(s.dir / "test_relu" / "test_data_set_0" / "input_0.pb", "\xff\xff garbage");
  const Outcome bad = run("conformance " + s.dir.string() + " --filter test_relu");
  EXPECT_NE(bad.out.find("FAIL test_relu  input_0.pb: not an ONNX tensor"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace tessera::testing
