// The executor's rarer convolution and region-pooling kernels, reference-grade: RoiAlign
// (bilinear samples averaged or maxed over each bin of a box; f64), DeformConv (any number of
// spatial dims: each kernel tap sampled at its offset position by multilinear interpolation,
// optionally masked; f64) and the quantised convolutions ConvInteger (i32) and QLinearConv
// (requantised to the output zero point's type), summed exactly in i64 with zero points per
// tensor or per output channel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "kernels.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;

std::string type_name(DType t) { return std::string(dtype_name(t)); }

// An attribute with one entry per spatial dim, `dflt` for each when left out.
Result<Dims> per_dim(const KernelCall& c, const char* name, std::size_t n, std::int64_t dflt, std::int64_t min) {
  Dims v = c.attr_ints(name).value_or(Dims{});
  if (v.empty()) v.assign(n, dflt);
  if (v.size() != n) return invalid_argument(std::string(name) + " has " + std::to_string(v.size()) + " entries for " + std::to_string(n) + " spatial dims");
  for (std::int64_t e : v)
    if (e < min) return invalid_argument(std::string(name) + " " + dims_string(v) + ": each must be at least " + std::to_string(min));
  return v;
}

// The geometry of a convolution of x [N, C, spatial...] by w [M, C / group, kernel...].
struct ConvGeom {
  std::size_t n = 0;  // spatial dims
  Dims in, kernel, stride, dilation, pb, pe, out;
  std::int64_t batch = 0, channels = 0, maps = 0, group = 1;
  std::int64_t in_vol = 1, k_vol = 1, out_vol = 1;
};

// Checks x and w against the attributes (kernel_shape, strides, dilations, group, and pads or
// auto_pad where the op has it) and computes the output dims.
Result<ConvGeom> conv_geom(const KernelCall& c, const Tensor& x, const Tensor& w, const std::string& op, bool auto_pad) {
  ConvGeom g;
  if (x.rank() < 3) return invalid_argument(op + "'s X must be [N, C, spatial dims...], not " + x.shape().to_string());
  if (w.rank() != x.rank()) return invalid_argument(op + "'s W " + w.shape().to_string() + " must have X's rank " + std::to_string(x.rank()));
  g.n = static_cast<std::size_t>(x.rank() - 2);
  g.batch = x.shape()[0];
  g.channels = x.shape()[1];
  g.maps = w.shape()[0];
  g.group = c.attr_int("group", 1);
  if (g.group < 1) return invalid_argument("group must be positive, not " + std::to_string(g.group));
  if (w.shape()[1] * g.group != g.channels || g.maps % g.group != 0)
    return invalid_argument(op + "'s W " + w.shape().to_string() + " does not fit X " + x.shape().to_string() + " in " + std::to_string(g.group) +
                            " groups (W must be [M, C / group, kernel...] with M divisible by group)");
  const Dims wdims = w.shape().dims();
  g.kernel.assign(wdims.begin() + 2, wdims.end());
  if (const auto ks = c.attr_ints("kernel_shape"); ks && *ks != g.kernel) return invalid_argument("kernel_shape " + dims_string(*ks) + " differs from W's kernel dims " + dims_string(g.kernel));
  TESSERA_ASSIGN_OR_RETURN(g.stride, per_dim(c, "strides", g.n, 1, 1));
  TESSERA_ASSIGN_OR_RETURN(g.dilation, per_dim(c, "dilations", g.n, 1, 1));
  if (auto_pad) {
    TESSERA_RETURN_IF_ERROR(spatial_pads(c, x, g.kernel, g.stride, g.dilation, g.pb, g.pe));
  } else {
    g.pb.assign(g.n, 0);
    g.pe.assign(g.n, 0);
    if (const auto pads = c.attr_ints("pads")) {
      if (pads->size() != 2 * g.n) return invalid_argument("pads has " + std::to_string(pads->size()) + " entries for " + std::to_string(g.n) + " spatial dims");
      std::copy_n(pads->begin(), g.n, g.pb.begin());
      std::copy_n(pads->begin() + static_cast<std::ptrdiff_t>(g.n), g.n, g.pe.begin());
    }
  }
  for (std::size_t i = 0; i < g.n; ++i) {
    if (g.pb[i] < 0 || g.pe[i] < 0) return invalid_argument("pads must not be negative");
    const std::int64_t in = x.shape()[static_cast<int>(i) + 2], span = (g.kernel[i] - 1) * g.dilation[i] + 1;
    const std::int64_t room = in + g.pb[i] + g.pe[i] - span;
    if (g.kernel[i] < 1 || room < 0)
      return invalid_argument(op + ": the kernel " + dims_string(g.kernel) + " (dilated) does not fit the padded input along spatial dim " + std::to_string(i));
    g.in.push_back(in);
    g.out.push_back(room / g.stride[i] + 1);
    g.in_vol *= in;
    g.k_vol *= g.kernel[i];
    g.out_vol *= g.out.back();
  }
  return g;
}

