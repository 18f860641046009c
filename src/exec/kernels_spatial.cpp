// The executor's spatial sampling and folding kernels, reference-grade (f64 loops, each output
// rounded once): GridSample (any number of spatial dims; linear, nearest and cubic; zeros,
// border and reflection padding), AffineGrid (2-D and 3-D sampling grids), Col2Im (column
// blocks summed back into an image of any rank) and MaxUnpool (values scattered to their
// pooling indices, with or without output_shape).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/dnn/tensor_ops.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;

enum class Interp { kLinear, kNearest, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

// x folded back between lo and hi, as a mirror at each border would (any number of times).
double reflect(double x, double lo, double hi) {
  const double span = hi - lo;
  if (span <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const double d = x < lo ? lo - x : x - hi;
  const double flips = std::floor(d / span);
  const double rest = d - flips * span;
  const bool even = std::fmod(flips, 2.0) == 0.0;
  if (x < lo) return even ? lo + rest : hi - rest;
  return even ? hi - rest : lo + rest;
}

// Keys' cubic convolution weights (a = -0.75) of the taps at floor(x) - 1 .. floor(x) + 2,
// for t = x - floor(x).
void cubic_weights(double t, double w[4]) {
  constexpr double a = -0.75;
  auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };           // |d| <= 1
  auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };     // 1 < |d| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// One spatial dim's taps for a sample point: element offsets (-1 for a zero from padding) and
// their weights.
struct Taps {
  std::int64_t at[4] = {0, 0, 0, 0};
  double w[4] = {1, 0, 0, 0};
  int n = 1;
};

}  // namespace

