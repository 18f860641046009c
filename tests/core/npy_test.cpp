// .npy reading and writing: round trips, hand-crafted files (big-endian, fortran order,
// versions 2.0/3.0, header variations), every malformed-file error, atomic writes, and numpy
// itself as the oracle in both directions (tests/core/npy_numpy_oracle.py).
#include <algorithm>
#include <bit>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <thread>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tessera/core/float8.hpp>
#include <tessera/core/npy.hpp>

namespace tessera {
namespace {

namespace fs = std::filesystem;
using Bytes = std::string;

// A tensor with deterministic arbitrary bytes (bools 0 or 1).
Tensor random_tensor(const Shape& shape, DType dtype, unsigned seed) {
  Tensor t = Tensor::empty(shape, dtype).value();
  std::mt19937 rng(seed);
  auto* p = static_cast<std::uint8_t*>(t.data());
  for (std::size_t i = 0; i < t.nbytes(); ++i)
    p[i] = static_cast<std::uint8_t>(dtype == DType::kBool ? rng() & 1 : rng() & 0xff);
  return t;
}

// The data bytes of `t` in row-major order, native (little-endian) byte order.
Bytes raw_bytes(const Tensor& t) {
  Tensor c = t.contiguous().value();
  return c.nbytes() == 0 ? Bytes() : Bytes(static_cast<const char*>(c.data()), c.nbytes());
}

Bytes byte_swapped(Bytes b, std::size_t unit) {
  for (std::size_t i = 0; i + unit <= b.size(); i += unit)
    std::reverse(b.begin() + static_cast<long>(i), b.begin() + static_cast<long>(i + unit));
  return b;
}

std::string shape_literal(const Shape& s) {
  std::string out = "(";
  for (int d = 0; d < s.rank(); ++d)
    out += std::to_string(s[d]) + (s.rank() == 1 ? "," : d + 1 < s.rank() ? ", " : "");
  return out + ")";
}

std::string header_dict(const std::string& descr, bool fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// A hand-made .npy file: `dict` is the header text; a newline is appended unless told not to.
Bytes npy_file(const std::string& dict, const Bytes& data, int major = 1, bool newline = true) {
  const std::string header = dict + (newline ? "\n" : "");
  Bytes out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

Tensor parse_ok(const Bytes& bytes) {
  Result<Tensor> r = parse_npy(bytes);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? r.value() : Tensor();
}

void expect_error(const Result<Tensor>& r, StatusCode code, const std::string& substring) {
  ASSERT_FALSE(r.is_ok()) << "accepted a file that should fail with: " << substring;
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find(substring), std::string::npos)
      << "message:  " << r.status().message() << "\nexpected: " << substring;
}

Bytes slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const Bytes& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

const std::vector<Shape>& shapes_rank_0_to_5() {
  static const std::vector<Shape> kShapes = {
      {}, {0}, {7}, {2, 3}, {2, 0, 3}, {3, 1, 4}, {1, 2, 3, 4}, {2, 1, 2, 1, 3}, {0, 0}};
  return kShapes;
}

// A fresh directory per test, removed afterwards.
class NpyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tessera_npy_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

TEST(NpyRoundTrip, EveryDTypeAndRank) {
  unsigned seed = 1;
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : shapes_rank_0_to_5()) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape.to_string());
      Tensor t = random_tensor(shape, dtype, seed++);
      Bytes bytes = to_npy_bytes(t).value();
      EXPECT_NE(bytes.find("'descr': '" + npy_descr(dtype) + "'"), Bytes::npos);
      Tensor back = parse_ok(bytes);
      EXPECT_TRUE(bitwise_equal(t, back));
      EXPECT_EQ(back.strides(), contiguous_strides(back.shape()));
    }
  }
}

TEST_F(NpyFiles, RoundTripThroughFiles) {
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : {Shape{}, Shape{5, 0}, Shape{2, 3, 4}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape.to_string());
      Tensor t = random_tensor(shape, dtype, 7);
      const std::string p = path(std::string(dtype_name(dtype)) + ".npy");
      ASSERT_TRUE(write_npy(p, t).is_ok());
      Result<Tensor> back = read_npy(p);
      ASSERT_TRUE(back.is_ok()) << back.status().to_string();
      EXPECT_TRUE(bitwise_equal(t, back.value()));
      EXPECT_EQ(slurp(p), to_npy_bytes(t).value());
    }
  }
  EXPECT_EQ(entries().size(), std::size(kAllDTypes)) << "temporary files left behind";
}

