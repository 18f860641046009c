// NumPy .npy files: the input and output format of the CLI.
//
// Reading accepts format versions 1.0 and 2.0 (u16 / u32 header length) and 3.0 (UTF-8
// header; every key and descr tessera understands is ASCII, so a non-ASCII byte ends in a
// parse error or an unknown descr). The header must be the Python dict literal numpy writes,
// with exactly the keys 'descr', 'fortran_order' and 'shape'; whitespace, single or double
// quotes, trailing commas and Python 2 'L' suffixes on dims are accepted. descr maps to a
// DType as follows, in either byte order ('<', '>', '=' native; '|' only for 1-byte types):
//   bool '|b1'  i8 '|i1'  u8 '|u1'  i32 '<i4'  i64 '<i8'  f16 '<f2'  f32 '<f4'  f64 '<f8'
//   c64 '<c8'   c128 '<c16'   bf16 'bfloat16'
// numpy has no bfloat16: tessera writes the descr 'bfloat16' (little-endian 2-byte words,
// the top half of an f32) and reads it back; numpy itself cannot np.load such a file.
// Big-endian data is byte-swapped (each half of a complex separately). fortran_order True
// files are transposed into a contiguous row-major tensor. bool bytes other than 0 read as 1
// (numpy treats any nonzero byte as True). The result is a new contiguous host tensor.
//
// Writing produces format 1.0 (2.0 only when the header exceeds 64 KiB), C order,
// little-endian, header padded so the data starts at a multiple of 64 bytes; a non-contiguous
// tensor is written in logical row-major order. Shape () and zero-size dims work both ways.
//
// Errors: malformed input is kParseError with a message naming the problem and the byte
// offset (bad magic, unsupported version, truncated preamble, header length past the end of
// the file, header not ending in a newline, bad dict syntax, missing/extra/duplicate keys,
// unknown descr, negative or non-integer dims, a byte size that overflows, data shorter than
// the shape needs, trailing bytes). The data size is checked against the file size before
// anything is allocated, so a hostile header cannot request absurd memory. Files that cannot
// be opened, read or written give kIoError naming the path and the system's reason. Writing
// an undefined tensor is kInvalidArgument; a device tensor is kUnsupported.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <tessera/core/dtype.hpp>
#include <tessera/core/status.hpp>
#include <tessera/core/tensor.hpp>

namespace tessera {

// Reads a whole .npy file. Errors are prefixed with "reading <path>".
Result<Tensor> read_npy(const std::string& path);

// Parses the bytes of a whole .npy file held in memory (what the fuzz target calls).
Result<Tensor> parse_npy(std::span<const std::uint8_t> bytes);
Result<Tensor> parse_npy(std::string_view bytes);

// Writes `t` atomically: the bytes go to a temporary file in the same directory, which is
// then renamed over `path`. On failure `path` is untouched (an existing file keeps its old
// contents) and the temporary file is removed. Errors are prefixed with "writing <path>".
Status write_npy(const std::string& path, const Tensor& t);

// The bytes write_npy would write.
Result<std::string> to_npy_bytes(const Tensor& t);

// The descr tessera writes for a dtype: "<f4", "|b1", "bfloat16", ...
std::string npy_descr(DType dtype);

}  // namespace tessera