// GridSample: Y[n, c, p...] interpolated from X[n, c] at the point grid[n, p..., :], whose
// entries run over the spatial dims last first (x, then y, ...) normalised to [-1, 1]. A point
// is denormalised per dim (align_corners: -1 and 1 are the corner pixels' centres, else their
// outer edges), rounded half to even for nearest, brought inside by the padding mode (border:
// clamped, reflection: mirrored), and each tap outside the image is padded the same way (zeros:
// 0). The denormalised coordinate is rounded to f32 when the grid is narrower than f64, as
// ONNX's reference and PyTorch compute it in the grid's type. A NaN coordinate gives NaN.
Status grid_sample_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &grid = *c.input(1);
  const int r = x.rank();
  if (r < 3) return invalid_argument("GridSample's X must be [N, C, spatial dims...], not " + x.shape().to_string());
  if (c.opset < 20 && r != 4) return invalid_argument("GridSample before opset 20 takes a 4-D X, not " + x.shape().to_string());
  const int s = r - 2;
  if (grid.rank() != r || grid.shape()[0] != x.shape()[0] || grid.shape()[r - 1] != s)
    return invalid_argument("the grid has dims " + grid.shape().to_string() + " for X of dims " + x.shape().to_string() + ": it must be [N, output dims..., " + std::to_string(s) + "]");
  if (!is_floating(grid.dtype())) return invalid_argument("GridSample's grid must be a float tensor, not " + std::string(dtype_name(grid.dtype())));
  if (!is_floating(x.dtype()) && !is_integer(widened(x.dtype())))
    return unsupported("GridSample of " + std::string(dtype_name(x.dtype())));
  const bool v20 = c.opset >= 20;
  const std::string linear = v20 ? "linear" : "bilinear", cubic = v20 ? "cubic" : "bicubic";
  const std::string mode = c.attr_string("mode", linear), padding = c.attr_string("padding_mode", "zeros");
  Interp interp = Interp::kLinear;
  if (mode == linear) interp = Interp::kLinear;
  else if (mode == "nearest") interp = Interp::kNearest;
  else if (mode == cubic) interp = Interp::kCubic;
  else return invalid_argument("mode '" + mode + "' (opset " + std::to_string(c.opset) + "'s modes: " + linear + ", nearest, " + cubic + ")");
  Padding pad = Padding::kZeros;
  if (padding == "zeros") pad = Padding::kZeros;
  else if (padding == "border") pad = Padding::kBorder;
  else if (padding == "reflection") pad = Padding::kReflection;
  else return invalid_argument("padding_mode '" + padding + "' (zeros, border or reflection)");
  const bool align = c.attr_int("align_corners", 0) != 0;
  const bool narrow = grid.dtype() != DType::kF64;

  const std::int64_t batch = x.shape()[0], channels = x.shape()[1];
  Dims len(static_cast<std::size_t>(s)), ydims = {batch, channels};
  std::int64_t image = 1, points = 1;
  for (int i = 0; i < s; ++i) {
    len[static_cast<std::size_t>(i)] = x.shape()[2 + i];
    image *= x.shape()[2 + i];
    ydims.push_back(grid.shape()[1 + i]);
    points *= grid.shape()[1 + i];
  }
  if (image == 0 && points > 0 && channels > 0) return invalid_argument("GridSample of an empty image " + x.shape().to_string());
  TESSERA_ASSIGN_OR_RETURN(Tensor xd, as_f64(c.h, x));
  TESSERA_ASSIGN_OR_RETURN(Tensor gd, as_f64(c.h, grid));
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor(ydims, DType::kF64));
  const double* xp = xd.data<double>();
  const double* gp = gd.data<double>();
  double* yp = yd.data<double>();

  auto f32 = [narrow](double v) { return narrow ? static_cast<double>(static_cast<float>(v)) : v; };
  std::vector<Taps> taps(static_cast<std::size_t>(s));
  std::vector<std::int64_t> offs;
  std::vector<double> weights;
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t p = 0; p < points; ++p) {
      bool nan = false;
      for (int i = 0; i < s; ++i) {
        const std::int64_t l = len[static_cast<std::size_t>(i)];
        const auto ld = static_cast<double>(l);
        const double v = gp[(n * points + p) * s + (s - 1 - i)];
        double u = align ? f32(f32(f32(v + 1) / 2) * (ld - 1)) : f32(f32(f32(f32(v + 1) * ld) - 1) / 2);
        if (interp == Interp::kNearest) u = std::nearbyint(u);
        const double lo = align ? 0.0 : -0.5, hi = align ? ld - 1 : ld - 0.5;
        if (u < lo || u > hi) {
          if (pad == Padding::kBorder) u = std::clamp(u, 0.0, ld - 1);
          else if (pad == Padding::kReflection) u = reflect(u, lo, hi);
          else u = std::clamp(u, -8.0, ld + 8);  // every tap stays outside: still zeros
        }
        if (std::isnan(u)) {
          nan = true;
          break;
        }
        // A tap's element along this dim, or -1 where zero padding gives 0.
        auto tap = [&](double k) -> std::int64_t {
          if (pad == Padding::kZeros) return k < 0 || k >= ld ? -1 : static_cast<std::int64_t>(k);
          if (pad == Padding::kReflection) k = std::trunc(reflect(k, lo, hi));
          return static_cast<std::int64_t>(std::clamp(k, 0.0, ld - 1));
        };
        Taps& t = taps[static_cast<std::size_t>(i)];
        const double f = std::floor(u);
        if (interp == Interp::kNearest) {
          t.n = 1;
          t.at[0] = tap(u);
          t.w[0] = 1;
        } else if (interp == Interp::kLinear) {
          t.n = 2;
          t.at[0] = tap(f);
          t.at[1] = tap(f + 1);
          t.w[0] = 1 - (u - f);
          t.w[1] = u - f;
        } else {
          t.n = 4;
          cubic_weights(u - f, t.w);
          for (int k = 0; k < 4; ++k) t.at[k] = tap(f - 1 + k);
        }
      }
      // Every combination of the dims' taps: its offset in the image (-1: a padded zero) and weight.
      offs.assign(1, 0);
      weights.assign(1, 1.0);
      for (int i = 0; !nan && i < s; ++i) {
        const Taps& t = taps[static_cast<std::size_t>(i)];
        std::vector<std::int64_t> o2;
        std::vector<double> w2;
        for (std::size_t j = 0; j < offs.size(); ++j)
          for (int k = 0; k < t.n; ++k) {
            o2.push_back(offs[j] < 0 || t.at[k] < 0 ? -1 : offs[j] * len[static_cast<std::size_t>(i)] + t.at[k]);
            w2.push_back(weights[j] * t.w[k]);
          }
        offs = std::move(o2);
        weights = std::move(w2);
      }
      for (std::int64_t ch = 0; ch < channels; ++ch) {
        const double* img = xp + (n * channels + ch) * image;
        double sum = 0;
        for (std::size_t j = 0; j < offs.size(); ++j)
          if (offs[j] >= 0) sum += weights[j] * img[offs[j]];
        yp[(n * channels + ch) * points + p] = nan ? std::nan("") : sum;
      }
    }
  return from_f64(c.h, yd, x.dtype(), c.out[0]);
}

