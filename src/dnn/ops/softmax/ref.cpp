// Reference softmax (see ref.hpp): one row per index of the other dims, in row-major order.
#include "ref.hpp"

#include <vector>

#include "../../common.hpp"
#include "../activation/ref.hpp"
#include "row_math.hpp"

namespace tessera::dnn::ref {
namespace {

// fn(offset_a, offset_b, offset_c) of each row start, for tensors of equal dims.
template <typename Fn>
void for_each_row(int axis, const TensorDesc& a, const TensorDesc& b, const TensorDesc* c,
                  Fn&& fn) {
  std::vector<std::int64_t> outer = a.dims;
  outer[static_cast<std::size_t>(axis)] = a.dims[static_cast<std::size_t>(axis)] > 0 ? 1 : 0;
  for_each_index(outer, [&](const std::int64_t* i) {
    fn(detail::offset_of(a, i), detail::offset_of(b, i), c ? detail::offset_of(*c, i) : 0);
  });
}

}  // namespace

void softmax_forward(SoftmaxMode mode, int axis, const TensorDesc& x_desc, const void* x,
                     const TensorDesc& y_desc, void* y) {
  const auto ax = static_cast<std::size_t>(axis);
  const std::int64_t len = x_desc.dims[ax], xs = x_desc.strides[ax], ys = y_desc.strides[ax];
  for_each_row(axis, x_desc, y_desc, nullptr, [&](std::int64_t xo, std::int64_t yo, std::int64_t) {
    softmax_row::forward(
        mode == SoftmaxMode::kLogSoftmax, len,
        [&](std::int64_t i) { return detail::load_f32(x, x_desc.dtype, xo + i * xs); },
        [&](std::int64_t i, float v) { detail::store_f32(y, y_desc.dtype, yo + i * ys, v); });
  });
}

void softmax_backward(SoftmaxMode mode, int axis, const TensorDesc& y_desc, const void* y,
                      const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                      void* dx) {
  const auto ax = static_cast<std::size_t>(axis);
  const std::int64_t len = y_desc.dims[ax], ys = y_desc.strides[ax], gs = dy_desc.strides[ax],
                     xs = dx_desc.strides[ax];
  for_each_row(
      axis, y_desc, dy_desc, &dx_desc, [&](std::int64_t yo, std::int64_t go, std::int64_t xo) {
        softmax_row::backward(
            mode == SoftmaxMode::kLogSoftmax, len,
            [&](std::int64_t i) { return detail::load_f32(y, y_desc.dtype, yo + i * ys); },
            [&](std::int64_t i) { return detail::load_f32(dy, dy_desc.dtype, go + i * gs); },
            [&](std::int64_t i, float v) { detail::store_f32(dx, dx_desc.dtype, xo + i * xs, v); });
      });
}

}  // namespace tessera::dnn::ref
