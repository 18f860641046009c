// The executor's shared helpers (kernels.hpp): KernelCall's attribute and output accessors,
// tensor descriptors and conversions (to f32, f64, i64, the widened integer types), constants
// to and from tensors (the sub-byte types packed and unpacked), axis arithmetic.
#include <cstring>
#include <string>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"

namespace tessera::exec::detail {

// ---- helpers -----------------------------------------------------------------------------
const graph::Attribute* KernelCall::attr(const char* name) const {
  const auto it = node.attrs.find(name);
  return it == node.attrs.end() ? nullptr : &it->second;
}
std::int64_t KernelCall::attr_int(const char* name, std::int64_t dflt) const {
  const graph::Attribute* a = attr(name);
  return a && a->kind == graph::Attribute::Kind::kInt ? a->i : dflt;
}
float KernelCall::attr_float(const char* name, float dflt) const {
  const graph::Attribute* a = attr(name);
  return a && a->kind == graph::Attribute::Kind::kFloat ? a->f : dflt;
}
std::string KernelCall::attr_string(const char* name, const std::string& dflt) const {
  const graph::Attribute* a = attr(name);
  return a && a->kind == graph::Attribute::Kind::kString ? a->s : dflt;
}
std::optional<std::vector<std::int64_t>> KernelCall::attr_ints(const char* name) const {
  const graph::Attribute* a = attr(name);
  if (!a || a->kind != graph::Attribute::Kind::kInts) return std::nullopt;
  return a->ints;
}

Result<Tensor> KernelCall::output(std::size_t k, const std::vector<std::int64_t>& dims, DType dtype) {
  if (k < given.size() && given[k].defined() && !record && given[k].dtype() == dtype && given[k].shape().dims() == dims) return given[k];
  TESSERA_ASSIGN_OR_RETURN(Tensor t, new_tensor(dims, dtype));
  if (record && k < out.size()) {
    if (given.size() < out.size()) given.resize(out.size());
    given[k] = t;
  }
  return t;
}

Result<Tensor> KernelCall::output_for(const Tensor& y, const std::vector<std::int64_t>& dims, DType dtype) {
  for (std::size_t k = 0; k < out.size(); ++k)
    if (&out[k] == &y) return output(k, dims, dtype);
  return new_tensor(dims, dtype);
}

dnn::TensorDesc desc(const Tensor& t) { return dnn::TensorDesc{t.dtype(), t.shape().dims(), t.strides()}; }

Result<Tensor> new_tensor(const std::vector<std::int64_t>& dims, DType dtype) {
  TESSERA_ASSIGN_OR_RETURN(Shape s, Shape::make(dims));
  return Tensor::empty(s, dtype);
}

Result<Tensor> reshaped(dnn::Handle& h, const Tensor& t, const std::vector<std::int64_t>& dims) {
  Result<dnn::TensorDesc> v = dnn::reshape_view(desc(t), dims, true);
  if (v.is_ok()) return Tensor::view_of(t.buffer(), t.offset_bytes(), t.dtype(), Shape(v.value().dims), v.value().strides);
  TESSERA_ASSIGN_OR_RETURN(Tensor packed, new_tensor(t.shape().dims(), t.dtype()));
  TESSERA_RETURN_IF_ERROR(dnn::cast(h, desc(t), t.data(), desc(packed), packed.data()));
  return reshaped(h, packed, dims);
}

Result<std::vector<std::int64_t>> int_values(const Tensor& t, const std::string& what) {
  if (t.rank() > 1) return invalid_argument(what + " must be a scalar or 1-D");
  std::vector<std::int64_t> v;
  if (t.dtype() == DType::kI64) {
    for (std::int64_t x : t.to_vector<std::int64_t>()) v.push_back(x);
  } else if (t.dtype() == DType::kI32) {
    for (std::int32_t x : t.to_vector<std::int32_t>()) v.push_back(x);
  } else {
    return invalid_argument(what + " must be i32 or i64, not " + std::string(dtype_name(t.dtype())));
  }
  return v;
}

Result<graph::Constant> tensor_constant(dnn::Handle& h, const Tensor& t) {
  static constexpr std::pair<DType, graph::ElemType> kElems[] = {
      {DType::kBool, graph::ElemType::kBool}, {DType::kI8, graph::ElemType::kI8},     {DType::kU8, graph::ElemType::kU8},
      {DType::kI32, graph::ElemType::kI32},   {DType::kI64, graph::ElemType::kI64},   {DType::kF16, graph::ElemType::kF16},
      {DType::kBF16, graph::ElemType::kBF16}, {DType::kF32, graph::ElemType::kF32},   {DType::kF64, graph::ElemType::kF64},
      {DType::kC64, graph::ElemType::kC64},   {DType::kC128, graph::ElemType::kC128}, {DType::kI16, graph::ElemType::kI16},
      {DType::kU16, graph::ElemType::kU16},   {DType::kU32, graph::ElemType::kU32},   {DType::kU64, graph::ElemType::kU64},
      {DType::kF8E4M3FN, graph::ElemType::kF8E4M3FN}, {DType::kF8E4M3FNUZ, graph::ElemType::kF8E4M3FNUZ},
      {DType::kF8E5M2, graph::ElemType::kF8E5M2},     {DType::kF8E5M2FNUZ, graph::ElemType::kF8E5M2FNUZ},
      {DType::kI4, graph::ElemType::kI4},             {DType::kU4, graph::ElemType::kU4},
      {DType::kI2, graph::ElemType::kI2},             {DType::kU2, graph::ElemType::kU2},
      {DType::kF4E2M1, graph::ElemType::kF4E2M1},     {DType::kF8E8M0, graph::ElemType::kF8E8M0}};
  graph::Constant c;
  for (const auto& [d, e] : kElems)
    if (d == t.dtype()) c.elem = e;
  c.dims = t.shape().dims();
  TESSERA_ASSIGN_OR_RETURN(Tensor packed, like(t, t.dtype()));
  if (t.numel() > 0) {
    TESSERA_RETURN_IF_ERROR(dnn::cast(h, desc(t), t.data(), desc(packed), packed.data()));
  }
  const auto* p = static_cast<const std::byte*>(packed.data());
  if (const int bits = graph::elem_bits(c.elem); bits < 8) {
    // Sub-byte types: the low `bits` of each byte, packed from the least significant bits up.
    const auto n = static_cast<std::size_t>(t.numel()), b = static_cast<std::size_t>(bits);
    c.bytes.assign((n * b + 7) / 8, std::byte{0});
    for (std::size_t i = 0; i < n; ++i)
      c.bytes[i * b / 8] |= static_cast<std::byte>((static_cast<unsigned>(p[i]) & ((1u << b) - 1)) << (i * b % 8));
    return c;
  }
  c.bytes.assign(p, p + packed.nbytes());
  return c;
}

Result<Tensor> constant_tensor(const graph::Constant& c, const std::string& what) {
  const std::optional<DType> t = graph::to_dtype(c.elem);
  if (!t) return unsupported(what + ": element type " + std::string(graph::elem_type_name(c.elem)) + " is not supported");
  TESSERA_ASSIGN_OR_RETURN(Tensor x, new_tensor(c.dims, *t));
  if (const int bits = graph::elem_bits(c.elem); bits < 8) {
    // Sub-byte types: one element per byte, sign-extended for i4 and i2.
    const auto n = static_cast<std::size_t>(x.numel()), b = static_cast<std::size_t>(bits);
    if (c.bytes.size() != (n * b + 7) / 8) return invalid_argument(what + ": data size does not match its dims");
    const bool sign = *t == DType::kI4 || *t == DType::kI2;
    auto* y = static_cast<std::uint8_t*>(x.data());
    for (std::size_t i = 0; i < n; ++i) {
      unsigned v = (static_cast<unsigned>(c.bytes[i * b / 8]) >> (i * b % 8)) & ((1u << b) - 1);
      if (sign && (v >> (b - 1)) != 0) v |= ~((1u << b) - 1);  // sign-extend into the byte
      y[i] = static_cast<std::uint8_t>(v);
    }
    return x;
  }
  if (c.bytes.size() != x.nbytes()) return invalid_argument(what + ": data size does not match its dims");
  if (!c.bytes.empty()) std::memcpy(x.data(), c.bytes.data(), c.bytes.size());
  return x;
}

Result<Tensor> like(const Tensor& x, DType dtype) { return new_tensor(x.shape().dims(), dtype); }

DType widened(DType t) {
  switch (t) {
    case DType::kI16:
    case DType::kU16:
    case DType::kI4:
    case DType::kU4:
    case DType::kI2:
    case DType::kU2: return DType::kI32;
    case DType::kU32:
    case DType::kU64: return DType::kI64;
    default: return t;
  }
}

Result<Tensor> widen(dnn::Handle& h, const Tensor& x, bool ordered, const std::string& what) {
  const DType to = widened(x.dtype());
  if (to == x.dtype()) return x;
  TESSERA_ASSIGN_OR_RETURN(Tensor w, like(x, to));
  TESSERA_RETURN_IF_ERROR(dnn::cast(h, desc(x), x.data(), desc(w), w.data()));
  if (ordered && x.dtype() == DType::kU64) {
    const std::int64_t* p = w.data<std::int64_t>();
    for (std::int64_t i = 0; i < w.numel(); ++i)
      if (p[i] < 0) return unsupported(what + ": u64 values from 2^63 on are not supported here (they are computed as i64)");
  }
  return w;
}

AxisSplit split_at(const Tensor& x, int axis) {
  AxisSplit s;
  for (int d = 0; d < x.rank(); ++d) (d < axis ? s.outer : d == axis ? s.n : s.inner) *= x.shape()[d];
  return s;
}

void unravel(std::int64_t flat, std::span<const std::int64_t> dims, std::vector<std::int64_t>& idx) {
  idx.resize(dims.size());
  for (std::size_t i = dims.size(); i-- > 0;) {
    idx[i] = flat % dims[i];
    flat /= dims[i];
  }
}

Result<int> norm_axis(std::int64_t a, int rank, const std::string& what) {
  if (a < -rank || a >= rank) return invalid_argument(what + " " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(a < 0 ? a + rank : a);
}

Result<Tensor> as_f32(dnn::Handle& h, const Tensor& t) {
  if (t.dtype() == DType::kF32 && t.is_contiguous()) return t;
  TESSERA_ASSIGN_OR_RETURN(Tensor f, new_tensor(t.shape().dims(), DType::kF32));
  TESSERA_RETURN_IF_ERROR(dnn::cast(h, desc(t), t.data(), desc(f), f.data()));
  return f;
}

Status batch_norm_training(dnn::Handle& h, const dnn::TensorDesc& xd, const void* x, const float* scale, const float* bias, double eps,
                           const dnn::TensorDesc& yd, void* y, std::vector<float>& mean, std::vector<float>& invstd) {
  const std::size_t channels = static_cast<std::size_t>(xd.dims[1]);
  mean.assign(channels, 0.0f);
  invstd.assign(channels, 0.0f);
  return dnn::batch_norm_forward_training(h, dnn::BatchNormMode::kSpatial, xd, x, scale, bias, eps, 0.0, nullptr, nullptr, mean.data(),
                                          invstd.data(), yd, y);
}

Result<Tensor> as_f64(dnn::Handle& h, const Tensor& x) {
  TESSERA_ASSIGN_OR_RETURN(Tensor d, like(x, DType::kF64));
  TESSERA_RETURN_IF_ERROR(dnn::cast(h, desc(x), x.data(), desc(d), d.data()));
  return d;
}

Status from_f64(dnn::Handle& h, const Tensor& d, DType dtype, Tensor& out) {
  TESSERA_ASSIGN_OR_RETURN(out, like(d, dtype));
  return dnn::cast(h, desc(d), d.data(), desc(out), out.data());
}

Result<double> scalar_value(dnn::Handle& h, const Tensor& t, const std::string& what) {
  if (t.numel() != 1) return invalid_argument(what + " must hold one value");
  TESSERA_ASSIGN_OR_RETURN(Tensor d, new_tensor({}, DType::kF64));
  TESSERA_RETURN_IF_ERROR(dnn::cast(h, dnn::TensorDesc{t.dtype(), {}, {}}, t.data(), desc(d), d.data()));
  return *d.data<double>();
}

Result<Tensor> as_i64(dnn::Handle& h, const Tensor& t) {
  TESSERA_ASSIGN_OR_RETURN(Tensor v, like(t, DType::kI64));
  TESSERA_RETURN_IF_ERROR(dnn::cast(h, desc(t), t.data(), desc(v), v.data()));
  return v;
}

std::string dims_string(const std::vector<std::int64_t>& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace tessera::exec::detail
