// .npy reading and writing: preamble, a strict parser of the header's Python dict literal,
// the layout it describes (checked against the file size before allocating), then the data.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <system_error>
#include <tuple>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tessera/core/npy.hpp>

namespace tessera {
namespace {

constexpr bool kHostBigEndian = std::endian::native == std::endian::big;
constexpr std::uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kMagicSize = sizeof(kMagic);
constexpr int kMaxNesting = 32;
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 62;

struct DescrCode {
  std::string_view code;
  DType dtype;
};
constexpr DescrCode kDescrCodes[] = {{"b1", DType::kBool}, {"i1", DType::kI8},  {"u1", DType::kU8},
                                     {"i4", DType::kI32},  {"i8", DType::kI64}, {"f2", DType::kF16},
                                     {"f4", DType::kF32},  {"f8", DType::kF64}, {"c8", DType::kC64},
                                     {"c16", DType::kC128}, {"i2", DType::kI16}, {"u2", DType::kU16},
                                     {"u4", DType::kU32},  {"u8", DType::kU64}};
constexpr std::string_view kBf16Descr = "bfloat16";
// numpy has no 8-bit floats nor sub-byte types either: ml_dtypes' names, one byte each.
constexpr std::pair<std::string_view, DType> kFloat8Descrs[] = {
    {"float8_e4m3fn", DType::kF8E4M3FN}, {"float8_e4m3fnuz", DType::kF8E4M3FNUZ}, {"float8_e5m2", DType::kF8E5M2},
    {"float8_e5m2fnuz", DType::kF8E5M2FNUZ}, {"int4", DType::kI4}, {"uint4", DType::kU4}, {"int2", DType::kI2},
    {"uint2", DType::kU2}, {"float4_e2m1fn", DType::kF4E2M1}, {"float8_e8m0fnu", DType::kF8E8M0}};

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// Bytes from a hostile file, quoted for an error message: printable ASCII as is, the rest \xNN.
std::string quoted(std::string_view bytes, std::size_t max_chars = 24) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "'";
  for (std::size_t i = 0; i < bytes.size() && i < max_chars; ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      s += static_cast<char>(c);
    } else {
      s += "\\x";
      s += kHex[c >> 4];
      s += kHex[c & 15];
    }
  }
  if (bytes.size() > max_chars) s += "...";
  return s + "'";
}

// ---------------------------------------------------------------------------------------------
// The header: a Python dict literal. Values are strings, ints, floats, True/False/None, tuples
// and lists; anything else is a syntax error.

struct PyValue {
  enum class Kind { kString, kInt, kFloat, kBool, kNone, kTuple, kList };
  Kind kind = Kind::kNone;
  std::string text;            // kString
  std::int64_t integer = 0;    // kInt
  bool int_overflow = false;   // kInt beyond int64
  bool boolean = false;        // kBool
  std::vector<PyValue> items;  // kTuple, kList
  std::size_t offset = 0;      // byte offset in the file where the value starts
};

std::string_view kind_name(PyValue::Kind k) {
  switch (k) {
    case PyValue::Kind::kString:
      return "a string";
    case PyValue::Kind::kInt:
      return "an integer";
    case PyValue::Kind::kFloat:
      return "a float";
    case PyValue::Kind::kBool:
      return "a bool";
    case PyValue::Kind::kNone:
      return "None";
    case PyValue::Kind::kTuple:
      return "a tuple";
    case PyValue::Kind::kList:
      return "a list";
  }
  return "a value";
}

struct HeaderDict {
  std::optional<PyValue> descr, fortran_order, shape;
};

class HeaderParser {
 public:
  // `base` is the file offset of text[0], so errors can say where they are.
  HeaderParser(std::string_view text, std::size_t base) : text_(text), base_(base) {}

