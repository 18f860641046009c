#include "ref.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "../../common.hpp"

namespace tessera::dnn::ref {
namespace {

using i64 = std::int64_t;

double load(const void* p, DType t, i64 i) {
  switch (t) {
    case DType::kF64: {
      double v;
      std::memcpy(&v, static_cast<const double*>(p) + i, sizeof v);
      return v;
    }
    case DType::kU8: return static_cast<const std::uint8_t*>(p)[i];
    case DType::kI8: return static_cast<const std::int8_t*>(p)[i];
    default: return detail::load_f32(p, t, i);  // f32, f16, bf16
  }
}

// Offset of element (row r, column c) of operand d for y's batch index `yb`: batch dims
// right-aligned, size-1 dims broadcast; a 1-D operand is a row (a) or a column (b) vector.
i64 offset(const TensorDesc& d, const std::vector<i64>& yb, i64 r, i64 c, bool is_a) {
  if (d.rank() == 1) return (is_a ? c : r) * d.strides[0];
  const int nb = d.rank() - 2, ny = static_cast<int>(yb.size());
  i64 off = 0;
  for (int i = 0; i < nb; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (d.dims[k] != 1) off += yb[static_cast<std::size_t>(ny - nb + i)] * d.strides[k];
  }
  return off + r * d.strides[static_cast<std::size_t>(nb)] + c * d.strides[static_cast<std::size_t>(nb + 1)];
}

}  // namespace

void matmul(const TensorDesc& a, const void* ap, const TensorDesc& b, const void* bp, const TensorDesc& y, void* yp) {
  const bool a1 = a.rank() == 1, b1 = b.rank() == 1;
  const int ym = (a1 ? 0 : 1) + (b1 ? 0 : 1);
  const i64 K = a.dims.back(), total = y.numel();
  std::vector<i64> yi(y.dims.size(), 0);
  for (i64 e = 0; e < total; ++e) {
    const std::vector<i64> yb(yi.begin(), yi.end() - ym);
    const i64 m = a1 ? 0 : yi[yi.size() - static_cast<std::size_t>(ym)];
    const i64 n = b1 ? 0 : yi.back();
    i64 yoff = 0;
    for (std::size_t i = 0; i < yi.size(); ++i) yoff += yi[i] * y.strides[i];
    if (y.dtype == DType::kI32) {
      std::int64_t s = 0;
      for (i64 k = 0; k < K; ++k)
        s += static_cast<std::int64_t>(load(ap, a.dtype, offset(a, yb, m, k, true))) *
             static_cast<std::int64_t>(load(bp, b.dtype, offset(b, yb, k, n, false)));
      static_cast<std::int32_t*>(yp)[yoff] = static_cast<std::int32_t>(static_cast<std::uint32_t>(s));
    } else {
      double s = 0;
      for (i64 k = 0; k < K; ++k) s += load(ap, a.dtype, offset(a, yb, m, k, true)) * load(bp, b.dtype, offset(b, yb, k, n, false));
      if (y.dtype == DType::kF64) std::memcpy(static_cast<double*>(yp) + yoff, &s, sizeof s);
      else detail::store_f32(yp, y.dtype, yoff, static_cast<float>(s));  // f16/bf16: f64 -> f32 -> nearest even
    }
    for (int i = static_cast<int>(yi.size()) - 1; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      if (++yi[k] < y.dims[k]) break;
      yi[k] = 0;
    }
  }
}

}  // namespace tessera::dnn::ref
