// The executor's less common ops: Einsum (any equation, ellipses included, summed in f64),
// CumProd, the bitwise ops and BitShift on the integer dtypes (a shift by a negative count or
// by the width or more gives 0, or -1 for a negative value shifted right), ReverseSequence,
// BitCast, the window generators (Hann, Hamming, Blackman), CenterCropPad, DFT.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <map>
#include <type_traits>
#include <cstring>
#include <string>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/dnn/tensor_ops.hpp"

namespace tessera::exec::detail {
namespace {

using Dims = std::vector<std::int64_t>;

// a and b broadcast to their common dims, packed.
Status broadcast_pair(KernelCall& c, const Tensor& a, const Tensor& b, Tensor& ae, Tensor& be) {
  TESSERA_ASSIGN_OR_RETURN(Dims dims, dnn::broadcast_dims(a.shape().dims(), b.shape().dims()));
  TESSERA_ASSIGN_OR_RETURN(ae, new_tensor(dims, a.dtype()));
  TESSERA_ASSIGN_OR_RETURN(be, new_tensor(dims, b.dtype()));
  TESSERA_RETURN_IF_ERROR(dnn::expand(c.h, desc(a), a.data(), desc(ae), ae.data()));
  return dnn::expand(c.h, desc(b), b.data(), desc(be), be.data());
}

enum class BitOp { kNot, kAnd, kOr, kXor, kShiftLeft, kShiftRight };

template <typename T>
bool negative(T v) {
  if constexpr (std::is_signed_v<T>) return v < 0;
  else return false;
}

template <typename T>
void bitwise_loop(BitOp op, const Tensor& a, const Tensor* b, Tensor& y) {
  const T* x = a.data<T>();
  const T* z = b ? b->data<T>() : nullptr;
  T* o = y.data<T>();
  const std::int64_t n = y.numel();
  constexpr auto width = static_cast<std::uint64_t>(sizeof(T) * 8);
  switch (op) {
    case BitOp::kNot: for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(~x[i]); break;
    case BitOp::kAnd: for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(x[i] & z[i]); break;
    case BitOp::kOr: for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(x[i] | z[i]); break;
    case BitOp::kXor: for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(x[i] ^ z[i]); break;
    case BitOp::kShiftLeft:  // wraps, signed or not; out of range gives 0
      for (std::int64_t i = 0; i < n; ++i)
        o[i] = negative(z[i]) || static_cast<std::uint64_t>(z[i]) >= width ? T(0) : static_cast<T>(static_cast<std::make_unsigned_t<T>>(x[i]) << z[i]);
      break;
    case BitOp::kShiftRight:  // arithmetic for signed types; out of range gives 0 (-1 for a negative value)
      for (std::int64_t i = 0; i < n; ++i)
        o[i] = negative(z[i]) || static_cast<std::uint64_t>(z[i]) >= width ? (negative(x[i]) ? T(-1) : T(0)) : static_cast<T>(x[i] >> z[i]);
      break;
  }
}

}  // namespace

Status bitwise_kernel(KernelCall& c) {
  const std::string& op = c.node.op_type;
  const Tensor& a = *c.input(0);
  Tensor ae = a, be;
  if (op != "BitwiseNot") {
    if (c.input(1)->dtype() != a.dtype()) return invalid_argument(op + " of " + std::string(dtype_name(a.dtype())) + " and " + std::string(dtype_name(c.input(1)->dtype())));
    TESSERA_RETURN_IF_ERROR(broadcast_pair(c, a, *c.input(1), ae, be));
  } else {
    TESSERA_ASSIGN_OR_RETURN(ae, like(a, a.dtype()));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(a), a.data(), desc(ae), ae.data()));
  }
  const Tensor* b = op == "BitwiseNot" ? nullptr : &be;
  BitOp bop = BitOp::kNot;
  if (op == "BitwiseAnd") bop = BitOp::kAnd;
  else if (op == "BitwiseOr") bop = BitOp::kOr;
  else if (op == "BitwiseXor") bop = BitOp::kXor;
  else if (op == "BitShift") {
    const std::string dir = c.attr_string("direction", "");
    if (dir != "LEFT" && dir != "RIGHT") return invalid_argument("direction must be LEFT or RIGHT");
    bop = dir == "LEFT" ? BitOp::kShiftLeft : BitOp::kShiftRight;
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, ae.shape().dims(), a.dtype()));
  switch (a.dtype()) {
    case DType::kU8: bitwise_loop<std::uint8_t>(bop, ae, b, c.out[0]); break;
    case DType::kI8: bitwise_loop<std::int8_t>(bop, ae, b, c.out[0]); break;
    case DType::kI32: bitwise_loop<std::int32_t>(bop, ae, b, c.out[0]); break;
    case DType::kI64: bitwise_loop<std::int64_t>(bop, ae, b, c.out[0]); break;
    case DType::kI16: bitwise_loop<std::int16_t>(bop, ae, b, c.out[0]); break;
    case DType::kU16: bitwise_loop<std::uint16_t>(bop, ae, b, c.out[0]); break;
    case DType::kU32: bitwise_loop<std::uint32_t>(bop, ae, b, c.out[0]); break;
    case DType::kU64: bitwise_loop<std::uint64_t>(bop, ae, b, c.out[0]); break;
    default: return unsupported(op + " of " + std::string(dtype_name(a.dtype())));
  }
  return Status::ok();
}