  Result<HeaderDict> parse() {
    skip_space();
    if (at_end() || peek() != '{')
      return fail("the header is not a dict (it starts with " + quoted(text_.substr(pos_)) + ")");
    ++pos_;
    HeaderDict dict;
    while (true) {
      skip_space();
      if (!at_end() && peek() == '}') break;
      if (at_end() || (peek() != '\'' && peek() != '"'))
        return fail("expected a quoted key or '}', found " + here());
      TESSERA_ASSIGN_OR_RETURN(PyValue key, parse_string());
      skip_space();
      if (at_end() || peek() != ':') return fail("expected ':' after key " + quoted(key.text));
      ++pos_;
      skip_space();
      TESSERA_ASSIGN_OR_RETURN(PyValue value, parse_value(1));
      std::optional<PyValue>* slot = key.text == "descr"           ? &dict.descr
                                     : key.text == "fortran_order" ? &dict.fortran_order
                                     : key.text == "shape"         ? &dict.shape
                                                                   : nullptr;
      if (!slot)
        return fail_at(key.offset, "unexpected key " + quoted(key.text) +
                                       " (keys are 'descr', 'fortran_order', 'shape')");
      if (slot->has_value()) return fail_at(key.offset, "duplicate key '" + key.text + "'");
      *slot = std::move(value);
      skip_space();
      if (!at_end() && peek() == ',') {
        ++pos_;
        continue;
      }
      if (at_end() || peek() != '}')
        return fail("expected ',' or '}' after the value of '" + key.text + "', found " + here());
    }
    ++pos_;
    skip_space();
    if (!at_end())
      return fail("unexpected text after the header dict: " + quoted(text_.substr(pos_)));
    return dict;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  std::string here() const {
    return at_end() ? "the end of the header" : quoted(text_.substr(pos_, 1));
  }
  void skip_space() {
    while (!at_end() && std::strchr(" \t\r\n\f", peek()) != nullptr && peek() != '\0') ++pos_;
  }
  Status fail_at(std::size_t offset, const std::string& what) const {
    return parse_error("npy header at byte " + std::to_string(offset) + ": " + what);
  }
  Status fail(const std::string& what) const { return fail_at(base_ + pos_, what); }

  Result<PyValue> parse_value(int depth) {
    if (depth > kMaxNesting)
      return fail("values nested deeper than " + std::to_string(kMaxNesting) + " levels");
    if (at_end()) return fail("expected a value, found the end of the header");
    char c = peek();
    if (c == '\'' || c == '"') return parse_string();
    if (c == '(' || c == '[') return parse_sequence(depth);
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
    if (std::isalpha(static_cast<unsigned char>(c))) return parse_name();
    return fail("expected a value, found " + here());
  }

  Result<PyValue> parse_string() {
    PyValue v;
    v.kind = PyValue::Kind::kString;
    v.offset = base_ + pos_;
    const char quote = text_[pos_++];
    while (true) {
      if (at_end() || peek() == '\n') return fail_at(v.offset, "unterminated string");
      char c = text_[pos_++];
      if (c == quote) return v;
      if (c == '\\')
        return fail_at(v.offset, "escape sequences in header strings are not supported");
      v.text += c;
    }
  }

  Result<PyValue> parse_number() {
    PyValue v;
    v.kind = PyValue::Kind::kInt;
    v.offset = base_ + pos_;
    bool negative = false;
    if (peek() == '-') {
      negative = true;
      ++pos_;
    }
    const std::size_t digits_start = pos_;
    std::int64_t magnitude = 0;
    while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) {
      std::int64_t next;
      if (__builtin_mul_overflow(magnitude, 10, &next) ||
          __builtin_add_overflow(next, peek() - '0', &next))
        v.int_overflow = true;
      else
        magnitude = next;
      ++pos_;
    }
    std::string_view digits = text_.substr(digits_start, pos_ - digits_start);
    if (digits.empty()) return fail_at(v.offset, "'-' not followed by digits");
    if (!at_end() && (peek() == '.' || peek() == 'e' || peek() == 'E')) {
      v.kind = PyValue::Kind::kFloat;
      if (peek() == '.') ++pos_;
      while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
      if (!at_end() && (peek() == 'e' || peek() == 'E')) {
        ++pos_;
        if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
        if (at_end() || !std::isdigit(static_cast<unsigned char>(peek())))
          return fail_at(v.offset, "malformed float exponent");
        while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
      }
      return v;
    }
    // Python 3 forbids leading zeros ("007"); numpy 1.x on Python 2 wrote longs as "3L".
    if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != digits.npos)
      return fail_at(v.offset, "integer with leading zeros");
    if (!at_end() && (peek() == 'L' || peek() == 'l')) ++pos_;
    v.integer = negative ? -magnitude : magnitude;
    return v;
  }

  Result<PyValue> parse_name() {
    PyValue v;
    v.offset = base_ + pos_;
    std::size_t start = pos_;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')) ++pos_;
    std::string_view name = text_.substr(start, pos_ - start);
    if (name == "True" || name == "False") {
      v.kind = PyValue::Kind::kBool;
      v.boolean = name == "True";
    } else if (name == "None") {
      v.kind = PyValue::Kind::kNone;
    } else {
      return fail_at(v.offset, "unknown name " + quoted(name) + " (expected True, False or None)");
    }
    return v;
  }

  // (a, b), (a,), (), [a, b], []: a parenthesised single value without a comma is that value.
  Result<PyValue> parse_sequence(int depth) {
    PyValue v;
    v.offset = base_ + pos_;
    const char open = text_[pos_++];
    const char close = open == '(' ? ')' : ']';
    v.kind = open == '(' ? PyValue::Kind::kTuple : PyValue::Kind::kList;
    bool saw_comma = false;
    while (true) {
      skip_space();
      if (!at_end() && peek() == close) break;
      TESSERA_ASSIGN_OR_RETURN(PyValue item, parse_value(depth + 1));
      v.items.push_back(std::move(item));
      skip_space();
      if (!at_end() && peek() == ',') {
        saw_comma = true;
        ++pos_;
        continue;
      }
      if (at_end() || peek() != close)
        return fail(std::string("expected ',' or '") + close + "', found " + here());
      break;
    }
    ++pos_;
    if (open == '(' && v.items.size() == 1 && !saw_comma) return std::move(v.items[0]);
    return v;
  }

  std::string_view text_;
  std::size_t base_;
  std::size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------------