// AffineGrid: grid[n, p..., :] = theta[n] (x, y[, z], 1) for the evenly spaced positions of
// `size` in [-1, 1] (align_corners: the corner pixels' centres at -1 and 1, else their outer
// edges; a dim of 1 sits at 0), x running over the last dim.
Status affine_grid_kernel(KernelCall& c) {
  const Tensor& theta = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(const Dims size, int_values(*c.input(1), "size"));
  if (size.size() != 4 && size.size() != 5) return invalid_argument("AffineGrid's size must be (N, C, H, W) or (N, C, D, H, W), not " + dims_string(size));
  const int s = static_cast<int>(size.size()) - 2;
  if (theta.rank() != 3 || theta.shape()[1] != s || theta.shape()[2] != s + 1 || theta.shape()[0] != size[0])
    return invalid_argument("theta has dims " + theta.shape().to_string() + " for size " + dims_string(size) + ": it must be [" + std::to_string(size[0]) + ", " +
                            std::to_string(s) + ", " + std::to_string(s + 1) + "]");
  if (!is_floating(theta.dtype())) return invalid_argument("AffineGrid's theta must be a float tensor, not " + std::string(dtype_name(theta.dtype())));
  for (std::size_t i = 2; i < size.size(); ++i)
    if (size[i] < 0) return invalid_argument("a size of " + std::to_string(size[i]) + " in " + dims_string(size));
  const bool align = c.attr_int("align_corners", 0) != 0;
  const Dims spatial(size.begin() + 2, size.end());
  Dims ydims = {size[0]};
  ydims.insert(ydims.end(), spatial.begin(), spatial.end());
  ydims.push_back(s);
  std::int64_t points = 1;
  for (std::int64_t d : spatial) points *= d;
  auto base = [align](std::int64_t i, std::int64_t l) {
    if (l <= 1) return 0.0;
    const auto id = static_cast<double>(i), ld = static_cast<double>(l);
    return align ? -1.0 + 2.0 * id / (ld - 1) : -1.0 + (2.0 * id + 1.0) / ld;
  };
  TESSERA_ASSIGN_OR_RETURN(Tensor td, as_f64(c.h, theta));
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor(ydims, DType::kF64));
  const double* tp = td.data<double>();
  double* yp = yd.data<double>();
  Dims idx;
  std::vector<double> h(static_cast<std::size_t>(s + 1), 1.0);
  for (std::int64_t p = 0; p < points; ++p) {
    unravel(p, spatial, idx);
    for (int j = 0; j < s; ++j) h[static_cast<std::size_t>(j)] = base(idx[static_cast<std::size_t>(s - 1 - j)], spatial[static_cast<std::size_t>(s - 1 - j)]);
    for (std::int64_t n = 0; n < size[0]; ++n)
      for (int j = 0; j < s; ++j) {
        double v = 0;
        for (int k = 0; k <= s; ++k) v += tp[(n * s + j) * (s + 1) + k] * h[static_cast<std::size_t>(k)];
        yp[(n * points + p) * s + j] = v;
      }
  }
  return from_f64(c.h, yd, theta.dtype(), c.out[0]);
}

