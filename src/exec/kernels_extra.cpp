// The executor's rarer math, signal and cache-update kernels, reference-grade (f64 loops, each
// output rounded once): Det (LU with partial pivoting over any batch dims), SwiGLU (a Swish
// gate times a value input), TensorScatter (a KV-cache write along the sequence axis, linear or
// circular), STFT (windowed frames, each transformed by a direct DFT) and MelWeightMatrix
// (triangular mel filter banks over the bins of a one-sided spectrum).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>

#include "kernels.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;

std::string type_name(DType t) { return std::string(dtype_name(t)); }

// An integer scalar input (i32 or i64, one value).
Result<std::int64_t> int_scalar(const Tensor& t, const std::string& what) {
  if (t.numel() != 1) return invalid_argument(what + " must hold one value, not " + t.shape().to_string());
  TESSERA_ASSIGN_OR_RETURN(const std::vector<std::int64_t> v, int_values(t, what));
  return v[0];
}

constexpr double kTwoPi = 6.283185307179586476925286766559;

}  // namespace

// Det: the determinant of each [M, M] matrix in the last two dims, by Gaussian elimination
// with partial pivoting in f64 (a zero pivot column gives 0); an empty matrix has determinant
// 1. The output drops the two matrix dims.
Status det_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const int r = x.rank();
  if (r < 2 || x.shape()[r - 1] != x.shape()[r - 2]) return invalid_argument("Det takes [..., M, M] square matrices, not " + x.shape().to_string());
  if (!is_floating(x.dtype())) return invalid_argument("Det of " + type_name(x.dtype()) + " (it takes f16, bf16, f32 or f64)");
  const std::int64_t m = x.shape()[r - 1];
  Dims ydims(x.shape().dims().begin(), x.shape().dims().end() - 2);
  TESSERA_ASSIGN_OR_RETURN(Tensor xd, as_f64(c.h, x));
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor(ydims, DType::kF64));
  const std::int64_t batch = yd.numel();
  std::vector<double> a(static_cast<std::size_t>(m * m));
  for (std::int64_t b = 0; b < batch; ++b) {
    std::copy_n(xd.data<double>() + b * m * m, m * m, a.begin());
    double det = 1.0;
    for (std::int64_t k = 0; k < m && det != 0.0; ++k) {
      std::int64_t piv = k;
      for (std::int64_t i = k + 1; i < m; ++i)
        if (std::fabs(a[static_cast<std::size_t>(i * m + k)]) > std::fabs(a[static_cast<std::size_t>(piv * m + k)])) piv = i;
      if (piv != k) {
        for (std::int64_t j = 0; j < m; ++j) std::swap(a[static_cast<std::size_t>(k * m + j)], a[static_cast<std::size_t>(piv * m + j)]);
        det = -det;
      }
      const double p = a[static_cast<std::size_t>(k * m + k)];
      det *= p;
      if (p == 0.0) break;
      for (std::int64_t i = k + 1; i < m; ++i) {
        const double f = a[static_cast<std::size_t>(i * m + k)] / p;
        if (f == 0.0) continue;
        for (std::int64_t j = k + 1; j < m; ++j) a[static_cast<std::size_t>(i * m + j)] -= f * a[static_cast<std::size_t>(k * m + j)];
      }
    }
    yd.data<double>()[b] = det;
  }
  return from_f64(c.h, yd, x.dtype(), c.out[0]);
}

// SwiGLU (opset 28): Y = A * sigmoid(alpha * A) * B, for A and B of the same dims and dtype
// (no broadcasting).
Status swiglu_kernel(KernelCall& c) {
  const Tensor &a = *c.input(0), *bp = c.input(1);
  if (!bp) return invalid_argument("SwiGLU needs the value input B");
  const Tensor& b = *bp;
  if (a.shape() != b.shape()) return invalid_argument("SwiGLU's A " + a.shape().to_string() + " and B " + b.shape().to_string() + " must have the same dims (no broadcasting)");
  if (a.dtype() != b.dtype()) return invalid_argument("SwiGLU's A is " + type_name(a.dtype()) + " but B is " + type_name(b.dtype()));
  if (!is_floating(a.dtype())) return invalid_argument("SwiGLU of " + type_name(a.dtype()) + " (it takes f16, bf16, f32 or f64)");
  const double alpha = c.attr_float("alpha", 1.0f);
  TESSERA_ASSIGN_OR_RETURN(Tensor ad, as_f64(c.h, a));
  TESSERA_ASSIGN_OR_RETURN(Tensor bd, as_f64(c.h, b));
  double* p = ad.data<double>();
  const double* q = bd.data<double>();
  for (std::int64_t i = 0, n = ad.numel(); i < n; ++i) p[i] = p[i] / (1.0 + std::exp(-alpha * p[i])) * q[i];
  return from_f64(c.h, ad, a.dtype(), c.out[0]);
}