// What the preamble and header say about the file.

struct Preamble {
  std::size_t header_offset = 0;
  std::size_t header_len = 0;
};

struct Layout {
  DType dtype = DType::kF32;
  bool swap_bytes = false;
  bool fortran_order = false;
  Shape shape;
  std::size_t data_offset = 0;
  std::size_t data_bytes = 0;
};

// `head` is the start of a file of `file_size` bytes (at least 12 bytes of it when it has them).
Result<Preamble> parse_preamble(std::span<const std::uint8_t> head, std::uint64_t file_size) {
  const std::size_t n = head.size();
  std::string_view chars(reinterpret_cast<const char*>(head.data()), n);
  if (!std::equal(head.begin(), head.begin() + static_cast<long>(std::min(n, kMagicSize)), kMagic))
    return parse_error("not an npy file: bad magic " + quoted(chars.substr(0, kMagicSize)) +
                       " at byte 0 (expected '\\x93NUMPY')");
  if (n < kMagicSize + 2)
    return parse_error("truncated preamble: the file has " + std::to_string(file_size) +
                       " bytes, too few for the npy magic and version");
  const unsigned major = head[6], minor = head[7];
  if (minor != 0 || major < 1 || major > 3)
    return parse_error("unsupported npy format version " + std::to_string(major) + "." +
                       std::to_string(minor) + " at byte 6 (tessera reads 1.0, 2.0 and 3.0)");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (n < kMagicSize + 2 + len_bytes)
    return parse_error("truncated preamble: the file has " + std::to_string(file_size) +
                       " bytes, too few for the header length of an npy " + std::to_string(major) +
                       ".0 file");
  Preamble p;
  for (std::size_t i = 0; i < len_bytes; ++i) p.header_len |= std::size_t{head[8 + i]} << (8 * i);
  p.header_offset = 8 + len_bytes;
  if (p.header_len > file_size - p.header_offset)
    return parse_error("header length " + std::to_string(p.header_len) +
                       " (at byte 8) runs past the end of the " + std::to_string(file_size) +
                       "-byte file");
  return p;
}

