// Shared pieces of the convolution tests: random tensors in any layout, running one direction
// with a chosen algorithm, and comparing against the reference.
#pragma once

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/dnn.hpp"

namespace tessera::dnn::testing {

struct ConvCase {
  std::int64_t n = 1, c = 4, k = 4, groups = 1;
  std::vector<std::int64_t> in = {7, 7}, ker = {3, 3}, stride, dil, pb, pe;
  Layout layout = Layout::kNCHW;
  Layout wlayout = Layout::kNCHW;  // kNCHW = oihw, kNHWC = ohwi
  DType dtype = DType::kF32;
  std::string name() const {
    auto v = [](const std::vector<std::int64_t>& a) {
      std::string s;
      for (auto e : a) {
        if (!s.empty()) s += 'x';
        s += std::to_string(e);
      }
      return s.empty() ? std::string("-") : s;
    };
    std::string s = "n";
    s += std::to_string(n);
    for (auto [tag, val] : {std::pair{" c", c}, {" k", k}, {" g", groups}}) {
      s += tag;
      s += std::to_string(val);
    }
    for (auto [tag, vec] : {std::pair{" in", &in}, {" ker", &ker}, {" s", &stride}, {" d", &dil},
                            {" pb", &pb}, {" pe", &pe}}) {
      s += tag;
      s += v(*vec);
    }
    s += ' ';
    s += layout_name(layout);
    s += " w";
    s += layout_name(wlayout);
    s += ' ';
    s += dtype_name(dtype);
    return s;
  }
  ConvDesc desc() const { return ConvDesc{stride, dil, pb, pe, groups}; }
  TensorDesc x_desc() const {
    std::vector<std::int64_t> d = {n, c};
    d.insert(d.end(), in.begin(), in.end());
    return TensorDesc::make(dtype, d, layout);
  }
  TensorDesc w_desc() const {
    std::vector<std::int64_t> d = {k, c / groups};
    d.insert(d.end(), ker.begin(), ker.end());
    return TensorDesc::make(dtype, d, wlayout);
  }
  TensorDesc y_desc() const {
    auto y = conv_output_desc(desc(), x_desc(), w_desc());
    if (!y.is_ok()) throw Error(y.status());
    return TensorDesc::make(dtype, y->dims, layout);
  }
};

// Storage for a tensor of `d` (its span), values in [-1, 1] rounded to the dtype.
inline std::vector<std::uint8_t> random_tensor(const TensorDesc& d, unsigned seed) {
  const std::size_t es = dtype_size(d.dtype);
  std::vector<std::uint8_t> b(static_cast<std::size_t>(std::max<std::int64_t>(d.span(), 1)) * es);
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::size_t i = 0; i < b.size() / es; ++i) {
    float v = u(g);
    if (d.dtype == DType::kF32) std::memcpy(&b[i * 4], &v, 4);
    else {
      std::uint16_t h = d.dtype == DType::kBF16 ? f32_to_bf16_bits(v) : f32_to_f16_bits(v);
      std::memcpy(&b[i * 2], &h, 2);
    }
  }
  return b;
}
inline std::vector<std::uint8_t> nan_tensor(const TensorDesc& d) {
  const std::size_t es = dtype_size(d.dtype);
  std::vector<std::uint8_t> b(static_cast<std::size_t>(std::max<std::int64_t>(d.span(), 1)) * es,
                              0xFF);  // all-ones: NaN in f32, bf16 and f16
  return b;
}
inline float value_at(const std::vector<std::uint8_t>& b, DType t, std::size_t i) {
  if (t == DType::kF32) {
    float v;
    std::memcpy(&v, &b[i * 4], 4);
    return v;
  }
  std::uint16_t h;
  std::memcpy(&h, &b[i * 2], 2);
  return t == DType::kBF16 ? bf16_bits_to_f32(h) : f16_bits_to_f32(h);
}

}  // namespace tessera::dnn::testing
