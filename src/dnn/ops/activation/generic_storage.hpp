// Element i of an f32 / bf16 / f16 array (act_kernels::Storage) as a float, and a float
// stored into one (rounded to nearest even): the plain C++ kernels' loads and stores
// (activation, softmax and training generic.cpp), never compiled with wide-vector flags.
#pragma once

#include <cstdint>

#include "kernels.hpp"
#include "tessera/core/half.hpp"

namespace tessera::dnn::act_kernels {

template <int S>
inline float ld(const void* p, std::int64_t i) {
  if constexpr (S == kF32)
    return static_cast<const float*>(p)[i];
  else if constexpr (S == kBF16)
    return bf16_bits_to_f32(static_cast<const std::uint16_t*>(p)[i]);
  else
    return f16_bits_to_f32(static_cast<const std::uint16_t*>(p)[i]);
}

template <int S>
inline void st(void* p, std::int64_t i, float v) {
  if constexpr (S == kF32)
    static_cast<float*>(p)[i] = v;
  else if constexpr (S == kBF16)
    static_cast<std::uint16_t*>(p)[i] = f32_to_bf16_bits(v);
  else
    static_cast<std::uint16_t*>(p)[i] = f32_to_f16_bits(v);
}

}  // namespace tessera::dnn::act_kernels