Result<std::pair<DType, bool>> decode_descr(const PyValue& v) {
  auto where = " at byte " + std::to_string(v.offset);
  if (v.kind != PyValue::Kind::kString)
    return parse_error("'descr' is " + std::string(kind_name(v.kind)) + where +
                       "; tessera reads only plain dtypes given as a string");
  if (v.text == kBf16Descr) return std::pair{DType::kBF16, kHostBigEndian};
  for (const auto& [name, t] : kFloat8Descrs)
    if (v.text == name) return std::pair{t, false};
  const char order = v.text.empty() ? '\0' : v.text[0];
  std::string_view code = v.text.empty() ? std::string_view() : std::string_view(v.text).substr(1);
  for (const DescrCode& c : kDescrCodes) {
    if (c.code != code || std::strchr("<>=|", order) == nullptr || order == '\0') continue;
    const std::size_t size = dtype_size(c.dtype);
    if (order == '|' && size > 1)
      return parse_error("descr " + quoted(v.text) + where +
                         ": byte order '|' is only valid for 1-byte types");
    const bool file_big = order == '>' || (order == '=' && kHostBigEndian);
    return std::pair{c.dtype, size > 1 && file_big != kHostBigEndian};
  }
  return parse_error("unknown descr " + quoted(v.text, 64) + where +
                     " (tessera reads |b1 |i1 |u1 <i4 <i8 <f2 <f4 <f8 <c8 <c16 in either byte "
                     "order, and bfloat16)");
}

Result<Shape> decode_shape(const PyValue& v, DType dtype) {
  if (v.kind != PyValue::Kind::kTuple)
    return parse_error("'shape' at byte " + std::to_string(v.offset) + " is " +
                       std::string(kind_name(v.kind)) + ", not a tuple of integers");
  std::vector<std::int64_t> dims;
  dims.reserve(v.items.size());
  // Like numpy, the product of the nonzero dims must fit even when another dim is 0.
  std::int64_t bytes = static_cast<std::int64_t>(dtype_size(dtype));
  bool overflow = false;
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    const PyValue& d = v.items[i];
    auto where = "dimension " + std::to_string(i) + " at byte " + std::to_string(d.offset);
    if (d.kind != PyValue::Kind::kInt)
      return parse_error(where + " is " + std::string(kind_name(d.kind)) + ", not an integer");
    if (d.int_overflow) return parse_error(where + " does not fit in 64 bits");
    if (d.integer < 0)
      return parse_error(where + " is negative (" + std::to_string(d.integer) + ")");
    if (d.integer > 0) overflow = overflow || __builtin_mul_overflow(bytes, d.integer, &bytes);
    dims.push_back(d.integer);
  }
  if (overflow || bytes > kMaxBytes)
    return parse_error("shape " + tessera::to_string(dims) + " of " +
                       std::string(dtype_name(dtype)) +
                       " is too large: its byte size overflows (more than 2^62 bytes)");
  return Shape::make(std::move(dims));
}