// Col2Im: input [N, C * prod(block_shape), L] holds, per channel and block element, a value
// for each of the L sliding blocks (in row-major order over the block grid); each is added
// into the image [N, C, image_shape...] at block position * stride - pad begin + element
// offset * dilation, where that falls inside.
Status col2im_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(const Dims image, int_values(*c.input(1), "image_shape"));
  TESSERA_ASSIGN_OR_RETURN(const Dims block, int_values(*c.input(2), "block_shape"));
  if (x.rank() != 3) return invalid_argument("Col2Im's input must be [N, C * prod(block_shape), L], not " + x.shape().to_string());
  const std::size_t s = image.size();
  if (s == 0 || block.size() != s) return invalid_argument("image_shape " + dims_string(image) + " and block_shape " + dims_string(block) + " must name the same spatial dims");
  const Dims dil = c.attr_ints("dilations").value_or(Dims(s, 1)), strides = c.attr_ints("strides").value_or(Dims(s, 1));
  const Dims pads = c.attr_ints("pads").value_or(Dims(2 * s, 0));
  if (dil.size() != s || strides.size() != s || pads.size() != 2 * s)
    return invalid_argument("dilations, strides and pads must have " + std::to_string(s) + ", " + std::to_string(s) + " and " + std::to_string(2 * s) + " values");
  std::int64_t kernel = 1, blocks = 1, pixels = 1;
  Dims grid(s);
  for (std::size_t i = 0; i < s; ++i) {
    if (image[i] < 1 || block[i] < 1 || dil[i] < 1 || strides[i] < 1 || pads[i] < 0 || pads[i + s] < 0)
      return invalid_argument("image_shape, block_shape, dilations and strides must be positive and pads not negative");
    const std::int64_t span = dil[i] * (block[i] - 1) + 1, room = image[i] + pads[i] + pads[i + s];
    if (room < span) return invalid_argument("a block of extent " + std::to_string(span) + " does not fit the padded image dim " + std::to_string(room));
    grid[i] = (room - span) / strides[i] + 1;
    kernel *= block[i];
    blocks *= grid[i];
    pixels *= image[i];
  }
  if (x.shape()[1] % kernel != 0) return invalid_argument("input dim 1 (" + std::to_string(x.shape()[1]) + ") is not a multiple of the block size " + std::to_string(kernel));
  if (x.shape()[2] != blocks)
    return invalid_argument("input dim 2 is " + std::to_string(x.shape()[2]) + ", the block grid " + dims_string(grid) + " has " + std::to_string(blocks) + " blocks");
  const std::int64_t batch = x.shape()[0], channels = x.shape()[1] / kernel;
  Dims ydims = {batch, channels};
  ydims.insert(ydims.end(), image.begin(), image.end());
  TESSERA_ASSIGN_OR_RETURN(Tensor xd, as_f64(c.h, x));
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor(ydims, DType::kF64));
  const double* xp = xd.data<double>();
  double* yp = yd.data<double>();
  std::fill(yp, yp + yd.numel(), 0.0);
  Dims kidx, bidx;
  for (std::int64_t k = 0; k < kernel; ++k) {
    unravel(k, block, kidx);
    for (std::int64_t b = 0; b < blocks; ++b) {
      unravel(b, grid, bidx);
      std::int64_t at = 0;
      bool inside = true;
      for (std::size_t i = 0; i < s && inside; ++i) {
        const std::int64_t pos = bidx[i] * strides[i] - pads[i] + kidx[i] * dil[i];
        inside = pos >= 0 && pos < image[i];
        at = at * image[i] + pos;
      }
      if (!inside) continue;
      for (std::int64_t n = 0; n < batch; ++n)
        for (std::int64_t ch = 0; ch < channels; ++ch)
          yp[(n * channels + ch) * pixels + at] += xp[((n * channels + ch) * kernel + k) * blocks + b];
    }
  }
  return from_f64(c.h, yd, x.dtype(), c.out[0]);
}

