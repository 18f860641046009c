// Entry points of the elementwise tensor operations (binary, where, unary): argument checks,
// the replay line, then the first implementation of the ordered list that accepts the call.
// The fast implementations walk the broadcast loop nest (nest.hpp) and call one ISA's kernels
// on each row in blocks; operands that are strided along the row, or stored as f16/bf16, are
// staged through contiguous (f32) blocks first, except in binary operations on halves whose
// operands run contiguously: their kernels widen and narrow in one pass. Elementwise work has
// no reductions, so any split over threads gives the same bits.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../../common.hpp"
#include "../activation/kernels.hpp"
#include "../activation/dense.hpp"
#include "kernels.hpp"
#include "nest.hpp"
#include "ref.hpp"

namespace tessera::dnn {
namespace {

namespace ek = elt_kernels;
namespace ak = act_kernels;
using i64 = std::int64_t;

static_assert(ek::kBinaryOps == kNumBinaryOps && ek::kUnaryOps == kNumUnaryOps);

constexpr i64 kBlock = 1024;      // elements per kernel call (staged operands fit in L1)
// The kernel's calls when the output is streamed: each piece's non-temporal stores go
// out while the next piece's loads run (after a whole block the store burst stalled the
// loads: f32 x + row, 1 thread, 1.7x slower in a micro-benchmark).
constexpr i64 kStreamPiece = 512;  // bytes of y
constexpr i64 kSegment = 65536;   // elements of a row per work unit
constexpr i64 kGrain = 65536;     // elements per thread chunk, at least

// ---- the call ---------------------------------------------------------------------------------
enum class Kind { kBinary, kUnary, kWhere };
struct EltCall {
  Kind kind;
  int op;  // BinaryOp / UnaryOp
  const TensorDesc* in[3];
  const void* inp[3];
  int inputs;
  const TensorDesc& y;
  void* yp;
};


// One operand of a block: a pointer the kernel reads with step 0 or 1.
struct Source {
  const void* p;
  int step;
  int bytes;  // of the elements at p
};
// Element i of a tensor's storage as f32 (f16/bf16) into dst[0..n) with the given stride.
void gather_f32(const void* base, DType t, i64 off, i64 stride, i64 n, float* dst) {
  const auto* u = static_cast<const std::uint16_t*>(base) + off;
  if (stride == 1) {
    if (t == DType::kF16) convert_f16_to_f32(reinterpret_cast<const f16*>(u), dst, static_cast<std::size_t>(n));
    else convert_bf16_to_f32(reinterpret_cast<const bf16*>(u), dst, static_cast<std::size_t>(n));
    return;
  }
  for (i64 i = 0; i < n; ++i)
    dst[i] = t == DType::kF16 ? f16_bits_to_f32(u[i * stride]) : bf16_bits_to_f32(u[i * stride]);
}
void gather_bytes(const void* base, i64 bytes, i64 off, i64 stride, i64 n, void* dst) {
  const char* s = static_cast<const char*>(base) + off * bytes;
  char* d = static_cast<char*>(dst);
  for (i64 i = 0; i < n; ++i) std::memcpy(d + i * bytes, s + i * stride * bytes, static_cast<std::size_t>(bytes));
}
// `raw`: f16/bf16 elements are moved as bits (where), not converted.
Source source(const void* base, DType t, bool raw, i64 off, i64 stride, i64 n, void* tmp) {
  if (detail::is_half(t) && !raw) {
    gather_f32(base, t, off, stride, stride == 0 ? 1 : n, static_cast<float*>(tmp));
    return {tmp, stride == 0 ? 0 : 1, 4};
  }
  const auto bytes = static_cast<int>(dtype_size(t));
  if (stride == 0 || stride == 1) return {static_cast<const char*>(base) + off * bytes, stride == 0 ? 0 : 1, bytes};
  gather_bytes(base, bytes, off, stride, n, tmp);
  return {tmp, 1, bytes};
}
// The kernel's contiguous result (compute type `ct`) into y at off with the given stride.
void put(const void* src, DType ct, bool raw, void* base, DType t, i64 off, i64 stride, i64 n) {
  if (detail::is_half(t) && !raw) {
    const auto* f = static_cast<const float*>(src);
    auto* u = static_cast<std::uint16_t*>(base) + off;
    if (stride == 1) {
      if (t == DType::kF16) convert_f32_to_f16(f, reinterpret_cast<f16*>(u), static_cast<std::size_t>(n));
      else convert_f32_to_bf16(f, reinterpret_cast<bf16*>(u), static_cast<std::size_t>(n));
      return;
    }
    for (i64 i = 0; i < n; ++i)
      u[i * stride] = t == DType::kF16 ? f32_to_f16_bits(f[i]) : f32_to_bf16_bits(f[i]);
    return;
  }
  const i64 bytes = static_cast<i64>(dtype_size(ct));
  char* d = static_cast<char*>(base) + off * bytes;
  for (i64 i = 0; i < n; ++i)
    std::memcpy(d + i * stride * bytes, static_cast<const char*>(src) + i * bytes, static_cast<std::size_t>(bytes));
}

DType compute_type(DType t) { return detail::is_half(t) ? DType::kF32 : t; }
int type_index(DType t) {
  switch (compute_type(t)) {
    case DType::kBool: return ek::kBool;
    case DType::kI8: return ek::kI8;
    case DType::kU8: return ek::kU8;
    case DType::kI32: return ek::kI32;
    case DType::kI64: return ek::kI64;
    case DType::kF32: return ek::kF32;
    case DType::kF64: return ek::kF64;
    default: return -1;
  }
}

// Short rows where an input repeats one row along the next dim (x + b over [.., H, W] with b
// of dims [W], or [T, 1, 64] against [B, T, H, 64]) and every other operand continues row after
// row or is one value: g rows at a time become one row of g * L, that input read from g copies
// of its row (`repeated`: the walk builds them per thread, again where the row changes). A
// row of 56 was a pass of the walk (offsets, operands, a kernel call) for 56 elements:
// [64,64,56,56] + [56] ran at 0.5 of a copy. Elementwise, so the same bits.
constexpr i64 kShortRow = 256;
i64 coalesce_short_rows(detail::Nest& n, const EltCall& c, bool* repeated) {
  const int r = n.rank, ny = c.inputs;
  if (r < 2) return 1;
  const auto in = static_cast<std::size_t>(r - 1), nx = static_cast<std::size_t>(r - 2);
  const i64 L = n.dims[in], D = n.dims[nx];
  if (L > kShortRow || D < 2) return 1;
  bool any = false;
  for (int k = 0; k <= ny; ++k) {
    const auto& st = n.strides[static_cast<std::size_t>(k)];
    if (st[in] == 1 && st[nx] == L) continue;                              // rows continue each other
    if (k == ny || st[nx] != 0 || (st[in] != 0 && st[in] != 1)) return 1;
    any = any || st[in] == 1;                                             // (else one value for the g rows)
  }
  if (!any) return 1;
  i64 g = std::min(D, std::max<i64>(1, kBlock / L));
  while (D % g != 0) --g;
  if (g < 2) return 1;
  for (int k = 0; k <= ny; ++k) {
    auto& st = n.strides[static_cast<std::size_t>(k)];
    if (st[in] == 1 && st[nx] == L) st[nx] = g * L;
    else if (st[in] == 1) repeated[k] = true;
  }
  n.dims[nx] = D / g;
  n.dims[in] = g * L;
  return g;
}

template <const ek::Kernels* kK, const ak::Kernels* kA>
Status elt_run(Handle& h, const EltCall& c) {
  const i64 total = c.y.numel();
  if (total == 0) return Status::ok();
  const TensorDesc* ops[4] = {c.in[0], c.in[1], c.in[2], &c.y};
  const int ny = c.inputs;  // the output's operand index
  ops[ny] = &c.y;
  detail::Nest nest = detail::make_nest(c.y.dims, std::span<const TensorDesc* const>(ops, static_cast<std::size_t>(ny + 1)));
  bool repeated[3] = {false, false, false};
  const i64 group = coalesce_short_rows(nest, c, repeated);
  const DType in_t = c.kind == Kind::kWhere ? c.in[1]->dtype : c.in[0]->dtype;
  const DType out_ct = compute_type(c.y.dtype);
  const int ti = type_index(in_t);
  ek::BinaryFn bin = nullptr;
  ek::UnaryFn un = nullptr;
  ak::MathFn math = nullptr;
  ek::WhereFn wh = nullptr;
  if (c.kind == Kind::kWhere) {
    const std::size_t b = dtype_size(in_t);
    wh = kK->where[b == 1 ? 0 : b == 2 ? 1 : b == 4 ? 2 : 3];
  }

  const i64 L = nest.inner(), rows = nest.rows();
  const i64 segs = (L + kSegment - 1) / kSegment, seg_len = std::min(L, kSegment);
  const i64 units = rows * segs;
  const i64 grain = std::max<i64>(1, kGrain / seg_len);
  const i64 ys = nest.inner_stride(ny);
  // Contiguous outputs larger than the last-level cache are written with non-temporal stores
  // (no read for ownership, caches left alone): by the one-pass half kernels themselves, else
  // from the kernel's block (f16/bf16 results narrowed into a block of their own first).
  const bool stream = ys == 1 && detail::stream_output(total * static_cast<i64>(dtype_size(c.y.dtype)));

  // f16/bf16 operands in one pass, nothing staged (`fused`): binary operations along rows
  // whose operands are contiguous or broadcast, unary operations on contiguous rows (those of
  // the vector math through the activations' storage loops).
  const bool halves = detail::is_half(in_t) && c.kind != Kind::kWhere;
  const int hi = in_t == DType::kBF16 ? 1 : 0;
  auto unit_step = [&](int k) { return nest.inner_stride(k) == 0 || nest.inner_stride(k) == 1; };
  bool fused = false, self_streams = false;
  ak::MathStorageFn half_math = nullptr;
  if (c.kind == Kind::kBinary) {
    bin = kK->binary[c.op][ti];
    if (halves && unit_step(0) && unit_step(1) && kK->half_binary[c.op][hi] != nullptr) {
      const ek::BinaryFn st = stream ? kK->half_binary_stream[c.op][hi] : nullptr;
      bin = st != nullptr ? st : kK->half_binary[c.op][hi];
      fused = true;
      self_streams = st != nullptr;
    }
  }
  if (c.kind == Kind::kUnary) {
    const int vm = ek::vector_math(c.op);
    un = kK->unary[c.op][ti];
    if (ti == ek::kF32 && vm >= 0) math = kA->math[vm];
    if (halves && nest.inner_stride(0) == 1) {
      if (vm >= 0 && c.y.dtype == in_t) {
        half_math = kA->math_storage[vm][hi == 1 ? ak::bf16_column(*kA) : ak::kF16];
        fused = true;
        self_streams = stream;
      } else if (kK->half_unary[c.op][hi] != nullptr) {
        const ek::UnaryFn st = stream ? kK->half_unary_stream[c.op][hi] : nullptr;
        un = st != nullptr ? st : kK->half_unary[c.op][hi];
        fused = true;
        self_streams = st != nullptr;
      }
    }
  }
  // raw: operands and results are moved as they are stored (where, the one-pass half kernels),
  // not staged as f32.
  const bool raw = c.kind == Kind::kWhere || fused;
  const bool y_half = detail::is_half(c.y.dtype) && !raw;
  const bool y_direct = !y_half && ys == 1;
  // The kernel writes y itself (streamed where `stream`); the one-pass kernels stage nothing,
  // so there a whole segment is one call.
  const bool direct = y_direct && (!stream || self_streams);
  const i64 block = direct && fused ? kSegment : kBlock;
  const DType where_t = raw ? c.y.dtype : out_ct;
  detail::parallel_for(h, 0, units, grain, [&](i64 u0, i64 u1) {
    constexpr std::size_t kTmp = kBlock * 8;
    auto tmp = std::make_unique_for_overwrite<unsigned char[]>(5 * kTmp + 64);
    unsigned char* t[5];  // staged inputs, the kernel's output, narrowed halves
    for (int k = 0; k < 5; ++k) t[k] = tmp.get() + k * kTmp;
    std::vector<unsigned char> copies[3];  // the repeated inputs' rows, `group` times
    i64 copied[3] = {0, 0, 0};             // (the offsets they were copied from)
    detail::RowCursor cur(nest, u0 / segs);
    for (i64 u = u0; u < u1; ++u) {
      if (u != u0 && u % segs == 0) cur.next();
      const i64 j0 = (u % segs) * kSegment, j1 = std::min(L, j0 + kSegment);
      for (i64 j = j0; j < j1; j += block) {
        const i64 n = std::min(block, j1 - j);
        Source s[3];
        for (int k = 0; k < c.inputs; ++k) {
          const i64 st = nest.inner_stride(k);
          const i64 off = cur.offset[static_cast<std::size_t>(k)];
          if (repeated[k]) {  // the g copies of the row at off (n = g * L: one block)
            const auto bytes = static_cast<std::size_t>(n / group) * dtype_size(c.in[k]->dtype);
            auto& buf = copies[static_cast<std::size_t>(k)];
            if (copied[k] != off || buf.empty()) {
              buf.resize(bytes * static_cast<std::size_t>(group));
              const auto* row = static_cast<const unsigned char*>(c.inp[k]) + off * static_cast<i64>(dtype_size(c.in[k]->dtype));
              for (i64 q = 0; q < group; ++q) std::memcpy(buf.data() + static_cast<std::size_t>(q) * bytes, row, bytes);
              copied[k] = off;
            }
            s[k] = source(buf.data(), c.in[k]->dtype, raw, 0, 1, n, t[k]);
            continue;
          }
          s[k] = source(c.inp[k], c.in[k]->dtype, raw, off + j * st, st, n, t[k]);
        }
        const i64 yoff = cur.offset[static_cast<std::size_t>(ny)] + j * ys;
        void* const y_at = static_cast<char*>(c.yp) + yoff * static_cast<i64>(dtype_size(c.y.dtype));
        void* out = direct ? y_at : t[3];
        const i64 ob = static_cast<i64>(dtype_size(where_t));  // bytes of an element of out
        // Elements [q, q + m) of the block into out.
        auto compute = [&](i64 q, i64 m) {
          auto in = [&](int k) { return static_cast<const char*>(s[k].p) + q * s[k].step * s[k].bytes; };
          void* o = static_cast<char*>(out) + q * ob;
          if (bin != nullptr) {
            bin(m, in(0), s[0].step, in(1), s[1].step, o);
          } else if (c.kind == Kind::kWhere) {
            wh(m, reinterpret_cast<const bool*>(in(0)), s[0].step, in(1), s[1].step, in(2), s[2].step, o);
          } else if (s[0].step == 0) {  // a broadcast scalar input: one value, then filled
            un(1, s[0].p, o);
            for (i64 i = 1; i < m; ++i) std::memcpy(static_cast<char*>(o) + i * ob, o, static_cast<std::size_t>(ob));
          } else if (half_math != nullptr) {
            half_math(m, in(0), o, direct && stream);
          } else if (math != nullptr) {
            math(m, reinterpret_cast<const float*>(in(0)), static_cast<float*>(o));
          } else {
            un(m, in(0), o);
          }
        };
        if (!stream || direct) {
          compute(0, n);
          if (!y_direct) put(out, where_t, raw, c.yp, c.y.dtype, yoff, ys, n);
          continue;
        }
        const i64 yb = static_cast<i64>(dtype_size(c.y.dtype));
        for (i64 q = 0, piece = kStreamPiece / yb; q < n; q += piece) {
          const i64 m = std::min(piece, n - q);
          compute(q, m);
          char* yq = static_cast<char*>(y_at) + q * yb;
          if (y_half) {  // narrowed into a block of its own first
            put(static_cast<char*>(out) + q * ob, where_t, raw, t[4], c.y.dtype, 0, 1, m);
            kK->stream(yq, t[4], m * 2);
          } else {
            kK->stream(yq, static_cast<char*>(out) + q * ob, m * yb);
          }
        }
      }
    }
    if (stream) kK->fence();
  });
  return Status::ok();
}

Status elt_ref_run(Handle&, const EltCall& c) {
  switch (c.kind) {
    case Kind::kBinary:
      ref::binary(static_cast<BinaryOp>(c.op), *c.in[0], c.inp[0], *c.in[1], c.inp[1], c.y, c.yp);
      break;
    case Kind::kUnary: ref::unary(static_cast<UnaryOp>(c.op), *c.in[0], c.inp[0], c.y, c.yp); break;
    case Kind::kWhere:
      ref::where(*c.in[0], c.inp[0], *c.in[1], c.inp[1], *c.in[2], c.inp[2], c.y, c.yp);
      break;
  }
  return Status::ok();
}

template <Isa kNeeds>
Status elt_accepts(const EltCall&) {
  return detail::isa_allows(kNeeds);
}

constexpr detail::Impl<EltCall> kEltImpls[] = {
    {"elt_avx512", &elt_accepts<Isa::kAvx512>, &elt_run<&ek::kAvx512, &ak::kAvx512>},
    {"elt_avx2", &elt_accepts<Isa::kAvx2>, &elt_run<&ek::kAvx2, &ak::kAvx2>},
    {"elt_generic", &elt_accepts<Isa::kGeneric>, &elt_run<&ek::kGeneric, &ak::kGeneric>},
    {"elt_ref", detail::accepts_all<EltCall>, &elt_ref_run},
};

// ---- checks -----------------------------------------------------------------------------------
Status check_dims(const std::string& fn, const TensorDesc& y, const std::vector<i64>& expect) {
  if (y.dims == expect) return Status::ok();
  return invalid_argument(fn + ": y dims [" + detail::dims_string(y.dims) +
                          "] differ from the broadcast of the inputs [" +
                          detail::dims_string(expect) + "]");
}

Status run(Handle& h, const char* fn, const EltCall& c) {
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, fn));
  return detail::run_first_accepting(h, fn, kEltImpls, c);
}