Status cumprod_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(const double a, scalar_value(c.h, *c.input(1), "axis"));
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(static_cast<std::int64_t>(a), x.rank(), "axis"));
  const bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
  TESSERA_ASSIGN_OR_RETURN(Tensor y, as_f64(c.h, x));
  const auto [outer, n, inner] = split_at(x, axis);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      double* p = y.data<double>() + o * n * inner + i;
      double acc = 1;
      for (std::int64_t s = 0; s < n; ++s) {
        double& v = p[(reverse ? n - 1 - s : s) * inner];
        const double cur = v;
        v = exclusive ? acc : acc * cur;
        acc *= cur;
      }
    }
  return from_f64(c.h, y, x.dtype(), c.out[0]);
}

// Einsum: each term's labels (letters; "..." for the broadcast dims), the output's given after
// "->" or, without it, the ellipsis dims then the letters used once, in alphabetical order.
Status einsum_kernel(KernelCall& c) {
  std::string eq;
  for (char ch : c.attr_string("equation", ""))
    if (ch != ' ') eq += ch;
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t b = 0;;) {
    const auto comma = lhs.find(',', b);
    terms.push_back(lhs.substr(b, comma == std::string::npos ? std::string::npos : comma - b));
    if (comma == std::string::npos) break;
    b = comma + 1;
  }
  if (terms.size() != c.in.size()) return invalid_argument("the equation '" + eq + "' has " + std::to_string(terms.size()) + " terms for " + std::to_string(c.in.size()) + " inputs");
  // Labels: letters as themselves; ellipsis dims as 256 + position from the right.
  int ell = 0;
  std::vector<std::vector<int>> labels(terms.size());
  auto parse = [&](const std::string& t, int rank, std::vector<int>& out) -> Status {
    const auto dots = t.find("...");
    const int letters = static_cast<int>(t.size()) - (dots == std::string::npos ? 0 : 3);
    const int e = dots == std::string::npos ? 0 : rank - letters;
    if (e < 0 || (dots == std::string::npos && letters != rank)) return invalid_argument("the term '" + t + "' does not match rank " + std::to_string(rank));
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (dots != std::string::npos && i == dots) {
        for (int k = e - 1; k >= 0; --k) out.push_back(256 + k);
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(t[i]))) {
        out.push_back(t[i]);
      } else {
        return invalid_argument("the equation '" + eq + "' has '" + std::string(1, t[i]) + "'");
      }
    }
    ell = std::max(ell, e);
    return Status::ok();
  };
  for (std::size_t k = 0; k < terms.size(); ++k) TESSERA_RETURN_IF_ERROR(parse(terms[k], c.input(k)->rank(), labels[k]));
  std::map<int, std::int64_t> size;
  for (std::size_t k = 0; k < terms.size(); ++k)
    for (std::size_t i = 0; i < labels[k].size(); ++i) {
      const std::int64_t d = c.input(k)->shape()[static_cast<int>(i)];
      auto [it, fresh] = size.emplace(labels[k][i], d);
      if (!fresh && it->second != d) {
        if (it->second == 1 && labels[k][i] >= 256) it->second = d;
        else if (!(d == 1 && labels[k][i] >= 256)) return invalid_argument("label sizes " + std::to_string(it->second) + " and " + std::to_string(d) + " disagree");
      }
    }
  std::vector<int> out;
  if (arrow != std::string::npos) {
    TESSERA_RETURN_IF_ERROR(parse(eq.substr(arrow + 2), static_cast<int>(eq.size() - arrow - 2) - (eq.find("...", arrow) == std::string::npos ? 0 : 3) + ell, out));
  } else {
    for (int k = ell - 1; k >= 0; --k) out.push_back(256 + k);
    std::map<int, int> count;
    for (const auto& l : labels)
      for (int v : l) ++count[v];
    for (const auto& [v, n] : count)
      if (v < 256 && n == 1) out.push_back(v);
  }
  std::vector<int> all = out;
  for (const auto& [v, n] : size)
    if (std::find(all.begin(), all.end(), v) == all.end()) all.push_back(v);
  for (int v : out)
    if (!size.count(v)) return invalid_argument("the output label '" + std::string(1, static_cast<char>(v)) + "' is in no input");
  Dims odims;
  for (int v : out) odims.push_back(size[v]);
  std::vector<Tensor> in64;
  std::vector<std::vector<std::int64_t>> stride(terms.size());  // per input, per position in `all`
  for (std::size_t k = 0; k < terms.size(); ++k) {
    TESSERA_ASSIGN_OR_RETURN(Tensor t, as_f64(c.h, *c.input(k)));
    stride[k].assign(all.size(), 0);
    std::int64_t s = 1;
    for (std::size_t i = labels[k].size(); i-- > 0;) {
      const auto pos = static_cast<std::size_t>(std::find(all.begin(), all.end(), labels[k][i]) - all.begin());
      if (t.shape()[static_cast<int>(i)] != 1) stride[k][pos] += s;  // a repeated label walks the diagonal
      s *= t.shape()[static_cast<int>(i)];
    }
    in64.push_back(std::move(t));
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor y, new_tensor(odims, DType::kF64));
  std::vector<std::int64_t> idx(all.size(), 0);
  std::int64_t total = 1;
  for (int v : all) total *= size[v];
  std::int64_t inner = 1;
  for (std::size_t i = out.size(); i < all.size(); ++i) inner *= size[all[i]];
  double* yp = y.data<double>();
  for (std::int64_t i = 0; i < y.numel(); ++i) yp[i] = 0;
  for (std::int64_t n = 0; n < total; ++n) {
    double prod = 1;
    for (std::size_t k = 0; k < in64.size(); ++k) {
      std::int64_t off = 0;
      for (std::size_t j = 0; j < all.size(); ++j) off += idx[j] * stride[k][j];
      prod *= in64[k].data<double>()[off];
    }
    yp[n / inner] += prod;
    for (std::size_t j = all.size(); j-- > 0;) {
      if (++idx[j] < size[all[j]]) break;
      idx[j] = 0;
    }
  }
  return from_f64(c.h, y, c.input(0)->dtype(), c.out[0]);
}