// TensorScatter (opset 24): present = past_cache with `update` written along `axis` (the
// sequence axis, default -2) at write_indices[b] (0 when left out) for every row of batch b,
// the first dim. Linear mode needs each write to fit; circular mode wraps it modulo the
// cache's length. Any dtype: the elements are copied as bytes.
Status tensor_scatter_kernel(KernelCall& c) {
  const Tensor &past = *c.input(0), *up = c.input(1);
  if (!up) return invalid_argument("TensorScatter needs the update input");
  const Tensor& update = *up;
  const int r = past.rank();
  if (r < 2) return invalid_argument("TensorScatter's past_cache must be [batch, ..., sequence, ...], not " + past.shape().to_string());
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", -2), r, "axis"));
  if (axis == 0) return invalid_argument("TensorScatter's axis cannot be the batch axis 0");
  const std::string mode = c.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular") return invalid_argument("mode '" + mode + "' (linear or circular)");
  if (update.dtype() != past.dtype()) return invalid_argument("the update is " + type_name(update.dtype()) + " but past_cache is " + type_name(past.dtype()));
  bool fits = update.rank() == r;
  for (int i = 0; fits && i < r; ++i) fits = i == axis ? update.shape()[i] <= past.shape()[i] : update.shape()[i] == past.shape()[i];
  if (!fits)
    return invalid_argument("the update " + update.shape().to_string() + " must match past_cache " + past.shape().to_string() + " except along axis " + std::to_string(axis) + ", where it can be no longer");
  const std::int64_t batch = past.shape()[0], max_len = past.shape()[axis], len = update.shape()[axis];
  std::vector<std::int64_t> at(static_cast<std::size_t>(batch), 0);
  if (const Tensor* wi = c.input(2)) {
    if (wi->rank() != 1 || wi->shape()[0] != batch) return invalid_argument("write_indices must be [" + std::to_string(batch) + "] (one per batch), not " + wi->shape().to_string());
    TESSERA_ASSIGN_OR_RETURN(at, int_values(*wi, "write_indices"));
  }
  const bool circular = mode == "circular";
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t w = at[static_cast<std::size_t>(b)];
    if (w < 0) return invalid_argument("write_indices[" + std::to_string(b) + "] = " + std::to_string(w) + " is negative");
    if (!circular && w + len > max_len)
      return invalid_argument("write_indices[" + std::to_string(b) + "] = " + std::to_string(w) + " with " + std::to_string(len) + " updates runs past the cache's " + std::to_string(max_len) + " (linear mode)");
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, past.shape().dims(), past.dtype()));
  TESSERA_RETURN_IF_ERROR(c.out[0].copy_from(past));
  if (len == 0 || c.out[0].numel() == 0) return Status::ok();
  TESSERA_ASSIGN_OR_RETURN(const Tensor u, update.contiguous());
  std::int64_t rows = 1, inner = 1;  // rows per batch before the axis; elements after it
  for (int i = 1; i < axis; ++i) rows *= past.shape()[i];
  for (int i = axis + 1; i < r; ++i) inner *= past.shape()[i];
  const auto es = static_cast<std::int64_t>(past.element_size());
  auto* dst = static_cast<char*>(c.out[0].data());
  const auto* src = static_cast<const char*>(u.data());
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t row = 0; row < rows; ++row) {
      const std::int64_t outer = b * rows + row;
      for (std::int64_t s = 0; s < len; ++s) {
        std::int64_t pos = at[static_cast<std::size_t>(b)] + s;
        if (circular) pos %= max_len;
        std::memcpy(dst + ((outer * max_len + pos) * inner) * es, src + ((outer * len + s) * inner) * es, static_cast<std::size_t>(inner * es));
      }
    }
  return Status::ok();
}