// A zero point or scale: one value, or (per_channel) one per output channel; as `count`
// values either way.
Result<std::vector<double>> per_channel(dnn::Handle& h, const Tensor* t, std::int64_t count, bool per_channel_ok, double dflt, const std::string& what) {
  if (!t || t->numel() == 0) return std::vector<double>(static_cast<std::size_t>(count), dflt);
  const bool one = t->numel() == 1 && t->rank() <= 1;
  if (!one && !(per_channel_ok && t->rank() == 1 && t->shape()[0] == count))
    return invalid_argument(what + " must be a scalar" + (per_channel_ok ? " or hold one value per output channel (" + std::to_string(count) + ")" : std::string()) + ", not " + t->shape().to_string());
  TESSERA_ASSIGN_OR_RETURN(Tensor d, as_f64(h, *t));
  std::vector<double> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = d.data<double>()[one ? 0 : i];
  return v;
}

Status check_quant(const Tensor& t, const std::string& what) {
  if (t.dtype() != DType::kU8 && t.dtype() != DType::kI8) return invalid_argument(what + " must be u8 or i8, not " + type_name(t.dtype()));
  return Status::ok();
}

// The integer convolution sum(x - x_zero) * (w - w_zero[m]) per output element, exact in i64.
Result<std::vector<std::int64_t>> int_conv(dnn::Handle& h, const ConvGeom& g, const Tensor& x, const Tensor& w, std::int64_t x_zero, const std::vector<double>& w_zero) {
  TESSERA_ASSIGN_OR_RETURN(Tensor xi, as_i64(h, x));
  TESSERA_ASSIGN_OR_RETURN(Tensor wi, as_i64(h, w));
  const std::int64_t* xp = xi.data<std::int64_t>();
  const std::int64_t* wp = wi.data<std::int64_t>();
  const std::int64_t cg = g.channels / g.group, mg = g.maps / g.group;
  std::vector<std::int64_t> acc(static_cast<std::size_t>(g.batch * g.maps * g.out_vol), 0);
  Dims o, k;
  for (std::int64_t b = 0; b < g.batch; ++b)
    for (std::int64_t m = 0; m < g.maps; ++m) {
      const auto wz = static_cast<std::int64_t>(w_zero[static_cast<std::size_t>(m)]);
      const std::int64_t c0 = m / mg * cg;
      for (std::int64_t oi = 0; oi < g.out_vol; ++oi) {
        unravel(oi, g.out, o);
        std::int64_t sum = 0;
        for (std::int64_t ki = 0; ki < g.k_vol; ++ki) {
          unravel(ki, g.kernel, k);
          std::int64_t off = 0;
          bool inside = true;
          for (std::size_t i = 0; i < g.n && inside; ++i) {
            const std::int64_t at = o[i] * g.stride[i] - g.pb[i] + k[i] * g.dilation[i];
            inside = at >= 0 && at < g.in[i];
            off = off * g.in[i] + at;
          }
          if (!inside) continue;  // padding holds the zero point: it adds nothing
          for (std::int64_t ci = 0; ci < cg; ++ci)
            sum += (xp[(b * g.channels + c0 + ci) * g.in_vol + off] - x_zero) * (wp[(m * cg + ci) * g.k_vol + ki] - wz);
        }
        acc[static_cast<std::size_t>((b * g.maps + m) * g.out_vol + oi)] = sum;
      }
    }
  return acc;
}