Status reverse_sequence_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &lens_t = *c.input(1);
  const std::int64_t batch_axis = c.attr_int("batch_axis", 1), time_axis = c.attr_int("time_axis", 0);
  if (x.rank() < 2 || (batch_axis != 0 && batch_axis != 1) || time_axis + batch_axis != 1) return invalid_argument("batch_axis and time_axis must be 0 and 1");
  TESSERA_ASSIGN_OR_RETURN(Dims lens, int_values(lens_t, "sequence_lens"));
  const std::int64_t batch = x.shape()[static_cast<int>(batch_axis)], steps = x.shape()[static_cast<int>(time_axis)];
  if (static_cast<std::int64_t>(lens.size()) != batch) return invalid_argument("sequence_lens must hold one length per batch");
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(x), x.data(), desc(c.out[0]), c.out[0].data()));
  const std::int64_t inner = batch * steps == 0 ? 0 : x.numel() / (batch * steps);
  const std::size_t row = static_cast<std::size_t>(inner) * dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.is_contiguous() ? x.data() : c.out[0].data());
  Tensor copy;
  if (!x.is_contiguous()) {
    TESSERA_ASSIGN_OR_RETURN(copy, c.out[0].clone());
    src = static_cast<const std::byte*>(copy.data());
  }
  auto* dst = static_cast<std::byte*>(c.out[0].data());
  for (std::int64_t b = 0; b < batch; ++b) {
    if (lens[static_cast<std::size_t>(b)] < 0 || lens[static_cast<std::size_t>(b)] > steps) return invalid_argument("sequence length " + std::to_string(lens[static_cast<std::size_t>(b)]) + " outside [0, " + std::to_string(steps) + "]");
    for (std::int64_t t = 0; t < lens[static_cast<std::size_t>(b)]; ++t) {
      const std::int64_t from = lens[static_cast<std::size_t>(b)] - 1 - t;
      auto at = [&](std::int64_t step) { return static_cast<std::size_t>(time_axis == 0 ? step * batch + b : b * steps + step) * row; };
      std::memcpy(dst + at(t), src + at(from), row);
    }
  }
  return Status::ok();
}