Result<Layout> parse_layout(std::string_view header, const Preamble& p, std::uint64_t file_size) {
  if (header.empty() || header.back() != '\n')
    return parse_error("npy header at byte " + std::to_string(p.header_offset) +
                       " does not end with a newline");
  TESSERA_ASSIGN_OR_RETURN(HeaderDict dict, HeaderParser(header, p.header_offset).parse());
  for (auto [value, name] :
       {std::pair{&dict.descr, "descr"}, std::pair{&dict.fortran_order, "fortran_order"},
        std::pair{&dict.shape, "shape"}})
    if (!value->has_value())
      return parse_error(std::string("npy header: missing key '") + name + "'");
  Layout layout;
  TESSERA_ASSIGN_OR_RETURN(std::tie(layout.dtype, layout.swap_bytes), decode_descr(*dict.descr));
  if (dict.fortran_order->kind != PyValue::Kind::kBool)
    return parse_error("'fortran_order' at byte " + std::to_string(dict.fortran_order->offset) +
                       " is " + std::string(kind_name(dict.fortran_order->kind)) +
                       ", not True or False");
  layout.fortran_order = dict.fortran_order->boolean;
  TESSERA_ASSIGN_OR_RETURN(layout.shape, decode_shape(*dict.shape, layout.dtype));
  layout.data_offset = p.header_offset + p.header_len;
  layout.data_bytes = static_cast<std::size_t>(layout.shape.numel()) * dtype_size(layout.dtype);
  const std::uint64_t available = file_size - layout.data_offset;
  auto what = "shape " + layout.shape.to_string() + " of " + std::string(dtype_name(layout.dtype)) +
              " needs " + std::to_string(layout.data_bytes) + " bytes of data";
  if (available < layout.data_bytes)
    return parse_error("data is truncated: " + what + ", the file has " +
                       std::to_string(available) + " after the header (at byte " +
                       std::to_string(layout.data_offset) + ")");
  if (available > layout.data_bytes)
    return parse_error(std::to_string(available - layout.data_bytes) +
                       " trailing bytes after the data (at byte " +
                       std::to_string(layout.data_offset + layout.data_bytes) + "; " + what + ")");
  return layout;
}

// Turns the raw data (already in a contiguous tensor of layout.shape) into the result.
Result<Tensor> finish(const Layout& layout, Tensor raw) {
  auto* p = static_cast<std::uint8_t*>(raw.data());
  const std::size_t size = dtype_size(layout.dtype);
  if (layout.swap_bytes) {
    const std::size_t unit = is_complex(layout.dtype) ? size / 2 : size;
    for (std::size_t i = 0; i + unit <= layout.data_bytes; i += unit)
      std::reverse(p + i, p + i + unit);
  }
  if (layout.dtype == DType::kBool)
    for (std::size_t i = 0; i < layout.data_bytes; ++i) p[i] = p[i] != 0;
  if (!layout.fortran_order) return raw;
  Strides strides(static_cast<std::size_t>(layout.shape.rank()));
  std::int64_t stride = 1;
  for (int d = 0; d < layout.shape.rank(); ++d) {
    strides[static_cast<std::size_t>(d)] = stride;
    stride *= std::max<std::int64_t>(layout.shape[d], 1);
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor column_major,
                           Tensor::view_of(raw.buffer(), 0, layout.dtype, layout.shape, strides));
  if (column_major.is_contiguous()) return raw;  // dims of 1 aside, already row-major
  return column_major.clone();
}

// ---------------------------------------------------------------------------------------------
// Reading a file: the header first, then the data straight into the tensor.

struct FileCloser {
  int fd;
  ~FileCloser() { ::close(fd); }
};

// Reads exactly `size` bytes at `offset`; the file was measured first, so EOF means it changed.
Status read_exactly(int fd, void* dst, std::size_t size, std::size_t offset) {
  auto* out = static_cast<char*>(dst);
  while (size > 0) {
    ssize_t got = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return io_error("cannot read: " + errno_text(errno));
    if (got == 0)
      return io_error("the file ended early at byte " + std::to_string(offset) +
                      " (did it change while being read?)");
    out += got;
    size -= static_cast<std::size_t>(got);
    offset += static_cast<std::size_t>(got);
  }
  return Status::ok();
}

// Pipes and other streams have no size up front: read them whole, then parse.
Result<Tensor> read_stream(int fd) {
  std::string bytes;
  char chunk[65536];
  while (true) {
    ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return io_error("cannot read: " + errno_text(errno));
    if (got == 0) break;
    bytes.append(chunk, static_cast<std::size_t>(got));
  }
  return parse_npy(bytes);
}