Dims y_dims(const ConvGeom& g) {
  Dims d = {g.batch, g.maps};
  d.insert(d.end(), g.out.begin(), g.out.end());
  return d;
}

}  // namespace

// RoiAlign (opsets 10, 16, 22): Y[r, c] is a pooled_h x pooled_w grid over box r (x1, y1, x2,
// y2, scaled by spatial_scale; half_pixel shifts it by -0.5, output_half_pixel, opset 10's
// rule, does not and makes a box at least 1 x 1) of X[batch_indices[r], c]. Each bin averages
// (avg) or maxes (max) sampling_ratio^2 bilinear samples (adaptive: ceil(box / bins) per dim
// when 0). A sample more than a pixel outside the image is 0; one within a pixel is clamped to
// the edge. In max mode a sample is the largest of its four weighted corners, not their sum,
// as ONNX's reference and ONNX Runtime compute it.
Status roi_align_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), *rp = c.input(1), *bp = c.input(2);
  if (!rp || !bp) return invalid_argument("RoiAlign needs rois and batch_indices");
  const Tensor &rois = *rp, &bi = *bp;
  if (x.rank() != 4) return invalid_argument("RoiAlign's X must be [N, C, H, W], not " + x.shape().to_string());
  if (!is_floating(x.dtype())) return invalid_argument("RoiAlign of " + type_name(x.dtype()) + " (it takes f16, bf16, f32 or f64)");
  if (rois.rank() != 2 || rois.shape()[1] != 4) return invalid_argument("rois must be [num_rois, 4], not " + rois.shape().to_string());
  if (!is_floating(rois.dtype())) return invalid_argument("rois must be a float tensor, not " + type_name(rois.dtype()));
  const std::int64_t nr = rois.shape()[0];
  if (bi.rank() != 1 || bi.shape()[0] != nr) return invalid_argument("batch_indices must be [" + std::to_string(nr) + "] (one per box), not " + bi.shape().to_string());
  TESSERA_ASSIGN_OR_RETURN(const std::vector<std::int64_t> batch_of, int_values(bi, "batch_indices"));
  const std::int64_t n = x.shape()[0], ch = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
  for (std::int64_t r = 0; r < nr; ++r) {
    const std::int64_t b = batch_of[static_cast<std::size_t>(r)];
    if (b < 0 || b >= n) return invalid_argument("batch_indices[" + std::to_string(r) + "] = " + std::to_string(b) + " is outside X's batch of " + std::to_string(n));
  }
  const std::string mode = c.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return invalid_argument("mode '" + mode + "' (avg or max)");
  const std::string ctm = c.attr_string("coordinate_transformation_mode", c.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") return invalid_argument("coordinate_transformation_mode '" + ctm + "' (half_pixel or output_half_pixel)");
  const std::int64_t ph_n = c.attr_int("output_height", 1), pw_n = c.attr_int("output_width", 1), ratio = c.attr_int("sampling_ratio", 0);
  if (ph_n < 1 || pw_n < 1) return invalid_argument("output_height and output_width must be positive");
  if (ratio < 0) return invalid_argument("sampling_ratio must not be negative, not " + std::to_string(ratio));
  const double scale = c.attr_float("spatial_scale", 1.0f);
  const bool half = ctm == "half_pixel", max = mode == "max";
  if (nr > 0 && ch > 0 && (height == 0 || width == 0)) return invalid_argument("RoiAlign over an empty image " + x.shape().to_string());
  TESSERA_ASSIGN_OR_RETURN(Tensor xd, as_f64(c.h, x));
  TESSERA_ASSIGN_OR_RETURN(Tensor rd, as_f64(c.h, rois));
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor({nr, ch, ph_n, pw_n}, DType::kF64));
  const double* xp = xd.data<double>();
  double* yp = yd.data<double>();
  // A sample's four corners (element offsets in the plane) and weights; all weights 0 outside.
  struct Sample {
    std::int64_t at[4] = {0, 0, 0, 0};
    double w[4] = {0, 0, 0, 0};
  };
  auto sample_at = [&](double y, double xx) {
    Sample s;
    const auto hd = static_cast<double>(height), wd = static_cast<double>(width);
    if (y < -1.0 || y > hd || xx < -1.0 || xx > wd) return s;
    y = std::max(y, 0.0);
    xx = std::max(xx, 0.0);
    auto y0 = static_cast<std::int64_t>(y), x0 = static_cast<std::int64_t>(xx), y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= height - 1) y = static_cast<double>(y0 = y1 = height - 1);
    if (x0 >= width - 1) xx = static_cast<double>(x0 = x1 = width - 1);
    const double ly = y - static_cast<double>(y0), lx = xx - static_cast<double>(x0);
    s.at[0] = y0 * width + x0, s.at[1] = y0 * width + x1, s.at[2] = y1 * width + x0, s.at[3] = y1 * width + x1;
    s.w[0] = (1 - ly) * (1 - lx), s.w[1] = (1 - ly) * lx, s.w[2] = ly * (1 - lx), s.w[3] = ly * lx;
    return s;
  };
  std::vector<Sample> samples;
  for (std::int64_t r = 0; r < nr; ++r) {
    const double* box = rd.data<double>() + r * 4;
    for (int i = 0; i < 4; ++i)
      if (!std::isfinite(box[i])) return invalid_argument("box " + std::to_string(r) + " has a non-finite coordinate");
    const double off = half ? 0.5 : 0.0;
    const double x_start = box[0] * scale - off, y_start = box[1] * scale - off;
    double bw = box[2] * scale - off - x_start, bh = box[3] * scale - off - y_start;
    if (!half) {
      bw = std::max(bw, 1.0);
      bh = std::max(bh, 1.0);
    }
    const double bin_h = bh / static_cast<double>(ph_n), bin_w = bw / static_cast<double>(pw_n);
    const double gh = ratio > 0 ? static_cast<double>(ratio) : std::ceil(bin_h), gw = ratio > 0 ? static_cast<double>(ratio) : std::ceil(bin_w);
    if (gh * gw > static_cast<double>(std::numeric_limits<std::int32_t>::max()))
      return invalid_argument("box " + std::to_string(r) + " needs " + std::to_string(gh * gw) + " samples per bin");
    // A negative box (half_pixel allows it) samples nothing.
    const std::int64_t grid_h = std::max<std::int64_t>(static_cast<std::int64_t>(gh), 0), grid_w = std::max<std::int64_t>(static_cast<std::int64_t>(gw), 0);
    const double count = static_cast<double>(std::max<std::int64_t>(grid_h * grid_w, 1));
    samples.clear();
    for (std::int64_t ph = 0; ph < ph_n; ++ph)
      for (std::int64_t pw = 0; pw < pw_n; ++pw)
        for (std::int64_t iy = 0; iy < grid_h; ++iy) {
          const double y = y_start + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
          for (std::int64_t ix = 0; ix < grid_w; ++ix)
            samples.push_back(sample_at(y, x_start + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w)));
        }
    const std::int64_t per_bin = grid_h * grid_w;
    for (std::int64_t k = 0; k < ch; ++k) {
      const double* plane = xp + (batch_of[static_cast<std::size_t>(r)] * ch + k) * height * width;
      for (std::int64_t bin = 0; bin < ph_n * pw_n; ++bin) {
        double v = 0.0;
        for (std::int64_t s = 0; s < per_bin; ++s) {
          const Sample& sm = samples[static_cast<std::size_t>(bin * per_bin + s)];
          if (max) {
            double m = sm.w[0] * plane[sm.at[0]];
            for (int q = 1; q < 4; ++q) m = std::max(m, sm.w[q] * plane[sm.at[q]]);
            v = s == 0 ? m : std::max(v, m);
          } else {
            for (int q = 0; q < 4; ++q) v += sm.w[q] * plane[sm.at[q]];
          }
        }
        yp[(r * ch + k) * ph_n * pw_n + bin] = max ? v : v / count;
      }
    }
  }
  return from_f64(c.h, yd, x.dtype(), c.out[0]);
}