// BitCast: the same bytes seen as another dtype of the same width (a view).
Status bitcast_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const auto to = graph::to_dtype(static_cast<graph::ElemType>(c.attr_int("to", 0)));
  if (!to) return unsupported("BitCast to element type " + std::to_string(c.attr_int("to", 0)));
  if (dtype_size(*to) != x.element_size())
    return invalid_argument("BitCast from " + std::string(dtype_name(x.dtype())) + " to " + std::string(dtype_name(*to)) + ": the widths differ");
  TESSERA_ASSIGN_OR_RETURN(c.out[0], Tensor::view_of(x.buffer(), x.offset_bytes(), *to, x.shape(), x.strides()));
  return Status::ok();
}

// HannWindow, HammingWindow, BlackmanWindow: the cosine sums a0 - a1 cos(2 pi n / N) + a2
// cos(4 pi n / N) for n in [0, size), N = size (periodic, the default) or size - 1
// (symmetric); computed in f64, of output_datatype (f32 by default).
Status window_kernel(KernelCall& c) {
  TESSERA_ASSIGN_OR_RETURN(const double sv, scalar_value(c.h, *c.input(0), "size"));
  const auto size = static_cast<std::int64_t>(sv);
  if (size < 0) return invalid_argument("size " + std::to_string(size));
  const auto to = graph::to_dtype(static_cast<graph::ElemType>(c.attr_int("output_datatype", 1)));
  if (!to) return unsupported("a window of element type " + std::to_string(c.attr_int("output_datatype", 1)));
  const std::string& op = c.node.op_type;
  const double a0 = op == "HannWindow" ? 0.5 : op == "HammingWindow" ? 25.0 / 46.0 : 0.42;
  const double a1 = op == "BlackmanWindow" ? 0.5 : 1.0 - a0, a2 = op == "BlackmanWindow" ? 0.08 : 0.0;
  const double big_n = static_cast<double>(c.attr_int("periodic", 1) ? size : size - 1);
  TESSERA_ASSIGN_OR_RETURN(Tensor y, new_tensor({size}, DType::kF64));
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  for (std::int64_t i = 0; i < size; ++i) {
    const double t = big_n > 0 ? kTwoPi * static_cast<double>(i) / big_n : 0.0;
    y.data<double>()[i] = a0 - a1 * std::cos(t) + a2 * std::cos(2 * t);
  }
  return from_f64(c.h, y, *to, c.out[0]);
}

// DFT (opsets 17 and 20): a reference-grade transform in f64 along one axis of a real ([..., 1])
// or complex ([..., 2]) signal, zero-padded or cut to dft_length: forward (onesided keeps
// frequencies 0..n/2), inverse (scaled by 1/n), or inverse of a one-sided spectrum to a real
// signal (the Hermitian rest implied; the imaginary parts of the DC and Nyquist terms unused).
Status dft_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const int r = x.rank();
  if (r < 2 || (x.shape()[r - 1] != 1 && x.shape()[r - 1] != 2)) return invalid_argument("DFT's input must end in a dim of 1 (real) or 2 (complex), not " + x.shape().to_string());
  std::int64_t axis = c.opset >= 20 ? -2 : c.attr_int("axis", 1);
  if (c.opset >= 20 && c.input(2)) {
    TESSERA_ASSIGN_OR_RETURN(const double a, scalar_value(c.h, *c.input(2), "axis"));
    axis = static_cast<std::int64_t>(a);
  }
  TESSERA_ASSIGN_OR_RETURN(const int ax, norm_axis(axis, r, "axis"));
  if (ax == r - 1) return invalid_argument("DFT's axis cannot be the last (real/imaginary) dim");
  const bool inverse = c.attr_int("inverse", 0) != 0, onesided = c.attr_int("onesided", 0) != 0;
  const bool complex_in = x.shape()[r - 1] == 2;
  if (onesided && !inverse && complex_in) return invalid_argument("a one-sided DFT of a complex input");
  const std::int64_t len = x.shape()[ax];
  std::int64_t n = inverse && onesided ? 2 * (len - 1) : len;
  if (const Tensor* dl = c.input(1)) {
    TESSERA_ASSIGN_OR_RETURN(const double v, scalar_value(c.h, *dl, "dft_length"));
    n = static_cast<std::int64_t>(v);
  }
  if (n < 1) return invalid_argument("dft_length " + std::to_string(n));
  const bool real_out = inverse && onesided;
  const std::int64_t out_len = !inverse && onesided ? n / 2 + 1 : n;
  const AxisSplit split = split_at(x, ax);
  const std::int64_t outer = split.outer, inner = split.inner / x.shape()[r - 1];  // the last dim is re/im
  TESSERA_ASSIGN_OR_RETURN(Tensor xd, as_f64(c.h, x));
  Dims ydims = x.shape().dims();
  ydims[static_cast<std::size_t>(ax)] = out_len;
  ydims.back() = real_out ? 1 : 2;
  TESSERA_ASSIGN_OR_RETURN(Tensor yd, new_tensor(ydims, DType::kF64));
  const double* xp = xd.data<double>();
  double* yp = yd.data<double>();
  const std::int64_t ci = complex_in ? 2 : 1, co = real_out ? 1 : 2;
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  const double sign = inverse ? 1.0 : -1.0;
  std::vector<std::complex<double>> sig(static_cast<std::size_t>(n)), tw(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) tw[static_cast<std::size_t>(k)] = std::polar(1.0, sign * kTwoPi * static_cast<double>(k) / static_cast<double>(n));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      std::fill(sig.begin(), sig.end(), std::complex<double>());
      const auto at = [&](std::int64_t m) { return ((o * len + m) * inner + i) * ci; };
      if (real_out) {  // the full spectrum from its first half: X[n - k] = conj(X[k])
        for (std::int64_t k = 0; k <= n / 2 && k < len; ++k) {
          std::complex<double> v(xp[at(k)], complex_in ? xp[at(k) + 1] : 0.0);
          if (k == 0 || 2 * k == n) v.imag(0.0);
          sig[static_cast<std::size_t>(k)] = v;
          if (k > 0) sig[static_cast<std::size_t>(n - k)] = std::conj(v);
        }
      } else {
        for (std::int64_t m = 0; m < std::min(len, n); ++m) sig[static_cast<std::size_t>(m)] = {xp[at(m)], complex_in ? xp[at(m) + 1] : 0.0};
      }
      for (std::int64_t k = 0; k < out_len; ++k) {
        std::complex<double> s;
        for (std::int64_t m = 0; m < n; ++m) s += sig[static_cast<std::size_t>(m)] * tw[static_cast<std::size_t>((k * m) % n)];
        if (inverse) s /= static_cast<double>(n);
        double* y = yp + ((o * out_len + k) * inner + i) * co;
        y[0] = s.real();
        if (!real_out) y[1] = s.imag();
      }
    }
  return from_f64(c.h, yd, x.dtype(), c.out[0]);
}