// STFT (opset 17): signal [batch, length, 1 (real) or 2 (complex)] cut into frames of
// frame_length samples every frame_step, each multiplied by the window (all ones when left
// out) and transformed by a DFT of frame_length points; output [batch, frames, bins, 2] with
// frames = (length - frame_length) / frame_step + 1 and bins = frame_length / 2 + 1 when
// onesided (real signals only), else frame_length.
Status stft_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  if (x.rank() != 3 || (x.shape()[2] != 1 && x.shape()[2] != 2)) return invalid_argument("STFT's signal must be [batch, length, 1 or 2], not " + x.shape().to_string());
  if (!is_floating(x.dtype())) return invalid_argument("STFT of " + type_name(x.dtype()) + " (it takes f16, bf16, f32 or f64)");
  if (!c.input(1)) return invalid_argument("STFT needs frame_step");
  TESSERA_ASSIGN_OR_RETURN(const std::int64_t step, int_scalar(*c.input(1), "frame_step"));
  if (step < 1) return invalid_argument("frame_step must be positive, not " + std::to_string(step));
  const Tensor* window = c.input(2);
  if (window && window->rank() != 1) return invalid_argument("the window must be 1-D, not " + window->shape().to_string());
  const std::int64_t length = x.shape()[1];
  std::int64_t fl = window ? window->shape()[0] : length;
  if (const Tensor* f = c.input(3)) {
    TESSERA_ASSIGN_OR_RETURN(fl, int_scalar(*f, "frame_length"));
    if (window && window->shape()[0] != fl)
      return invalid_argument("the window has " + std::to_string(window->shape()[0]) + " values for frame_length " + std::to_string(fl));
  }
  if (fl < 1 || fl > length) return invalid_argument("frame_length " + std::to_string(fl) + " for a signal of length " + std::to_string(length) + " (it must be in [1, length])");
  const bool onesided = c.attr_int("onesided", 1) != 0, complex_in = x.shape()[2] == 2;
  if (onesided && complex_in) return invalid_argument("a one-sided STFT of a complex signal (set onesided = 0)");
  const std::int64_t batch = x.shape()[0], frames = (length - fl) / step + 1, bins = onesided ? fl / 2 + 1 : fl;
  TESSERA_ASSIGN_OR_RETURN(Tensor xd, as_f64(c.h, x));
  std::vector<double> win(static_cast<std::size_t>(fl), 1.0);
  if (window) {
    TESSERA_ASSIGN_OR_RETURN(Tensor wd, as_f64(c.h, *window));
    std::copy_n(wd.data<double>(), fl, win.begin());
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor({batch, frames, bins, 2}, DType::kF64));
  std::vector<std::complex<double>> tw(static_cast<std::size_t>(fl)), frame(static_cast<std::size_t>(fl));
  for (std::int64_t k = 0; k < fl; ++k) tw[static_cast<std::size_t>(k)] = std::polar(1.0, -kTwoPi * static_cast<double>(k) / static_cast<double>(fl));
  const std::int64_t ci = complex_in ? 2 : 1;
  const double* xp = xd.data<double>();
  double* yp = yd.data<double>();
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t f = 0; f < frames; ++f) {
      for (std::int64_t m = 0; m < fl; ++m) {
        const double* s = xp + (b * length + f * step + m) * ci;
        frame[static_cast<std::size_t>(m)] = std::complex<double>(s[0], complex_in ? s[1] : 0.0) * win[static_cast<std::size_t>(m)];
      }
      for (std::int64_t k = 0; k < bins; ++k) {
        std::complex<double> sum;
        for (std::int64_t m = 0; m < fl; ++m) sum += frame[static_cast<std::size_t>(m)] * tw[static_cast<std::size_t>((k * m) % fl)];
        double* y = yp + ((b * frames + f) * bins + k) * 2;
        y[0] = sum.real();
        y[1] = sum.imag();
      }
    }
  return from_f64(c.h, yd, x.dtype(), c.out[0]);
}

// MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangles peaking at 1, as
// ONNX's reference builds them: num_mel_bins + 2 points evenly spaced on the mel scale
// (mel(f) = 2595 log10(1 + f / 700)) from lower_edge_hertz by (mel(upper) - mel(lower)) /
// (num_mel_bins + 2), each mapped to spectrogram bin floor((dft_length + 1) f / sample_rate);
// filter i rises from point i to point i + 1 and falls to point i + 2. The edges' mel values
// are taken in f32 when the edges are narrower than f64, as the reference computes them in
// their type. A point outside the spectrogram's bins is an error.
Status mel_weight_matrix_kernel(KernelCall& c) {
  for (std::size_t k = 0; k < 5; ++k)
    if (!c.input(k)) return invalid_argument("MelWeightMatrix needs num_mel_bins, dft_length, sample_rate, lower_edge_hertz and upper_edge_hertz");
  TESSERA_ASSIGN_OR_RETURN(const std::int64_t mels, int_scalar(*c.input(0), "num_mel_bins"));
  TESSERA_ASSIGN_OR_RETURN(const std::int64_t dft, int_scalar(*c.input(1), "dft_length"));
  TESSERA_ASSIGN_OR_RETURN(const std::int64_t rate, int_scalar(*c.input(2), "sample_rate"));
  if (mels < 1 || dft < 1 || rate < 1)
    return invalid_argument("num_mel_bins (" + std::to_string(mels) + "), dft_length (" + std::to_string(dft) + ") and sample_rate (" + std::to_string(rate) + ") must be positive");
  if (mels > (std::int64_t{1} << 24) || dft > (std::int64_t{1} << 30))
    return invalid_argument("num_mel_bins " + std::to_string(mels) + " or dft_length " + std::to_string(dft) + " is beyond this kernel's limits (2^24, 2^30)");
  const Tensor &lo_t = *c.input(3), &hi_t = *c.input(4);
  if (!is_floating(lo_t.dtype()) || !is_floating(hi_t.dtype())) return invalid_argument("lower_edge_hertz and upper_edge_hertz must be float scalars");
  TESSERA_ASSIGN_OR_RETURN(const double lower, scalar_value(c.h, lo_t, "lower_edge_hertz"));
  TESSERA_ASSIGN_OR_RETURN(const double upper, scalar_value(c.h, hi_t, "upper_edge_hertz"));
  if (!std::isfinite(lower) || !std::isfinite(upper)) return invalid_argument("the edge frequencies must be finite");
  const auto to = graph::to_dtype(static_cast<graph::ElemType>(c.attr_int("output_datatype", 1)));
  if (!to) return unsupported("a MelWeightMatrix of element type " + std::to_string(c.attr_int("output_datatype", 1)));
  const bool narrow = lo_t.dtype() != DType::kF64;
  auto mel = [narrow](double f) {
    if (!narrow) return 2595.0 * std::log1p(f / 700.0) / std::log(10.0);
    const float t = std::log1p(static_cast<float>(f) / 700.0f);
    return static_cast<double>(2595.0f * t) / std::log(10.0);
  };
  const std::int64_t spec = dft / 2 + 1;
  const double lo_mel = mel(lower), step = (mel(upper) - lo_mel) / static_cast<double>(mels + 2);
  std::vector<std::int64_t> bin(static_cast<std::size_t>(mels + 2));
  for (std::int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700.0 * std::expm1((static_cast<double>(i) * step + lo_mel) / 2595.0 * std::log(10.0));
    const double b = std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate));
    if (!(b >= 0 && b < static_cast<double>(spec)))
      return invalid_argument("mel point " + std::to_string(i) + " (" + std::to_string(hz) + " Hz) falls outside the " + std::to_string(spec) +
                              " bins of a one-sided spectrum of dft_length " + std::to_string(dft) + " at sample_rate " + std::to_string(rate));
    bin[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(b);
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor({spec, mels}, DType::kF64));
  double* y = yd.data<double>();
  std::fill_n(y, spec * mels, 0.0);
  for (std::int64_t i = 0; i < mels; ++i) {
    const std::int64_t left = bin[static_cast<std::size_t>(i)], centre = bin[static_cast<std::size_t>(i + 1)], right = bin[static_cast<std::size_t>(i + 2)];
    if (centre == left) {
      y[centre * mels + i] = 1.0;
    } else {
      for (std::int64_t j = left; j <= centre; ++j) y[j * mels + i] = static_cast<double>(j - left) / static_cast<double>(centre - left);
    }
    if (right > centre)
      for (std::int64_t j = centre; j < right; ++j) y[j * mels + i] = static_cast<double>(right - j) / static_cast<double>(right - centre);
  }
  return from_f64(c.h, yd, *to, c.out[0]);
}

}  // namespace tessera::exec::detail
