// The reference arithmetic of one softmax row, shared by the reference (strided accessors)
// and the generic kernels (contiguous rows or columns), so the two agree bit for bit. Sums
// and exponentials in f64, in the order of the row; results rounded to f32 once.
//   forward:  m = max x (NaN ignored; all -inf or any NaN gives a NaN row), s = sum e^(x-m),
//             softmax y = e^(x-m) / s, log-softmax y = (x - m) - log s
//   backward: softmax dx = y (dy - sum dy*y), log-softmax dx = dy - e^y sum dy
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace tessera::dnn::softmax_row {

// load(i) -> float, store(i, float) for i in [0, len).
template <typename Load, typename Store>
void forward(bool log_softmax, std::int64_t len, Load&& load, Store&& store) {
  double m = -std::numeric_limits<double>::infinity();
  for (std::int64_t i = 0; i < len; ++i) {
    const double v = load(i);
    if (v > m) m = v;
  }
  double s = 0.0;
  for (std::int64_t i = 0; i < len; ++i) s += std::exp(load(i) - m);
  if (log_softmax) {
    const double lse = std::log(s);
    for (std::int64_t i = 0; i < len; ++i) store(i, static_cast<float>((load(i) - m) - lse));
  } else {
    for (std::int64_t i = 0; i < len; ++i) store(i, static_cast<float>(std::exp(load(i) - m) / s));
  }
}

// load_y(i), load_dy(i) -> float; store(i, float).
template <typename LoadY, typename LoadDy, typename Store>
void backward(bool log_softmax, std::int64_t len, LoadY&& load_y, LoadDy&& load_dy, Store&& store) {
  double s = 0.0;
  if (log_softmax) {
    for (std::int64_t i = 0; i < len; ++i) s += load_dy(i);
    for (std::int64_t i = 0; i < len; ++i)
      store(i, static_cast<float>(load_dy(i) - std::exp(static_cast<double>(load_y(i))) * s));
  } else {
    for (std::int64_t i = 0; i < len; ++i) s += static_cast<double>(load_dy(i)) * load_y(i);
    for (std::int64_t i = 0; i < len; ++i)
      store(i, static_cast<float>(static_cast<double>(load_y(i)) * (load_dy(i) - s)));
  }
}

}  // namespace tessera::dnn::softmax_row