TEST(NpyRoundTrip, SpecialValuesBitExact) {
  const std::vector<std::uint16_t> f16_bits = {0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff,
                                               0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xfe55, 0x7fff};
  const std::vector<std::uint16_t> bf16_bits = {0x0000, 0x8000, 0x0001, 0x007f, 0x7f7f, 0x7f80,
                                                0xff80, 0x7fc0, 0x7f81, 0xffc1, 0x7fff};
  std::vector<f16> h;
  for (auto b : f16_bits) h.push_back(f16::from_bits(b));
  std::vector<bf16> bh;
  for (auto b : bf16_bits) bh.push_back(bf16::from_bits(b));
  const std::vector<std::uint32_t> f32_bits = {0x7fa00001, 0xffc12345, 0x7f800000,
                                               0x00000001, 0x80000000, 0x7f7fffff};
  std::vector<float> f;
  for (auto b : f32_bits) f.push_back(std::bit_cast<float>(b));
  std::vector<double> d = {std::bit_cast<double>(0x7ff0000000000001ull),
                           std::bit_cast<double>(0xfff8dead0000beefull), -0.0, 5e-324};
  std::vector<std::complex<float>> c = {{f[0], f[1]}, {-0.0f, f[2]}};
  std::vector<std::complex<double>> z = {{d[0], d[1]}, {d[2], d[3]}};
  for (Tensor t :
       {Tensor::from_vector(Shape{12}, h).value(), Tensor::from_vector(Shape{11}, bh).value(),
        Tensor::from_vector(Shape{6}, f).value(), Tensor::from_vector(Shape{4}, d).value(),
        Tensor::from_vector(Shape{2}, c).value(), Tensor::from_vector(Shape{2}, z).value()}) {
    SCOPED_TRACE(t.to_string());
    EXPECT_TRUE(bitwise_equal(t, parse_ok(to_npy_bytes(t).value())));
  }
}

TEST(NpyWrite, HeaderMatchesNumpyLayout) {
  Bytes b = to_npy_bytes(Tensor::zeros(Shape{2, 3}, DType::kF32).value()).value();
  ASSERT_EQ(b.size(), 128u + 24u);
  EXPECT_EQ(b.substr(0, 8), Bytes("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(b.substr(8, 2), Bytes("\x76\x00", 2));  // 118: the data starts at byte 128
  EXPECT_EQ(b.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(b[127], '\n');
  EXPECT_NE(to_npy_bytes(Tensor::zeros(Shape{3}, DType::kI8).value())
                .value()
                .find("'descr': '|i1', 'fortran_order': False, 'shape': (3,), }"),
            Bytes::npos);
  EXPECT_NE(to_npy_bytes(Tensor::zeros(Shape{}, DType::kBF16).value())
                .value()
                .find("'descr': 'bfloat16', 'fortran_order': False, 'shape': (), }"),
            Bytes::npos);
}

TEST(NpyWrite, NonContiguousInLogicalOrder) {
  Tensor base = random_tensor(Shape{4, 6, 5}, DType::kF64, 3);
  std::vector<Tensor> views = {
      base.slice(1, 1, 6, 2).value(),                            // strided
      base.permute({2, 0, 1}).value(),                           // permuted
      base.select(2, 3).value(),                                 // a column
      base.slice(0, 3, -1, -1).value().transpose(1, 2).value(),  // reversed and transposed
      base.slice(1, 2, 2).value()};                              // empty
  for (const Tensor& v : views) {
    SCOPED_TRACE(v.to_string());
    Tensor back = parse_ok(to_npy_bytes(v).value());
    EXPECT_TRUE(bitwise_equal(v, back));
    EXPECT_EQ(raw_bytes(back), raw_bytes(v.clone().value()));
  }
}

TEST(NpyWrite, HugeHeaderUsesVersion2) {
  std::vector<std::int64_t> ones(30000, 1);
  Tensor t = random_tensor(Shape(ones), DType::kI32, 9);
  Bytes b = to_npy_bytes(t).value();
  EXPECT_EQ(b[6], 2);
  EXPECT_EQ(b.size() % 64, 4u);  // header padded to 64; 4 data bytes
  EXPECT_TRUE(bitwise_equal(t, parse_ok(b)));
}

TEST(NpyWrite, RejectsUndefinedAndDeviceTensors) {
  Result<std::string> undefined = to_npy_bytes(Tensor());
  EXPECT_EQ(undefined.status().code(), StatusCode::kInvalidArgument);
  float storage[4] = {};
  auto buffer = Buffer::wrap(storage, sizeof(storage), DeviceLoc{DeviceType::kCuda, 0});
  Tensor on_device = Tensor::view_of(buffer, 0, DType::kF32, Shape{4}, Strides{1}).value();
  Result<std::string> r = to_npy_bytes(on_device);
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("cuda:0"), std::string::npos) << r.status().message();
}

TEST(NpyRead, BigEndian) {
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBF16 || dtype_size(dtype) == 1) continue;
    SCOPED_TRACE(dtype_name(dtype));
    Tensor t = random_tensor(Shape{3, 5}, dtype, 11);
    std::string descr = npy_descr(dtype);
    descr[0] = '>';  // (not ">" + substr: GCC 12 -Wrestrict false positive at -O3)
    std::size_t unit = dtype_size(dtype) / (is_complex(dtype) ? 2 : 1);
    Bytes file = npy_file(header_dict(descr, false, "(3, 5)"), byte_swapped(raw_bytes(t), unit));
    EXPECT_TRUE(bitwise_equal(t, parse_ok(file)));
  }
  Tensor c = Tensor::from_vector(Shape{1}, std::vector<std::complex<float>>{{1.5f, -2.0f}}).value();
  Bytes be_c64("\x3f\xc0\x00\x00\xc0\x00\x00\x00", 8);  // each half swapped, order kept
  EXPECT_TRUE(bitwise_equal(c, parse_ok(npy_file(header_dict(">c8", false, "(1,)"), be_c64))));
}