// DeformConv (opset 19, 22): a convolution whose kernel tap k at output position o reads X at
// o * stride - pad_begin + k * dilation + offset[n, g, k, :, o] (offset group g of the input
// channel), interpolated multilinearly with zeros outside the input, times mask[n, g, k, o]
// (1 when left out), plus the bias. Offsets are [N, offset_group * taps * spatial dims, out
// dims...], the spatial coordinates of each tap together, first dim first.
Status deform_conv_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), *wp = c.input(1), *op = c.input(2);
  if (!wp || !op) return invalid_argument("DeformConv needs W and offset");
  const Tensor &w = *wp, &offset = *op;
  for (const Tensor* t : {&x, &w, &offset, c.input(3), c.input(4)})
    if (t && !is_floating(t->dtype())) return invalid_argument("DeformConv takes float tensors, not " + type_name(t->dtype()));
  TESSERA_ASSIGN_OR_RETURN(const ConvGeom g, conv_geom(c, x, w, "DeformConv", false));
  const std::int64_t og = c.attr_int("offset_group", 1);
  if (og < 1 || g.channels % og != 0) return invalid_argument("offset_group " + std::to_string(og) + " must be positive and divide the " + std::to_string(g.channels) + " input channels");
  const auto sp = static_cast<std::int64_t>(g.n);
  Dims odims = {g.batch, og * g.k_vol * sp};
  odims.insert(odims.end(), g.out.begin(), g.out.end());
  if (offset.shape().dims() != odims) return invalid_argument("offset " + offset.shape().to_string() + " must be " + dims_string(odims) + " for these X, W and attributes");
  const Tensor* mask = c.input(4);
  Dims mdims = odims;
  mdims[1] = og * g.k_vol;
  if (mask && mask->shape().dims() != mdims) return invalid_argument("mask " + mask->shape().to_string() + " must be " + dims_string(mdims));
  const Tensor* bias = c.input(3);
  if (bias && (bias->rank() != 1 || bias->shape()[0] != g.maps)) return invalid_argument("the bias must be [" + std::to_string(g.maps) + "], not " + bias->shape().to_string());
  TESSERA_ASSIGN_OR_RETURN(Tensor xd, as_f64(c.h, x));
  TESSERA_ASSIGN_OR_RETURN(Tensor wd, as_f64(c.h, w));
  TESSERA_ASSIGN_OR_RETURN(Tensor od, as_f64(c.h, offset));
  Tensor md, bd;
  if (mask) {
    TESSERA_ASSIGN_OR_RETURN(md, as_f64(c.h, *mask));
  }
  if (bias) {
    TESSERA_ASSIGN_OR_RETURN(bd, as_f64(c.h, *bias));
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor(y_dims(g), DType::kF64));
  const double *xp = xd.data<double>(), *wv = wd.data<double>(), *ov = od.data<double>();
  double* yp = yd.data<double>();
  const std::int64_t cg = g.channels / g.group, mg = g.maps / g.group, cpo = g.channels / og;
  const std::int64_t corners = std::int64_t{1} << g.n;
  // Per output position: the sampled (and masked) value of every input channel at every tap.
  std::vector<double> col(static_cast<std::size_t>(g.channels * g.k_vol));
  std::vector<std::int64_t> at(static_cast<std::size_t>(corners));
  std::vector<double> wt(static_cast<std::size_t>(corners));
  Dims o, k;
  for (std::int64_t b = 0; b < g.batch; ++b)
    for (std::int64_t oi = 0; oi < g.out_vol; ++oi) {
      unravel(oi, g.out, o);
      for (std::int64_t gi = 0; gi < og; ++gi)
        for (std::int64_t ki = 0; ki < g.k_vol; ++ki) {
          unravel(ki, g.kernel, k);
          // The corners around the sampling point, and their weights (0 where outside).
          std::fill(at.begin(), at.end(), 0);
          std::fill(wt.begin(), wt.end(), 1.0);
          for (std::size_t i = 0; i < g.n; ++i) {
            const double d = ov[((b * og + gi) * g.k_vol * sp + ki * sp + static_cast<std::int64_t>(i)) * g.out_vol + oi];
            const double p = static_cast<double>(o[i] * g.stride[i] - g.pb[i] + k[i] * g.dilation[i]) + d;
            const double f = std::floor(p);
            const double lo_w = 1.0 - (p - f);
            // Far outside (or NaN): every corner is outside, so every weight is 0.
            const bool far = !(f >= -1.0 && f < static_cast<double>(g.in[i]));
            const std::int64_t lo = far ? -2 : static_cast<std::int64_t>(f);
            for (std::int64_t q = 0; q < corners; ++q) {
              const bool upper = (q >> (g.n - 1 - i)) & 1;
              const std::int64_t e = lo + (upper ? 1 : 0);
              const std::size_t qi = static_cast<std::size_t>(q);
              if (far || e < 0 || e >= g.in[i]) {
                wt[qi] = 0.0;
                at[qi] = 0;
              } else {
                wt[qi] *= upper ? 1.0 - lo_w : lo_w;
                at[qi] = at[qi] * g.in[i] + e;
              }
            }
          }
          const double m = mask ? md.data<double>()[((b * og + gi) * g.k_vol + ki) * g.out_vol + oi] : 1.0;
          for (std::int64_t ci = gi * cpo; ci < (gi + 1) * cpo; ++ci) {
            const double* plane = xp + (b * g.channels + ci) * g.in_vol;
            double v = 0.0;
            for (std::size_t q = 0; q < at.size(); ++q)
              if (wt[q] != 0.0) v += wt[q] * plane[at[q]];
            col[static_cast<std::size_t>(ci * g.k_vol + ki)] = v * m;
          }
        }
      for (std::int64_t mi = 0; mi < g.maps; ++mi) {
        const std::int64_t c0 = mi / mg * cg;
        double sum = bias ? bd.data<double>()[mi] : 0.0;
        for (std::int64_t ci = 0; ci < cg; ++ci)
          for (std::int64_t ki = 0; ki < g.k_vol; ++ki) sum += wv[(mi * cg + ci) * g.k_vol + ki] * col[static_cast<std::size_t>((c0 + ci) * g.k_vol + ki)];
        yp[(b * g.maps + mi) * g.out_vol + oi] = sum;
      }
    }
  return from_f64(c.h, yd, x.dtype(), c.out[0]);
}

