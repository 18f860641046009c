// The 8-bit floating-point formats of ONNX (and of the FP8 papers: Micikevicius et al. 2022,
// "FP8 formats for deep learning"; Graphcore's "uz" variants), as bit patterns:
//
//   format       exponent/mantissa  bias  infinity  NaN                    largest  -0
//   e4m3fn       4/3                7     none      s.1111.111             448      yes
//   e4m3fnuz     4/3                8     none      1.0000.000 (only)      240      no
//   e5m2         5/2                15    s.11111.00 s.11111.{01,10,11}    57344    yes
//   e5m2fnuz     5/2                16    none      1.00000.00 (only)      57344    no
//
// f32 -> f8 rounds to nearest, ties to even. NaN becomes NaN (s.1111111 for e4m3fn and
// e5m2, 0x80 for the uz formats). With `saturate` (ONNX's default) a value beyond the largest
// finite one, infinities included, becomes +-largest; without it, e5m2 gives +-inf and the
// others NaN. Zero keeps its sign where the format has -0; in the uz formats it is +0.
#pragma once

#include <cstdint>
#include <optional>

#include <tessera/core/dtype.hpp>

namespace tessera {

enum class Float8 { kE4M3FN, kE4M3FNUZ, kE5M2, kE5M2FNUZ };

float f8_bits_to_f32(std::uint8_t bits, Float8 format);
std::uint8_t f32_to_f8_bits(float x, Float8 format, bool saturate = true);
// The format of an f8 DType, or nullopt for the others.
std::optional<Float8> float8_of(DType t);

// f4e2m1 (the OCP microscaling element format): sign, 2 exponent bits (bias 1), 1 mantissa
// bit; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6; no infinity or NaN. The code in a byte's low 4
// bits. Encoding rounds to nearest, ties to even; beyond +-6 (infinities too) it saturates,
// NaN becomes 0x8 (-0), as ml_dtypes and ONNX's reference do.
float f4e2m1_bits_to_f32(std::uint8_t bits);
std::uint8_t f32_to_f4e2m1_bits(float x);

// f8e8m0 (the OCP microscaling scale format): 2^(e - 127) for e in [0, 254], 0xFF is NaN; no
// sign, no zero. Encoding keeps the f32 exponent and rounds on the mantissa: up (ONNX's
// default: any fraction goes to the next power of two), down, or to nearest; NaN and
// infinities become 0xFF. With `saturate` rounding never leaves 0xFE for 0xFF.
enum class E8M0Round { kUp, kDown, kNearest };
float e8m0_bits_to_f32(std::uint8_t bits);
std::uint8_t f32_to_e8m0_bits(float x, bool saturate = true, E8M0Round mode = E8M0Round::kUp);

}  // namespace tessera