TEST(NpyRead, ByteOrderMarks) {
  Tensor f = random_tensor(Shape{4}, DType::kF32, 5);
  EXPECT_TRUE(
      bitwise_equal(f, parse_ok(npy_file(header_dict("=f4", false, "(4,)"), raw_bytes(f)))));
  for (const char* descr : {"|i1", "<i1", ">i1", "=i1"}) {
    Tensor i = random_tensor(Shape{4}, DType::kI8, 5);
    EXPECT_TRUE(
        bitwise_equal(i, parse_ok(npy_file(header_dict(descr, false, "(4,)"), raw_bytes(i)))))
        << descr;
  }
  Tensor b = random_tensor(Shape{4}, DType::kBool, 5);
  EXPECT_TRUE(
      bitwise_equal(b, parse_ok(npy_file(header_dict("<b1", false, "(4,)"), raw_bytes(b)))));
}

// Column-major bytes of `t` (the first index varies fastest).
Bytes fortran_bytes(const Tensor& t) {
  std::vector<int> reversed(static_cast<std::size_t>(t.rank()));
  for (int d = 0; d < t.rank(); ++d) reversed[static_cast<std::size_t>(d)] = t.rank() - 1 - d;
  return raw_bytes(t.permute(reversed).value());
}

TEST(NpyRead, FortranOrder) {
  for (const Shape& shape : {Shape{2, 3, 4}, Shape{5, 2}, Shape{6}, Shape{}, Shape{3, 0, 2},
                             Shape{1, 5}, Shape{4, 1, 1}}) {
    SCOPED_TRACE(shape.to_string());
    Tensor t = random_tensor(shape, DType::kI32, 13);
    Tensor back =
        parse_ok(npy_file(header_dict("<i4", true, shape_literal(shape)), fortran_bytes(t)));
    EXPECT_TRUE(bitwise_equal(t, back));
    EXPECT_EQ(back.strides(), contiguous_strides(back.shape()));
  }
  Tensor z = random_tensor(Shape{3, 2}, DType::kC128, 17);
  Bytes be = byte_swapped(fortran_bytes(z), 8);
  EXPECT_TRUE(bitwise_equal(z, parse_ok(npy_file(header_dict(">c16", true, "(3, 2)"), be))));
}