// ConvInteger (opset 10): the convolution of (x - x_zero_point) by (w - w_zero_point), u8 or
// i8 each, as i32 (wrapping past 32 bits); w_zero_point per tensor or per output channel.
// Padding holds the zero point (it adds nothing).
Status conv_integer_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), *wp = c.input(1);
  if (!wp) return invalid_argument("ConvInteger needs W");
  const Tensor& w = *wp;
  TESSERA_RETURN_IF_ERROR(check_quant(x, "x"));
  TESSERA_RETURN_IF_ERROR(check_quant(w, "w"));
  TESSERA_ASSIGN_OR_RETURN(const ConvGeom g, conv_geom(c, x, w, "ConvInteger", true));
  for (const auto& [t, name, like_t] : {std::tuple{c.input(2), "x_zero_point", &x}, std::tuple{c.input(3), "w_zero_point", &w}})
    if (t && t->dtype() != like_t->dtype()) return invalid_argument(std::string(name) + " is " + type_name(t->dtype()) + " but its tensor is " + type_name(like_t->dtype()));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> xz, per_channel(c.h, c.input(2), 1, false, 0.0, "x_zero_point"));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> wz, per_channel(c.h, c.input(3), g.maps, true, 0.0, "w_zero_point"));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<std::int64_t> acc, int_conv(c.h, g, x, w, static_cast<std::int64_t>(xz[0]), wz));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, y_dims(g), DType::kI32));
  auto* y = c.out[0].data<std::int32_t>();
  for (std::size_t i = 0; i < acc.size(); ++i) y[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(acc[i]));
  return Status::ok();
}