Result<Tensor> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open: " + errno_text(errno));
  FileCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return io_error("cannot stat: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return read_stream(fd);
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  std::uint8_t head[12];
  const std::size_t head_size = static_cast<std::size_t>(std::min<std::uint64_t>(file_size, 12));
  TESSERA_RETURN_IF_ERROR(read_exactly(fd, head, head_size, 0));
  TESSERA_ASSIGN_OR_RETURN(Preamble preamble, parse_preamble({head, head_size}, file_size));
  std::string header(preamble.header_len, '\0');
  TESSERA_RETURN_IF_ERROR(read_exactly(fd, header.data(), header.size(), preamble.header_offset));
  TESSERA_ASSIGN_OR_RETURN(Layout layout, parse_layout(header, preamble, file_size));
  TESSERA_ASSIGN_OR_RETURN(Tensor raw, Tensor::empty(layout.shape, layout.dtype));
  TESSERA_RETURN_IF_ERROR(read_exactly(fd, raw.data(), layout.data_bytes, layout.data_offset));
  return finish(layout, std::move(raw));
}

// ---------------------------------------------------------------------------------------------
// Writing.

Status check_writable(const Tensor& t) {
  if (!t.defined()) return invalid_argument("cannot write an undefined tensor as npy");
  if (!t.device().is_host())
    return unsupported("cannot write a tensor on " + to_string(t.device()) +
                       " as npy; copy it to the host first");
  return Status::ok();
}

std::string make_header(const Tensor& t) {
  std::string dict = "{'descr': '" + npy_descr(t.dtype()) + "', 'fortran_order': False, 'shape': (";
  for (int d = 0; d < t.rank(); ++d) {
    if (d > 0) dict += ", ";
    dict += std::to_string(t.shape()[d]);
  }
  dict += t.rank() == 1 ? ",), }" : "), }";
  // Pad with spaces so the data starts at a multiple of 64 bytes; the header ends in '\n'.
  std::size_t preamble = 10;
  auto padded = [&] { return (preamble + dict.size() + 1 + 63) / 64 * 64 - preamble; };
  if (padded() > 0xffff) preamble = 12;
  const std::size_t header_len = padded();
  std::string out(kMagic, kMagic + kMagicSize);
  out += static_cast<char>(preamble == 10 ? 1 : 2);
  out += '\0';
  for (std::size_t i = 0; i < preamble - 8; ++i)
    out += static_cast<char>((header_len >> (8 * i)) & 0xff);
  out += dict;
  out.append(header_len - dict.size() - 1, ' ');
  out += '\n';
  return out;
}

// Hands the data to `sink(pointer, bytes)` in logical row-major order, little-endian.
template <typename Sink>
Status emit_data(const Tensor& t, Sink&& sink) {
  const std::size_t size = t.element_size();
  const bool swap = kHostBigEndian && size > 1;
  if (t.numel() == 0) return Status::ok();
  if (t.is_contiguous() && !swap) return sink(t.data(), t.nbytes());
  const std::size_t unit = is_complex(t.dtype()) ? size / 2 : size;
  std::vector<char> chunk;
  chunk.reserve(std::max<std::size_t>(65536 / size, 1) * size);
  Status status;
  for_each_element(t, [&](void* element) {
    if (!status.is_ok()) return;
    auto* p = static_cast<const char*>(element);
    const std::size_t at = chunk.size();
    chunk.insert(chunk.end(), p, p + size);
    if (swap)
      for (std::size_t i = at; i < chunk.size(); i += unit)
        std::reverse(&chunk[i], &chunk[i] + unit);
    if (chunk.size() + size > chunk.capacity()) {
      status = sink(chunk.data(), chunk.size());
      chunk.clear();
    }
  });
  if (status.is_ok() && !chunk.empty()) status = sink(chunk.data(), chunk.size());
  return status;
}