// CenterCropPad: each listed axis (all by default) cropped or zero-padded to its target size
// about the centre: the start of a crop, or the padding before, is half the difference rounded
// down.
Status center_crop_pad_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(const Dims shape, int_values(*c.input(1), "shape"));
  Dims axes = c.attr_ints("axes").value_or(Dims{});
  if (axes.empty())
    for (int i = 0; i < x.rank(); ++i) axes.push_back(i);
  if (axes.size() != shape.size()) return invalid_argument("shape has " + std::to_string(shape.size()) + " values for " + std::to_string(axes.size()) + " axes");
  Dims ydims = x.shape().dims(), shift(static_cast<std::size_t>(x.rank()), 0);  // shift: y index - x index
  for (std::size_t i = 0; i < axes.size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(const int a, norm_axis(axes[i], x.rank(), "axis"));
    if (shape[i] < 0) return invalid_argument("a target size of " + std::to_string(shape[i]));
    const std::int64_t in = x.shape()[a];
    ydims[static_cast<std::size_t>(a)] = shape[i];
    shift[static_cast<std::size_t>(a)] = in > shape[i] ? -((in - shape[i]) / 2) : (shape[i] - in) / 2;
  }
  TESSERA_ASSIGN_OR_RETURN(Tensor xp, like(x, x.dtype()));
  TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(x), x.data(), desc(xp), xp.data()));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, ydims, x.dtype()));
  const std::size_t es = x.element_size();
  auto* dst = static_cast<std::byte*>(c.out[0].data());
  const auto* src = static_cast<const std::byte*>(xp.data());
  const std::int64_t total = c.out[0].numel();
  Dims idx(ydims.size());
  for (std::int64_t yi = 0; yi < total; ++yi) {
    unravel(yi, ydims, idx);
    std::int64_t off = 0;
    bool inside = true;
    for (std::size_t i = 0; i < idx.size() && inside; ++i) {
      const std::int64_t at = idx[i] - shift[i];
      inside = at >= 0 && at < x.shape()[static_cast<int>(i)];
      off = off * x.shape()[static_cast<int>(i)] + at;
    }
    if (inside) std::memcpy(dst + yi * static_cast<std::int64_t>(es), src + off * static_cast<std::int64_t>(es), es);
    else std::memset(dst + yi * static_cast<std::int64_t>(es), 0, es);
  }
  return Status::ok();
}

}  // namespace tessera::exec::detail