TEST(NpyRead, Version2And3Headers) {
  Tensor t = random_tensor(Shape{2, 2}, DType::kF16, 19);
  for (int major : {2, 3}) {
    SCOPED_TRACE(major);
    EXPECT_TRUE(bitwise_equal(
        t, parse_ok(npy_file(header_dict("<f2", false, "(2, 2)"), raw_bytes(t), major))));
  }
  // A version 3.0 (UTF-8) header: non-ASCII text can only be an unknown descr.
  expect_error(parse_npy(npy_file(header_dict("<f\xc3\xa9", false, "(2, 2)"), raw_bytes(t), 3)),
               StatusCode::kParseError, "unknown descr '<f\\xc3\\xa9'");
}

TEST(NpyRead, HeaderSyntaxVariations) {
  Tensor t = random_tensor(Shape{3, 4}, DType::kU8, 23);
  const Bytes data = raw_bytes(t);
  for (const char* dict : {
           "{'descr':'|u1','fortran_order':False,'shape':(3,4)}",
           "{\"descr\": \"|u1\", \"fortran_order\": False, \"shape\": (3, 4,)}",
           "  {  'shape' : ( 3 , 4 ) ,\n\t'fortran_order' : False , 'descr' : '|u1' , }  ",
           "{'descr': '|u1', 'fortran_order': False, 'shape': (3L, 4L), }",
           "{'descr': '|u1', 'fortran_order': False, 'shape': ((3), 4)}",
       }) {
    SCOPED_TRACE(dict);
    EXPECT_TRUE(bitwise_equal(t, parse_ok(npy_file(dict, data))));
  }
  Tensor scalar =
      parse_ok(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': ( )}", Bytes(8, '\0')));
  EXPECT_EQ(scalar.rank(), 0);
}

TEST(NpyRead, BoolBytesNormalised) {
  Tensor b = parse_ok(npy_file(header_dict("|b1", false, "(4,)"), Bytes("\x00\x01\x02\xff", 4)));
  EXPECT_EQ(raw_bytes(b), Bytes("\x00\x01\x01\x01", 4));
}

struct BadFile {
  const char* name;
  Bytes bytes;
  const char* message;
};

TEST(NpyRead, MalformedFiles) {
  const Bytes d24(24, '\0');
  auto f4 = [&](const std::string& shape) {
    return npy_file(header_dict("<f4", false, shape), d24);
  };
  auto with_dict = [&](const std::string& dict) { return npy_file(dict, d24); };
  const std::vector<BadFile> cases = {
      {"empty file", "", "truncated preamble: the file has 0 bytes"},
      {"magic prefix only", "\x93NUMP", "truncated preamble"},
      {"bad magic", "PK\x03\x04 a zip file, not npy", "bad magic 'PK\\x03\\x04 a' at byte 0"},
      {"version 4.0", Bytes("\x93NUMPY\x04\x00\x10\x00", 10), "unsupported npy format version 4.0"},
      {"version 1.1", Bytes("\x93NUMPY\x01\x01\x10\x00", 10), "unsupported npy format version 1.1"},
      {"short length v2", Bytes("\x93NUMPY\x02\x00\x10\x00", 10), "too few for the header length"},
      {"length past end", Bytes("\x93NUMPY\x01\x00\xff\x00{}\n", 13),
       "header length 255 (at byte 8) runs past the end of the 13-byte file"},
      {"no newline", npy_file(header_dict("<f4", false, "(6,)"), d24, 1, false),
       "does not end with a newline"},
      {"empty header", npy_file("", "", 1, false), "does not end with a newline"},
      {"not a dict", with_dict("['descr', 'shape']"), "the header is not a dict"},
      {"missing key", with_dict("{'descr': '<f4', 'fortran_order': False}"), "missing key 'shape'"},
      {"extra key", with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'foo': 1}"),
       "unexpected key 'foo'"},
      {"duplicate key",
       with_dict("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}"),
       "duplicate key 'descr'"},
      {"unknown descr", npy_file(header_dict("<U2", false, "(12,)"), d24), "unknown descr '<U2'"},
      {"descr no order", npy_file(header_dict("f4", false, "(6,)"), d24), "unknown descr 'f4'"},
      {"descr | multi-byte", npy_file(header_dict("|i4", false, "(6,)"), d24),
       "byte order '|' is only valid for 1-byte types"},
      {"structured descr",
       with_dict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,)}"),
       "'descr' is a list"},
      {"fortran_order int", with_dict("{'descr': '<f4', 'fortran_order': 0, 'shape': (6,)}"),
       "'fortran_order' at byte 44 is an integer, not True or False"},
      {"shape list", f4("[2, 3]"), "is a list, not a tuple of integers"},
      {"shape int", f4("(6)"), "is an integer, not a tuple of integers"},
      {"negative dim", f4("(2, -3)"), "dimension 1 at byte 64 is negative (-3)"},
      {"float dim", f4("(2.5, 3)"), "dimension 0 at byte 61 is a float, not an integer"},
      {"string dim", f4("('6',)"), "dimension 0 at byte 61 is a string, not an integer"},
      {"huge dim", f4("(99999999999999999999,)"), "does not fit in 64 bits"},
      {"byte size overflow", f4("(4611686018427387904, 4)"),
       "is too large: its byte size overflows"},
      {"overflow beside 0", f4("(0, 4611686018427387904, 4)"), "byte size overflows"},
      {"data truncated", f4("(7,)"),
       "data is truncated: shape [7] of f32 needs 28 bytes of data, the file has 24"},
      {"trailing bytes", f4("(5,)"), "4 trailing bytes after the data (at byte 88"},
      {"unterminated string", with_dict("{'descr': '<f4}"), "unterminated string"},
      {"missing colon", with_dict("{'descr' '<f4'}"), "expected ':' after key 'descr'"},
      {"missing comma", with_dict("{'descr': '<f4' 'shape': ()}"),
       "expected ',' or '}' after the value of 'descr'"},
      {"text after dict", with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} x"),
       "unexpected text after the header dict: 'x"},
      {"leading zeros", f4("(06,)"), "integer with leading zeros"},
      {"lower-case bool", with_dict("{'descr': '<f4', 'fortran_order': false, 'shape': (6,)}"),
       "unknown name 'false'"},
      {"escape", with_dict("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (6,)}"),
       "escape sequences"},
      {"deep nesting", f4(std::string(100, '(') + std::string(100, ')')),
       "nested deeper than 32 levels"},
      {"unclosed tuple", with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (6,"),
       "expected a value, found the end of the header"},
      {"bare minus", f4("(-,)"), "'-' not followed by digits"},
      {"empty value", with_dict("{'descr': }"), "expected a value, found '}'"},
  };
  for (const BadFile& c : cases) {
    SCOPED_TRACE(c.name);
    expect_error(parse_npy(c.bytes), StatusCode::kParseError, c.message);
  }
}

