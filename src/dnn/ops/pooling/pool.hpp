// Pooling internals shared by the reference (ref.cpp) and the driver (impls.cpp): the problem
// normalised to three spatial dims, window arithmetic, and the problem structs the ordered
// implementation lists see. Generic code only (ISA files include kernels.hpp alone).
#pragma once

#include <cstdint>

#include "../../common.hpp"

namespace tessera::dnn::pool {

using i64 = std::int64_t;

// A validated pooling problem with its spatial dims right-aligned into three (D, H, W): the
// dims a 1-D or 2-D problem lacks have size 1, kernel 1, stride 1, dilation 1, no padding.
struct Geom {
  PoolKind kind = PoolKind::kMax;
  int spatial = 0;  // spatial dims of the caller's tensors (1..3)
  i64 n = 0, c = 0;
  i64 in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1};
  i64 d[3] = {1, 1, 1}, pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};

  i64 in_plane() const { return in[0] * in[1] * in[2]; }
  i64 out_plane() const { return out[0] * out[1] * out[2]; }
  bool is_max() const { return kind == PoolKind::kMax; }
};

// Taps [lo, hi) of window `o` along dim `i` whose input position lies inside the input.
inline void valid_taps(const Geom& g, int i, i64 o, i64* lo, i64* hi) {
  const i64 start = o * g.s[i] - g.pb[i];
  i64 l = 0, h = g.k[i];
  if (start < 0) l = (-start + g.d[i] - 1) / g.d[i];
  const i64 room = g.in[i] - 1 - start;  // the last tap must stay at or below in - 1
  h = room < 0 ? 0 : room / g.d[i] + 1;
  *lo = l < g.k[i] ? l : g.k[i];
  *hi = h < g.k[i] ? h : g.k[i];
  if (*hi < *lo) *hi = *lo;
}

// The divisor factor of window `o` along dim `i` for average pooling: the taps inside the
// input (exclude-pad), or inside the padded input (include-pad; taps past the end padding,
// possible in ceil mode, are not counted, as PyTorch does). With dilation only the taps
// themselves count, not the holes between them.
inline i64 divisor_taps(const Geom& g, int i, i64 o) {
  if (g.kind == PoolKind::kAvgIncludePad) {
    // Window starts lie at or after -pad_begin, so every tap is past the begin padding; the
    // ones before in + pad_end count: tap t with t * d < room.
    const i64 room = g.in[i] + g.pb[i] + g.pe[i] - o * g.s[i];
    const i64 taps = room <= 0 ? 0 : (room + g.d[i] - 1) / g.d[i];
    return taps < g.k[i] ? taps : g.k[i];
  }
  i64 lo, hi;
  valid_taps(g, i, o, &lo, &hi);
  return hi - lo;
}

// Strides of the caller's tensor as (N, C, D, H, W); the dims a problem lacks get stride 0.
struct Strides5 {
  i64 v[5] = {0, 0, 0, 0, 0};
};
inline Strides5 strides5(const TensorDesc& d) {
  Strides5 s;
  s.v[0] = d.strides[0];
  s.v[1] = d.strides[1];
  const int sp = d.rank() - 2;
  for (int i = 0; i < sp; ++i) s.v[2 + 3 - sp + i] = d.strides[static_cast<std::size_t>(2 + i)];
  return s;
}

struct FwdProblem {
  Geom g;
  TensorDesc x_desc, y_desc;
  const void* x = nullptr;
  void* y = nullptr;
  std::int64_t* indices = nullptr;
};

struct BwdProblem {
  Geom g;
  TensorDesc x_desc, dy_desc, dx_desc;
  const void* x = nullptr;  // max without indices only
  const std::int64_t* indices = nullptr;
  const void* dy = nullptr;
  void* dx = nullptr;
};

// ref.cpp: plain loops over logical indices, any strides, f32/bf16/f16.
Status forward_ref(Handle& h, const FwdProblem& p);
Status backward_ref(Handle& h, const BwdProblem& p);

}  // namespace tessera::dnn::pool
