#include "ref.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "../../common.hpp"
#include "../activation/ref.hpp"  // for_each_index
#include "move.hpp"

namespace tessera::dnn::ref {
namespace {

using i64 = std::int64_t;
std::size_t z(i64 i) { return static_cast<std::size_t>(i); }

i64 offset(const i64* idx, const std::vector<i64>& strides) {
  i64 o = 0;
  for (std::size_t k = 0; k < strides.size(); ++k) o += idx[k] * strides[k];
  return o;
}

// ONNX Resize's coordinate transforms: y index o -> x coordinate.
double coordinate(ResizeCoord c, i64 o, i64 in, i64 out, double s) {
  const double od = static_cast<double>(o), ind = static_cast<double>(in), outd = static_cast<double>(out);
  switch (c) {
    case ResizeCoord::kHalfPixel: return (od + 0.5) / s - 0.5;
    case ResizeCoord::kHalfPixelSymmetric: return ind / 2 * (1 - outd / (s * ind)) + (od + 0.5) / s - 0.5;
    case ResizeCoord::kPytorchHalfPixel: return out > 1 ? (od + 0.5) / s - 0.5 : 0.0;
    case ResizeCoord::kAlignCorners: return out == 1 ? 0.0 : od * (ind - 1) / (outd - 1);
    case ResizeCoord::kAsymmetric: return od / s;
  }
  return 0;
}

// Keys' cubic kernel with coefficient a at distance v.
double keys(double a, double v) {
  v = std::fabs(v);
  if (v <= 1) return (a + 2) * v * v * v - (a + 3) * v * v + 1;
  if (v < 2) return a * v * v * v - 5 * a * v * v + 8 * a * v - 4 * a;
  return 0;
}

// The (x index, weight) pairs of y index o along one dim.
std::vector<std::pair<i64, double>> taps(const ResizeParams& p, i64 o, i64 in, i64 out, double s) {
  const double c = coordinate(p.coord, o, in, out, s);
  std::vector<std::pair<i64, double>> w;
  if (p.mode == ResizeMode::kNearest) {
    const bool half = c - std::floor(c) == 0.5;
    double r = 0;
    switch (p.nearest) {
      case ResizeNearest::kRoundPreferFloor: r = half ? std::floor(c) : std::round(c); break;
      case ResizeNearest::kRoundPreferCeil: r = half ? std::ceil(c) : std::round(c); break;
      case ResizeNearest::kFloor: r = std::floor(c); break;
      case ResizeNearest::kCeil: r = std::ceil(c); break;
    }
    w.push_back({std::clamp<i64>(static_cast<i64>(r), 0, in - 1), 1.0});
    return w;
  }
  const i64 i0 = static_cast<i64>(std::floor(c));
  const double u = c - std::floor(c);
  if (p.mode == ResizeMode::kLinear) {
    w = {{i0, 1 - u}, {i0 + 1, u}};
  } else {
    for (i64 k = -1; k <= 2; ++k) w.push_back({i0 + k, keys(p.cubic_a, u - static_cast<double>(k))});
  }
  if (p.exclude_outside) {
    double sum = 0;
    for (auto& [i, v] : w) {
      if (i < 0 || i >= in) v = 0;
      sum += v;
    }
    if (sum != 0)
      for (auto& [i, v] : w) v /= sum;
  }
  for (auto& [i, v] : w) i = std::clamp<i64>(i, 0, in - 1);
  return w;
}

}  // namespace

void pad(PadMode mode, std::span<const i64> pads, double value, const TensorDesc& x_desc, const void* x,
         const TensorDesc& y_desc, void* y) {
  const std::size_t r = x_desc.dims.size(), e = dtype_size(y_desc.dtype);
  unsigned char fill[16] = {};
  detail::convert_element(DType::kF64, &value, y_desc.dtype, fill);
  std::vector<i64> xi(r);
  for_each_index(y_desc.dims, [&](const i64* yi) {
    bool constant = false;
    for (std::size_t k = 0; k < r; ++k) {
      // Negative pads crop: x's kept elements are [c0, c0 + n).
      const i64 c0 = std::max<i64>(0, -pads[k]), n = x_desc.dims[k] - c0 - std::max<i64>(0, -pads[k + r]);
      i64 t = yi[k] - std::max<i64>(0, pads[k]);
      if (t < 0 || t >= n) {
        if (mode == PadMode::kConstant) constant = true;
        else if (mode == PadMode::kEdge) t = t < 0 ? 0 : n - 1;
        else if (mode == PadMode::kReflect) t = t < 0 ? -t : 2 * (n - 1) - t;
        else t = ((t % n) + n) % n;  // wrap
      }
      xi[k] = c0 + t;
    }
    unsigned char* dst = static_cast<unsigned char*>(y) + offset(yi, y_desc.strides) * static_cast<i64>(e);
    std::memcpy(dst, constant ? fill : static_cast<const unsigned char*>(x) + offset(xi.data(), x_desc.strides) * static_cast<i64>(e), e);
  });
}

void resize(const ResizeParams& p, std::span<const double> scales, const TensorDesc& x_desc, const void* x,
            const TensorDesc& y_desc, void* y) {
  const std::size_t r = x_desc.dims.size(), e = dtype_size(y_desc.dtype);
  // Every dim's taps for every y index.
  std::vector<std::vector<std::vector<std::pair<i64, double>>>> t(r);
  for (std::size_t k = 0; k < r; ++k)
    for (i64 o = 0; o < y_desc.dims[k]; ++o) t[k].push_back(taps(p, o, x_desc.dims[k], y_desc.dims[k], scales[k]));
  std::vector<i64> xi(r), counts(r);
  for_each_index(y_desc.dims, [&](const i64* yi) {
    unsigned char* dst = static_cast<unsigned char*>(y) + offset(yi, y_desc.strides) * static_cast<i64>(e);
    if (p.mode == ResizeMode::kNearest) {
      for (std::size_t k = 0; k < r; ++k) xi[k] = t[k][z(yi[k])][0].first;
      std::memcpy(dst, static_cast<const unsigned char*>(x) + offset(xi.data(), x_desc.strides) * static_cast<i64>(e), e);
      return;
    }
    // The tensor product of the dims' taps: sum of x[taps] times the product of their weights.
    for (std::size_t k = 0; k < r; ++k) counts[k] = static_cast<i64>(t[k][z(yi[k])].size());
    double sum = 0;
    for_each_index(counts, [&](const i64* c) {
      double w = 1;
      for (std::size_t k = 0; k < r; ++k) {
        const auto& [i, v] = t[k][z(yi[k])][z(c[k])];
        xi[k] = i;
        w *= v;
      }
      if (w == 0) return;
      double v = 0;
      detail::convert_element(x_desc.dtype, static_cast<const unsigned char*>(x) + offset(xi.data(), x_desc.strides) * static_cast<i64>(e), DType::kF64, &v);
      sum += w * v;
    });
    detail::convert_element(DType::kF64, &sum, y_desc.dtype, dst);
  });
}

}  // namespace tessera::dnn::ref