TEST(NpyRead, HostileShapeAllocatesNothing) {
  const std::uint64_t before = host_allocator().stats().allocations;
  expect_error(
      parse_npy(npy_file(header_dict("<f8", false, "(1099511627776, 1024)"), Bytes(8, '\0'))),
      StatusCode::kParseError, "data is truncated");
  expect_error(parse_npy(npy_file(header_dict("<c16", false, "(4611686018427387,)"), "")),
               StatusCode::kParseError, "data is truncated");
  EXPECT_EQ(host_allocator().stats().allocations, before);
}

TEST_F(NpyFiles, ReadErrorsNameThePath) {
  const std::string missing = path("missing.npy");
  expect_error(read_npy(missing), StatusCode::kIoError,
               "reading " + missing + ": cannot open: No such file or directory");
  expect_error(read_npy(dir_.string()), StatusCode::kIoError, "Is a directory");
  const std::string bad = path("bad.npy");
  spit(bad, npy_file(header_dict("<f4", false, "(1099511627776,)"), Bytes(4, '\0')));
  const std::uint64_t before = host_allocator().stats().allocations;
  expect_error(read_npy(bad), StatusCode::kParseError, "reading " + bad + ": data is truncated");
  EXPECT_EQ(host_allocator().stats().allocations, before);
  spit(bad, "\x93NUMPY\x01");
  expect_error(read_npy(bad), StatusCode::kParseError, "reading " + bad + ": truncated preamble");
}