// QLinearConv (opset 10): the integer convolution of (x - x_zero) by (w - w_zero[m]) plus the
// i32 bias, times x_scale * w_scale[m] / y_scale (that multiplier in f32, as ONNX's reference
// forms it), rounded half to even, plus y_zero_point, saturated to its type (u8 or i8).
Status qlinear_conv_kernel(KernelCall& c) {
  for (std::size_t k = 0; k < 8; ++k)
    if (!c.input(k)) return invalid_argument("QLinearConv needs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale and y_zero_point");
  const Tensor &x = *c.input(0), &w = *c.input(3), &yz = *c.input(7);
  TESSERA_RETURN_IF_ERROR(check_quant(x, "x"));
  TESSERA_RETURN_IF_ERROR(check_quant(w, "w"));
  TESSERA_RETURN_IF_ERROR(check_quant(yz, "y_zero_point"));
  if (c.input(2)->dtype() != x.dtype() || c.input(5)->dtype() != w.dtype()) return invalid_argument("each zero point must have its tensor's type");
  for (const std::size_t k : {std::size_t{1}, std::size_t{4}, std::size_t{6}})
    if (!is_floating(c.input(k)->dtype())) return invalid_argument("the scales must be float tensors, not " + type_name(c.input(k)->dtype()));
  TESSERA_ASSIGN_OR_RETURN(const ConvGeom g, conv_geom(c, x, w, "QLinearConv", true));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> xs, per_channel(c.h, c.input(1), 1, false, 1.0, "x_scale"));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> xz, per_channel(c.h, c.input(2), 1, false, 0.0, "x_zero_point"));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> ws, per_channel(c.h, c.input(4), g.maps, true, 1.0, "w_scale"));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> wz, per_channel(c.h, c.input(5), g.maps, true, 0.0, "w_zero_point"));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> ys, per_channel(c.h, c.input(6), 1, false, 1.0, "y_scale"));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<double> yzv, per_channel(c.h, &yz, 1, false, 0.0, "y_zero_point"));
  std::vector<double> bias(static_cast<std::size_t>(g.maps), 0.0);
  if (const Tensor* b = c.input(8)) {
    if (b->dtype() != DType::kI32 || b->rank() != 1 || b->shape()[0] != g.maps)
      return invalid_argument("the bias must be i32 [" + std::to_string(g.maps) + "], not " + type_name(b->dtype()) + " " + b->shape().to_string());
    TESSERA_ASSIGN_OR_RETURN(bias, per_channel(c.h, b, g.maps, true, 0.0, "B"));
  }
  if (!(ys[0] != 0.0)) return invalid_argument("y_scale must be nonzero");
  TESSERA_ASSIGN_OR_RETURN(const std::vector<std::int64_t> acc, int_conv(c.h, g, x, w, static_cast<std::int64_t>(xz[0]), wz));
  const bool is_signed = yz.dtype() == DType::kI8;
  const double lo = is_signed ? -128.0 : 0.0, hi = is_signed ? 127.0 : 255.0;
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor(y_dims(g), DType::kF64));
  double* y = yd.data<double>();
  for (std::int64_t b = 0; b < g.batch; ++b)
    for (std::int64_t m = 0; m < g.maps; ++m) {
      const auto xw = static_cast<float>(xs[0] * ws[static_cast<std::size_t>(m)]);
      const auto mult = static_cast<double>(static_cast<float>(static_cast<double>(xw) / ys[0]));
      for (std::int64_t oi = 0; oi < g.out_vol; ++oi) {
        const std::size_t at = static_cast<std::size_t>((b * g.maps + m) * g.out_vol + oi);
        const double v = static_cast<double>(acc[at]) + bias[static_cast<std::size_t>(m)];
        y[at] = std::clamp(std::nearbyint(v * mult) + yzv[0], lo, hi);
      }
    }
  return from_f64(c.h, yd, yz.dtype(), c.out[0]);
}

}  // namespace tessera::exec::detail
