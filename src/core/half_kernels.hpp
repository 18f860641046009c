// Bulk f16/bf16 conversion kernels, one set per instruction-set file. Each file is compiled
// with its own flags (cmake/TesseraTargets.cmake); this header must stay free of inline code
// so no wide-vector instruction leaks into generic objects.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera {
// The scalar conversions (half.cpp), declared here so ISA files need not include half.hpp,
// whose inline functions would otherwise be emitted with wide-vector flags.
std::uint16_t f32_to_f16_bits(float value);
float f16_bits_to_f32(std::uint16_t bits);
std::uint16_t f32_to_bf16_bits(float value);
}  // namespace tessera

namespace tessera::detail {

// half_avx2.cpp (AVX2 + F16C)
void f32_to_f16_f16c(const float* src, std::uint16_t* dst, std::size_t n);
void f16_to_f32_f16c(const std::uint16_t* src, float* dst, std::size_t n);
void f32_to_bf16_avx2(const float* src, std::uint16_t* dst, std::size_t n);
void bf16_to_f32_avx2(const std::uint16_t* src, float* dst, std::size_t n);

// half_avx512.cpp (AVX-512 F/BW/VL, and AVX512-BF16 for the bf16 narrowing)
void f32_to_f16_avx512(const float* src, std::uint16_t* dst, std::size_t n);
void f16_to_f32_avx512(const std::uint16_t* src, float* dst, std::size_t n);
void f32_to_bf16_avx512bf16(const float* src, std::uint16_t* dst, std::size_t n);
void bf16_to_f32_avx512(const std::uint16_t* src, float* dst, std::size_t n);

}  // namespace tessera::detail
