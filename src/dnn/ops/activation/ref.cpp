// Reference activations, PReLU and CReLU (see ref.hpp).
#include "ref.hpp"

#include <vector>

#include "../../common.hpp"
#include "act_scalar.hpp"

namespace tessera::dnn::ref {

using detail::load_f32;
using detail::offset_of;
using detail::store_f32;

void activation_forward(const Activation& act, const TensorDesc& x_desc, const void* x,
                        const TensorDesc& y_desc, void* y) {
  for_each_index(x_desc.dims, [&](const std::int64_t* i) {
    const float v = load_f32(x, x_desc.dtype, offset_of(x_desc, i));
    store_f32(y, y_desc.dtype, offset_of(y_desc, i), act::forward(act, v));
  });
}

void activation_backward(const Activation& act, const TensorDesc& x_desc, const void* x,
                         const TensorDesc& dy_desc, const void* dy, const TensorDesc& dx_desc,
                         void* dx) {
  for_each_index(x_desc.dims, [&](const std::int64_t* i) {
    const float v = load_f32(x, x_desc.dtype, offset_of(x_desc, i));
    const float g = load_f32(dy, dy_desc.dtype, offset_of(dy_desc, i));
    store_f32(dx, dx_desc.dtype, offset_of(dx_desc, i), act::derivative(act, v) * g);
  });
}

void prelu_forward(const TensorDesc& x_desc, const void* x, const float* slope,
                   std::int64_t slope_count, const TensorDesc& y_desc, void* y) {
  for_each_index(x_desc.dims, [&](const std::int64_t* i) {
    const float v = load_f32(x, x_desc.dtype, offset_of(x_desc, i));
    const float s = slope[slope_count == 1 ? 0 : i[1]];
    store_f32(y, y_desc.dtype, offset_of(y_desc, i), v > 0.0f ? v : s * v);
  });
}

void prelu_backward(const TensorDesc& x_desc, const void* x, const float* slope,
                    std::int64_t slope_count, const TensorDesc& dy_desc, const void* dy,
                    const TensorDesc& dx_desc, void* dx, float* dslope) {
  std::vector<double> sum(static_cast<std::size_t>(slope_count), 0.0);
  for_each_index(x_desc.dims, [&](const std::int64_t* i) {
    const float v = load_f32(x, x_desc.dtype, offset_of(x_desc, i));
    const float g = load_f32(dy, dy_desc.dtype, offset_of(dy_desc, i));
    const std::int64_t c = slope_count == 1 ? 0 : i[1];
    if (!(v > 0.0f)) sum[static_cast<std::size_t>(c)] += static_cast<double>(v) * g;
    store_f32(dx, dx_desc.dtype, offset_of(dx_desc, i), v > 0.0f ? g : slope[c] * g);
  });
  if (dslope != nullptr)
    for (std::int64_t c = 0; c < slope_count; ++c)
      dslope[c] = static_cast<float>(sum[static_cast<std::size_t>(c)]);
}

void crelu_forward(const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y) {
  const Activation relu{ActKind::kRelu, 0.0f, 0.0f};
  const std::int64_t channels = x_desc.dims[1];
  std::vector<std::int64_t> j(x_desc.dims.size());
  for_each_index(x_desc.dims, [&](const std::int64_t* i) {
    const float v = load_f32(x, x_desc.dtype, offset_of(x_desc, i));
    j.assign(i, i + j.size());
    store_f32(y, y_desc.dtype, offset_of(y_desc, j.data()), act::forward(relu, v));
    j[1] += channels;
    store_f32(y, y_desc.dtype, offset_of(y_desc, j.data()), act::forward(relu, -v));
  });
}

void crelu_backward(const TensorDesc& x_desc, const void* x, const TensorDesc& dy_desc,
                    const void* dy, const TensorDesc& dx_desc, void* dx) {
  const Activation relu{ActKind::kRelu, 0.0f, 0.0f};
  const std::int64_t channels = x_desc.dims[1];
  std::vector<std::int64_t> j(x_desc.dims.size());
  for_each_index(x_desc.dims, [&](const std::int64_t* i) {
    const float v = load_f32(x, x_desc.dtype, offset_of(x_desc, i));
    j.assign(i, i + j.size());
    const float gp = load_f32(dy, dy_desc.dtype, offset_of(dy_desc, j.data()));
    j[1] += channels;
    const float gn = load_f32(dy, dy_desc.dtype, offset_of(dy_desc, j.data()));
    store_f32(dx, dx_desc.dtype, offset_of(dx_desc, i),
              act::derivative(relu, v) * gp - act::derivative(relu, -v) * gn);
  });
}

}  // namespace tessera::dnn::ref