std::string type_list(bool (*takes)(int, int), int op) {
  std::string s;
  for (DType t : {DType::kBool, DType::kI8, DType::kU8, DType::kI32, DType::kI64, DType::kF16,
                  DType::kBF16, DType::kF32, DType::kF64})
    if (takes(op, type_index(t))) s += (s.empty() ? "" : ", ") + std::string(dtype_name(t));
  return s;
}
bool binary_takes(int op, int ti) { return ti >= 0 && ek::kGeneric.binary[op][ti] != nullptr; }
bool unary_takes(int op, int ti) { return ti >= 0 && ek::kGeneric.unary[op][ti] != nullptr; }

void log_bench(const Handle& h, const std::string& what, const TensorDesc& a, const TensorDesc* b) {
  TESSERA_VLOG(kBench) << "tessera bench dnn eltwise " << what << " --dims " << detail::dims_x(a)
                       << (b ? " --dims-b " + detail::dims_x(*b) : std::string())
                       << " --dtype " << dtype_name(a.dtype) << " --threads "
                       << detail::max_threads(h);
}

}  // namespace

Result<std::vector<std::int64_t>> broadcast_dims(std::span<const std::int64_t> a,
                                                 std::span<const std::int64_t> b) {
  const std::size_t r = std::max(a.size(), b.size());
  std::vector<std::int64_t> out(r);
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const std::int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      return invalid_argument("broadcast: dims [" +
                              detail::dims_string({a.begin(), a.end()}) + "] and [" +
                              detail::dims_string({b.begin(), b.end()}) +
                              "] do not broadcast (axis " + std::to_string(i) + ": " +
                              std::to_string(da) + " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Status binary(Handle& h, BinaryOp op, const TensorDesc& a_desc, const void* a,
              const TensorDesc& b_desc, const void* b, const TensorDesc& y_desc, void* y) {
  const int k = static_cast<int>(op);
  if (k < 0 || k >= kNumBinaryOps)
    return invalid_argument("binary: unknown op " + std::to_string(k));
  const std::string fn = "binary " + std::string(binary_name(op));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "a", a_desc, a));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "b", b_desc, b));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y_desc, y));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "a", a_desc, "b", b_desc));
  if (!binary_takes(k, type_index(a_desc.dtype)))
    return unsupported(fn + ": dtype " + std::string(dtype_name(a_desc.dtype)) +
                       " is not supported; supported: " + type_list(binary_takes, k));
  const bool cmp = op >= BinaryOp::kEqual && op <= BinaryOp::kGreaterEqual;
  const DType yt = cmp ? DType::kBool : a_desc.dtype;
  if (y_desc.dtype != yt)
    return invalid_argument(fn + ": y dtype " + std::string(dtype_name(y_desc.dtype)) +
                            " must be " + std::string(dtype_name(yt)));
  TESSERA_ASSIGN_OR_RETURN(auto dims, broadcast_dims(a_desc.dims, b_desc.dims));
  TESSERA_RETURN_IF_ERROR(check_dims(fn, y_desc, dims));
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "y", y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_no_overlap(fn, "y", y_desc, y, "a", a_desc, a));
  TESSERA_RETURN_IF_ERROR(detail::check_no_overlap(fn, "y", y_desc, y, "b", b_desc, b));
  log_bench(h, "--op " + std::string(binary_name(op)), a_desc, &b_desc);
  return run(h, "binary", EltCall{Kind::kBinary, k, {&a_desc, &b_desc, nullptr}, {a, b, nullptr}, 2, y_desc, y});
}