TEST_F(NpyFiles, ReadsFromAPipe) {
  const std::string fifo = path("pipe.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Tensor t = random_tensor(Shape{300, 70}, DType::kF32, 29);  // more than one pipe buffer
  const Bytes bytes = to_npy_bytes(t).value();
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
  Result<Tensor> back = read_npy(fifo);
  writer.join();
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(bitwise_equal(t, back.value()));
}

TEST_F(NpyFiles, WriteIntoMissingDirectoryFails) {
  const std::string p = path("no/such/dir/x.npy");
  Status s = write_npy(p, random_tensor(Shape{2}, DType::kF32, 1));
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("writing " + p + ": cannot create a temporary file in"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("No such file or directory"), std::string::npos) << s.message();
  EXPECT_TRUE(entries().empty());
}

TEST_F(NpyFiles, FailedWriteKeepsOldFile) {
  const std::string p = path("keep.npy");
  Tensor old = random_tensor(Shape{3, 3}, DType::kI64, 31);
  ASSERT_TRUE(write_npy(p, old).is_ok());
  const Bytes before = slurp(p);
  Status s = write_npy(p, Tensor());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("writing " + p + ": cannot write an undefined tensor"),
            std::string::npos);
  EXPECT_EQ(slurp(p), before);
  // The rename fails (the target is a non-empty directory): nothing is left behind.
  const std::string d = path("a_directory");
  fs::create_directory(d);
  spit(d + "/inside", "x");
  s = write_npy(d, old);
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("into place"), std::string::npos) << s.message();
  EXPECT_TRUE(fs::is_directory(d));
  EXPECT_EQ(entries(), (std::vector<std::string>{"a_directory", "keep.npy"}));
}

TEST_F(NpyFiles, OverwriteReplacesFile) {
  const std::string p = path("x.npy");
  spit(p, "old contents");
  Tensor t = random_tensor(Shape{4}, DType::kC64, 37);
  ASSERT_TRUE(write_npy(p, t).is_ok());
  EXPECT_TRUE(bitwise_equal(t, read_npy(p).value()));
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);  // ordinary permissions, not a temp file's 0600
}

// value(k) of npy_numpy_oracle.py, for k in row-major order.
Tensor oracle_values(DType dtype, const Shape& shape) {
  Tensor t = Tensor::empty(shape, dtype).value();
  for (std::int64_t k = 0; k < shape.numel(); ++k) {
    const double real = static_cast<double>(k) * 0.5 - 3.625,
                 imag = 0.0 - 0.25 * static_cast<double>(k);
    switch (dtype) {
      case DType::kBool:
        t.data<bool>()[k] = k % 3 == 0;
        break;
      case DType::kI8:
        t.data<std::int8_t>()[k] = static_cast<std::int8_t>(k * 7 - 80);
        break;
      case DType::kU8:
        t.data<std::uint8_t>()[k] = static_cast<std::uint8_t>(k * 10 + 5);
        break;
      case DType::kI32:
        t.data<std::int32_t>()[k] = static_cast<std::int32_t>(k * 100003 - 1000000);
        break;
      case DType::kI64:
        t.data<std::int64_t>()[k] = k * (std::int64_t{1} << 40) - 3;
        break;
      case DType::kF16:
        t.data<f16>()[k] = f16(static_cast<float>(real));
        break;
      case DType::kBF16:
        t.data<bf16>()[k] = bf16(static_cast<float>(real));
        break;
      case DType::kF32:
        t.data<float>()[k] = static_cast<float>(real);
        break;
      case DType::kF64:
        t.data<double>()[k] = real;
        break;
      case DType::kC64:
        t.data<std::complex<float>>()[k] = {static_cast<float>(real), static_cast<float>(imag)};
        break;
      case DType::kC128:
        t.data<std::complex<double>>()[k] = {real, imag};
        break;
      case DType::kI16:
        t.data<std::int16_t>()[k] = static_cast<std::int16_t>(k * 1001 - 12000);
        break;
      case DType::kU16:
        t.data<std::uint16_t>()[k] = static_cast<std::uint16_t>(k * 2731 + 7);
        break;
      case DType::kU32:
        t.data<std::uint32_t>()[k] = static_cast<std::uint32_t>(k * 150000007 + 11);
        break;
      case DType::kU64:
        t.data<std::uint64_t>()[k] = static_cast<std::uint64_t>(k) * (std::uint64_t{1} << 59) + 13;
        break;
      case DType::kF8E4M3FN:
      case DType::kF8E4M3FNUZ:
      case DType::kF8E5M2:
      case DType::kF8E5M2FNUZ:  // no numpy dtype: only tessera's own round trips read these
        static_cast<std::uint8_t*>(t.data())[k] = f32_to_f8_bits(static_cast<float>(real), *float8_of(dtype));
        break;
      case DType::kI4:
      case DType::kI2:  // sign-extended, in range
        static_cast<std::int8_t*>(t.data())[k] = static_cast<std::int8_t>(k % (dtype == DType::kI4 ? 16 : 4) - (dtype == DType::kI4 ? 8 : 2));
        break;
      case DType::kU4:
      case DType::kU2:
        static_cast<std::uint8_t*>(t.data())[k] = static_cast<std::uint8_t>(k % (dtype == DType::kU4 ? 16 : 4));
        break;
      case DType::kF4E2M1:
        static_cast<std::uint8_t*>(t.data())[k] = f32_to_f4e2m1_bits(static_cast<float>(real));
        break;
      case DType::kF8E8M0:
        static_cast<std::uint8_t*>(t.data())[k] = f32_to_e8m0_bits(static_cast<float>(real));
        break;
    }
  }
  return t;
}