Status write_all(int fd, const void* data, std::size_t size, const std::string& tmp) {
  auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t put = ::write(fd, p, size);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return io_error("cannot write '" + tmp + "': " + errno_text(errno));
    p += put;
    size -= static_cast<std::size_t>(put);
  }
  return Status::ok();
}

// A new temporary file beside `path`, created with O_EXCL so concurrent writers never share one.
Result<std::pair<int, std::string>> create_temp_beside(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  for (int attempt = 0;; ++attempt) {
    std::string tmp = dir + (slash == std::string::npos ? "/" : "") + ".tessera-npy-" +
                      std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return std::pair{fd, tmp};
    if (errno != EEXIST || attempt >= 100)
      return io_error("cannot create a temporary file in '" + dir + "': " + errno_text(errno));
  }
}

Status write_file(const std::string& path, const Tensor& t) {
  TESSERA_RETURN_IF_ERROR(check_writable(t));
  TESSERA_ASSIGN_OR_RETURN(auto temp, create_temp_beside(path));
  const int fd = temp.first;
  const std::string tmp = temp.second;
  const std::string header = make_header(t);
  Status status = write_all(fd, header.data(), header.size(), tmp);
  if (status.is_ok())
    status = emit_data(t, [&](const void* p, std::size_t n) { return write_all(fd, p, n, tmp); });
  if (status.is_ok() && ::fsync(fd) != 0)
    status = io_error("cannot flush '" + tmp + "': " + errno_text(errno));
  if (::close(fd) != 0 && status.is_ok())
    status = io_error("cannot close '" + tmp + "': " + errno_text(errno));
  if (status.is_ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    status = io_error("cannot rename '" + tmp + "' into place: " + errno_text(errno));
  if (!status.is_ok()) ::unlink(tmp.c_str());
  return status;
}

}  // namespace

std::string npy_descr(DType dtype) {
  if (dtype == DType::kBF16) return std::string(kBf16Descr);
  for (const auto& [name, t] : kFloat8Descrs)
    if (t == dtype) return std::string(name);
  for (const DescrCode& c : kDescrCodes)
    if (c.dtype == dtype) return (dtype_size(dtype) == 1 ? "|" : "<") + std::string(c.code);
  TESSERA_ASSERT(false, "npy_descr: unknown DType");
}

Result<Tensor> parse_npy(std::span<const std::uint8_t> bytes) {
  TESSERA_ASSIGN_OR_RETURN(Preamble preamble, parse_preamble(bytes, bytes.size()));
  std::string_view header(reinterpret_cast<const char*>(bytes.data()) + preamble.header_offset,
                          preamble.header_len);
  TESSERA_ASSIGN_OR_RETURN(Layout layout, parse_layout(header, preamble, bytes.size()));
  TESSERA_ASSIGN_OR_RETURN(Tensor raw, Tensor::empty(layout.shape, layout.dtype));
  if (layout.data_bytes > 0)
    std::memcpy(raw.data(), bytes.data() + layout.data_offset, layout.data_bytes);
  return finish(layout, std::move(raw));
}

Result<Tensor> parse_npy(std::string_view bytes) {
  return parse_npy(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

Result<Tensor> read_npy(const std::string& path) {
  Result<Tensor> t = read_file(path);
  if (!t) return t.status().with_context("reading " + path);
  return t;
}

Status write_npy(const std::string& path, const Tensor& t) {
  return write_file(path, t).with_context("writing " + path);
}

Result<std::string> to_npy_bytes(const Tensor& t) {
  TESSERA_RETURN_IF_ERROR(check_writable(t));
  std::string out = make_header(t);
  out.reserve(out.size() + t.nbytes());
  TESSERA_RETURN_IF_ERROR(emit_data(t, [&](const void* p, std::size_t n) {
    out.append(static_cast<const char*>(p), n);
    return Status::ok();
  }));
  return out;
}

}  // namespace tessera