Status where(Handle& h, const TensorDesc& cond_desc, const void* cond, const TensorDesc& a_desc,
             const void* a, const TensorDesc& b_desc, const void* b, const TensorDesc& y_desc,
             void* y) {
  const std::string fn = "where";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "cond", cond_desc, cond));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "a", a_desc, a));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "b", b_desc, b));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y_desc, y));
  if (cond_desc.dtype != DType::kBool)
    return invalid_argument(fn + ": cond dtype " + std::string(dtype_name(cond_desc.dtype)) + " must be bool");
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "a", a_desc, "b", b_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dtype(fn, "a", a_desc, "y", y_desc));
  if (dtype_size(a_desc.dtype) > 8)
    return unsupported(fn + ": dtype " + std::string(dtype_name(a_desc.dtype)) + " is not supported (elements of at most 8 bytes)");
  TESSERA_ASSIGN_OR_RETURN(auto ab, broadcast_dims(a_desc.dims, b_desc.dims));
  TESSERA_ASSIGN_OR_RETURN(auto dims, broadcast_dims(cond_desc.dims, ab));
  TESSERA_RETURN_IF_ERROR(check_dims(fn, y_desc, dims));
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "y", y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_no_overlap(fn, "y", y_desc, y, "cond", cond_desc, cond));
  TESSERA_RETURN_IF_ERROR(detail::check_no_overlap(fn, "y", y_desc, y, "a", a_desc, a));
  TESSERA_RETURN_IF_ERROR(detail::check_no_overlap(fn, "y", y_desc, y, "b", b_desc, b));
  return run(h, "where", EltCall{Kind::kWhere, 0, {&cond_desc, &a_desc, &b_desc}, {cond, a, b}, 3, y_desc, y});
}