// Runs the oracle script in `mode` on this test's directory; skips when numpy is missing.
class NpyOracle : public NpyFiles {
 protected:
  std::optional<std::string> unavailable() const {
    const char* data = std::getenv("TESSERA_TEST_DATA");
    if (data == nullptr) return "TESSERA_TEST_DATA is not set (run through ctest)";
    if (::access("/usr/bin/python3", X_OK) != 0) return "/usr/bin/python3 is not installed";
    if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
      return "numpy is not installed for /usr/bin/python3 (apt-get install python3-numpy)";
    return std::nullopt;
  }
  int run_oracle(const std::string& mode) const {
    const std::string script =
        std::string(std::getenv("TESSERA_TEST_DATA")) + "/core/npy_numpy_oracle.py";
    return std::system(
        ("/usr/bin/python3 '" + script + "' " + mode + " '" + dir_.string() + "'").c_str());
  }
};

TEST_F(NpyOracle, NumpyWritesTesseraReads) {
  if (auto why = unavailable()) GTEST_SKIP() << *why;
  ASSERT_EQ(run_oracle("write"), 0);
  auto check = [&](const std::string& file, const Tensor& want) {
    SCOPED_TRACE(file);
    Result<Tensor> got = read_npy(path(file));
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    EXPECT_TRUE(bitwise_equal(got.value(), want)) << got->to_string();
  };
  const Shape shape{2, 3, 4};
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBF16 || is_small_float(dtype) || dtype == DType::kI4 || dtype == DType::kU4 || dtype == DType::kI2 ||
        dtype == DType::kU2)
      continue;  // numpy has none of these
    const std::string name(dtype_name(dtype));
    if (dtype_size(dtype) == 1) {
      check(name + ".npy", oracle_values(dtype, shape));
    } else {
      check(name + "_le.npy", oracle_values(dtype, shape));
      check(name + "_be.npy", oracle_values(dtype, shape));
    }
  }
  check("f64_fortran.npy", oracle_values(DType::kF64, shape));
  check("i32_fortran_be.npy", oracle_values(DType::kI32, shape));
  check("f32_scalar.npy", Tensor::from_vector(Shape{}, std::vector<float>{2.5f}).value());
  check("f32_empty.npy", Tensor::empty(Shape{0, 3}, DType::kF32).value());
  check("f32_v2.npy", oracle_values(DType::kF32, shape));
  check("f32_v3.npy", oracle_values(DType::kF32, shape));
}

TEST_F(NpyOracle, TesseraWritesNumpyReads) {
  if (auto why = unavailable()) GTEST_SKIP() << *why;
  for (DType dtype : kAllDTypes)
    ASSERT_TRUE(write_npy(path(std::string(dtype_name(dtype)) + ".npy"),
                          oracle_values(dtype, Shape{2, 3, 4}))
                    .is_ok());
  ASSERT_TRUE(write_npy(path("f32_scalar.npy"),
                        Tensor::from_vector(Shape{}, std::vector<float>{2.5f}).value())
                  .is_ok());
  ASSERT_TRUE(
      write_npy(path("f32_empty.npy"), Tensor::empty(Shape{0, 3}, DType::kF32).value()).is_ok());
  Tensor permuted = oracle_values(DType::kF64, Shape{4, 3, 2}).permute({2, 1, 0}).value();
  ASSERT_TRUE(write_npy(path("f64_permuted.npy"), permuted).is_ok());
  EXPECT_EQ(run_oracle("check"), 0) << "npy_numpy_oracle.py check found mismatches (printed above)";
}

}  // namespace
}  // namespace tessera