// MaxUnpool: Y of the inferred dims [N, C, (in - 1) * stride - pad begin - pad end + kernel...]
// zero but for each X value written at its flat index I over Y (later ones win); with
// output_shape, that result sits at the start of a zero tensor of those (no smaller) dims.
Status max_unpool_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &ind = *c.input(1);
  const int r = x.rank();
  if (r < 3) return invalid_argument("MaxUnpool's X must be [N, C, spatial dims...], not " + x.shape().to_string());
  const auto s = static_cast<std::size_t>(r - 2);
  if (ind.shape().dims() != x.shape().dims()) return invalid_argument("I has dims " + ind.shape().to_string() + ", X " + x.shape().to_string());
  if (ind.dtype() != DType::kI64 && ind.dtype() != DType::kI32) return invalid_argument("I must be i64, not " + std::string(dtype_name(ind.dtype())));
  const auto kernel = c.attr_ints("kernel_shape");
  if (!kernel || kernel->size() != s) return invalid_argument("kernel_shape must have one value per spatial dim (" + std::to_string(s) + ")");
  const Dims strides = c.attr_ints("strides").value_or(Dims(s, 1)), pads = c.attr_ints("pads").value_or(Dims(2 * s, 0));
  if (strides.size() != s || pads.size() != 2 * s) return invalid_argument("strides and pads must have " + std::to_string(s) + " and " + std::to_string(2 * s) + " values");
  Dims inferred = {x.shape()[0], x.shape()[1]};
  for (std::size_t i = 0; i < s; ++i) {
    if ((*kernel)[i] < 1 || strides[i] < 1 || pads[i] < 0 || pads[i + s] < 0) return invalid_argument("kernel_shape and strides must be positive and pads not negative");
    const std::int64_t d = (x.shape()[static_cast<int>(i) + 2] - 1) * strides[i] - pads[i] - pads[i + s] + (*kernel)[i];
    if (d < 0) return invalid_argument("the unpooled dim " + std::to_string(i) + " would be " + std::to_string(d));
    inferred.push_back(d);
  }
  Dims ydims = inferred;
  if (const Tensor* os = c.input(2)) {
    TESSERA_ASSIGN_OR_RETURN(ydims, int_values(*os, "output_shape"));
    bool fits = ydims.size() == inferred.size();
    for (std::size_t i = 0; fits && i < ydims.size(); ++i) fits = i < 2 ? ydims[i] == inferred[i] : ydims[i] >= inferred[i];
    if (!fits) return invalid_argument("output_shape " + dims_string(ydims) + " cannot hold the unpooled dims " + dims_string(inferred));
  }
  std::int64_t total = 1;
  for (std::int64_t d : inferred) total *= d;
  TESSERA_ASSIGN_OR_RETURN(Tensor xp, like(x, x.dtype()));
  TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(x), x.data(), desc(xp), xp.data()));
  TESSERA_ASSIGN_OR_RETURN(Tensor ip, like(ind, DType::kI64));
  TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(ind), ind.data(), desc(ip), ip.data()));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, ydims, x.dtype()));
  const std::size_t es = x.element_size();
  auto* dst = static_cast<std::byte*>(c.out[0].data());
  const auto* src = static_cast<const std::byte*>(xp.data());
  std::memset(dst, 0, c.out[0].nbytes());
  const std::int64_t* idx = ip.data<std::int64_t>();
  Dims at;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    if (idx[i] < 0 || idx[i] >= total) return invalid_argument("index " + std::to_string(idx[i]) + " is outside [0, " + std::to_string(total) + ") of the unpooled dims " + dims_string(inferred));
    unravel(idx[i], inferred, at);
    std::int64_t off = 0;
    for (std::size_t d = 0; d < at.size(); ++d) off = off * ydims[d] + at[d];
    std::memcpy(dst + static_cast<std::size_t>(off) * es, src + static_cast<std::size_t>(i) * es, es);
  }
  return Status::ok();
}

}  // namespace tessera::exec::detail