Status unary(Handle& h, UnaryOp op, const TensorDesc& x_desc, const void* x,
             const TensorDesc& y_desc, void* y) {
  const int k = static_cast<int>(op);
  if (k < 0 || k >= kNumUnaryOps) return invalid_argument("unary: unknown op " + std::to_string(k));
  const std::string fn = "unary " + std::string(unary_name(op));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x_desc, x));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y_desc, y));
  if (!unary_takes(k, type_index(x_desc.dtype)))
    return unsupported(fn + ": dtype " + std::string(dtype_name(x_desc.dtype)) +
                       " is not supported; supported: " + type_list(unary_takes, k));
  const DType yt = op == UnaryOp::kIsNan || op == UnaryOp::kIsInf ? DType::kBool : x_desc.dtype;
  if (y_desc.dtype != yt)
    return invalid_argument(fn + ": y dtype " + std::string(dtype_name(y_desc.dtype)) +
                            " must be " + std::string(dtype_name(yt)));
  TESSERA_RETURN_IF_ERROR(detail::check_same_dims(fn, "x", x_desc, "y", y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "y", y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_no_overlap(fn, "y", y_desc, y, "x", x_desc, x));
  log_bench(h, "--op " + std::string(unary_name(op)), x_desc, nullptr);
  return run(h, "unary", EltCall{Kind::kUnary, k, {&x_desc, nullptr, nullptr}, {x, nullptr, nullptr}, 1, y_desc, y});
}

}  // namespace tessera::dnn

namespace tessera::dnn::elt_kernels {

int vector_math(int op) {
  switch (static_cast<UnaryOp>(op)) {
    case UnaryOp::kExp: return act_kernels::kMathExp;
    case UnaryOp::kLog: return act_kernels::kMathLog;
    case UnaryOp::kTanh: return act_kernels::kMathTanh;
    case UnaryOp::kErf: return act_kernels::kMathErf;
    case UnaryOp::kSin: return act_kernels::kMathSin;
    case UnaryOp::kCos: return act_kernels::kMathCos;
    case UnaryOp::kTan: return act_kernels::kMathTan;
    case UnaryOp::kAsin: return act_kernels::kMathAsin;
    case UnaryOp::kAcos: return act_kernels::kMathAcos;
    case UnaryOp::kAtan: return act_kernels::kMathAtan;
    case UnaryOp::kSinh: return act_kernels::kMathSinh;
    case UnaryOp::kCosh: return act_kernels::kMathCosh;
    case UnaryOp::kRsqrt: return act_kernels::kMathRsqrt;
    case UnaryOp::kSqrt: return act_kernels::kMathSqrt;
    default: return -1;
  }
}


}  // namespace tessera::dnn::elt_kernels
