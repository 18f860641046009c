// MatMul with batch broadcasting on the BLAS layer. Row-major y = a @ b is the column-major
// y^T = b^T a^T, so each call is gemm(m = N, n = M, k = K) with b as BLAS's A and a as its B.
// A row-major matrix with unit column stride is, column-major, its own transpose (kNoTrans
// with ld = row stride); one with unit row stride is stored transposed (kTrans, ld = column
// stride); anything else is packed first. Batches: pointer arrays for gemm_batched (f32, f64)
// or one gemm per batch (bf16/f16 into an f32 block then rounded into y; u8 x i8 -> i32).
// Ordered list: matmul_blas (every problem), then matmul_ref (ref.cpp).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "../../common.hpp"
#include "../eltwise/nest.hpp"
#include "../movement/move.hpp"
#include "ref.hpp"
#include "tessera/blas.hpp"

namespace tessera::dnn {
namespace {

using i64 = std::int64_t;
using std::to_string;
std::size_t z(i64 i) { return static_cast<std::size_t>(i); }

// A row-major rows x cols matrix with element strides (sr, sc), as a BLAS operand.
struct Operand {
  blas::Op op = blas::Op::kNoTrans;
  i64 ld = 1;
  bool ok = false;  // false: pack it first
};
blas::Op flip(blas::Op op) { return op == blas::Op::kNoTrans ? blas::Op::kTrans : blas::Op::kNoTrans; }
Operand as_operand(i64 rows, i64 cols, i64 sr, i64 sc) {
  if ((cols == 1 || sc == 1) && (rows == 1 || sr >= std::max<i64>(1, cols)))
    return {blas::Op::kNoTrans, rows == 1 ? std::max<i64>(1, cols) : sr, true};
  if ((rows == 1 || sr == 1) && (cols == 1 || sc >= std::max<i64>(1, rows)))
    return {blas::Op::kTrans, cols == 1 ? std::max<i64>(1, rows) : sc, true};
  return {};
}

// Element offsets of every batch index (y's batch dims, row-major) in a tensor whose batch
// dims (right-aligned, possibly fewer, 1 where broadcast) have the given strides.
std::vector<i64> batch_offsets(const std::vector<i64>& batch, const TensorDesc& d, int matrix_dims) {
  const int nb = static_cast<int>(batch.size()), db = d.rank() - matrix_dims;
  std::vector<i64> strides(z(nb), 0);
  for (int i = 0; i < db; ++i) {
    const int j = nb - db + i;
    if (d.dims[z(i)] != 1) strides[z(j)] = d.strides[z(i)];
  }
  return detail::box_offsets(batch, strides);
}

// A packed row-major copy of a tensor (same dtype).
struct Packed {
  std::vector<unsigned char> mem;
  TensorDesc desc;
};
Result<Packed> pack(Handle& h, const TensorDesc& d, const void* p) {
  Packed out;
  out.desc = TensorDesc::make(d.dtype, d.dims);
  out.mem.resize(static_cast<std::size_t>(std::max<i64>(1, d.numel())) * dtype_size(d.dtype));
  TESSERA_RETURN_IF_ERROR(detail::run_move(h, detail::Move::of(d, p, out.desc, out.mem.data())));
  return out;
}

// A checked call: y's dims and dtype match a @ b.
struct MatmulCall {
  const TensorDesc& a;
  const void* ap;
  const TensorDesc& b;
  const void* bp;
  const TensorDesc& y;
  void* yp;
};

Status blas_run(Handle& h, const MatmulCall& c);
Status ref_run(Handle&, const MatmulCall& c) {
  ref::matmul(c.a, c.ap, c.b, c.bp, c.y, c.yp);
  return Status::ok();
}

constexpr detail::Impl<MatmulCall> kMatmulImpls[] = {
    {"matmul_blas", detail::accepts_all<MatmulCall>, &blas_run},
    {"matmul_ref", detail::accepts_all<MatmulCall>, &ref_run},
};

}  // namespace

Result<std::vector<i64>> matmul_output_dims(std::span<const i64> a, std::span<const i64> b) {
  if (a.empty() || b.empty()) return invalid_argument("matmul: a and b need rank >= 1 (got " + to_string(a.size()) + " and " + to_string(b.size()) + ")");
  const i64 ka = a.back(), kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (ka != kb)
    return invalid_argument("matmul: a's columns (" + to_string(ka) + ") differ from b's rows (" + to_string(kb) + ")");
  const std::span<const i64> ab = a.size() >= 2 ? a.first(a.size() - 2) : a.first(0);
  const std::span<const i64> bb = b.size() >= 2 ? b.first(b.size() - 2) : b.first(0);
  TESSERA_ASSIGN_OR_RETURN(std::vector<i64> dims, broadcast_dims(ab, bb));
  if (a.size() >= 2) dims.push_back(a[a.size() - 2]);
  if (b.size() >= 2) dims.push_back(b.back());
  return dims;
}

Status matmul(Handle& h, const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc, const void* b,
              const TensorDesc& y_desc, void* y) {
  const std::string fn = "matmul";
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "a", a_desc, a));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "b", b_desc, b));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y_desc, y));
  const DType at = a_desc.dtype, bt = b_desc.dtype;
  const bool integer = at == DType::kU8 && bt == DType::kI8;
  if (!integer && (at != bt || !(at == DType::kF32 || at == DType::kF64 || at == DType::kBF16 || at == DType::kF16)))
    return unsupported(fn + ": dtypes " + std::string(dtype_name(at)) + " x " + std::string(dtype_name(bt)) +
                       " are not supported (f32, f64, bf16, f16 pairs, or u8 x i8)");
  const DType yt = integer ? DType::kI32 : at;
  if (y_desc.dtype != yt)
    return invalid_argument(fn + ": y dtype " + std::string(dtype_name(y_desc.dtype)) + " must be " + std::string(dtype_name(yt)));
  TESSERA_ASSIGN_OR_RETURN(auto dims, matmul_output_dims(a_desc.dims, b_desc.dims));
  if (y_desc.dims != dims)
    return invalid_argument(fn + ": y dims [" + detail::dims_string(y_desc.dims) + "] must be [" + detail::dims_string(dims) + "]");
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "y", y_desc));
  TESSERA_RETURN_IF_ERROR(detail::check_disjoint(fn, "y", y_desc, y, "a", a_desc, a));
  TESSERA_RETURN_IF_ERROR(detail::check_disjoint(fn, "y", y_desc, y, "b", b_desc, b));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "matmul"));
  if (y_desc.numel() == 0) return Status::ok();
  const MatmulCall call{a_desc, a, b_desc, b, y_desc, y};
  return detail::select_impl<MatmulCall>("matmul", kMatmulImpls, call).run(h, call);
}

namespace {

// BLAS's gemm (batched for f32/f64) on the operands as stored where it can read them.
Status blas_run(Handle& h, const MatmulCall& c) {
  // A 2-D b shared by every batch: a's batch dims fold into its rows when a and y hold them as
  // one row-major block, so BLAS runs one gemm of batch x M rows instead of one per batch (a
  // transformer's [32, 1, 256] x [256, 768] was 32 one-row gemms, 3x slower).
  if (c.b.rank() == 2 && c.a.rank() >= 3 && c.a.is_packed(Layout::kNCHW) && c.y.is_packed(Layout::kNCHW)) {
    const i64 K = c.a.dims.back(), N = c.y.dims.back();
    const TensorDesc a2 = TensorDesc::make(c.a.dtype, {c.a.numel() / std::max<i64>(K, 1), K});
    const TensorDesc y2 = TensorDesc::make(c.y.dtype, {c.y.numel() / std::max<i64>(N, 1), N});
    if (K > 0 && N > 0) return blas_run(h, MatmulCall{a2, c.ap, c.b, c.bp, y2, c.yp});
  }
  const std::string fn = "matmul";
  const TensorDesc& a_desc = c.a;
  const TensorDesc& b_desc = c.b;
  const TensorDesc& y_desc = c.y;
  const void* a = c.ap;
  const void* b = c.bp;
  void* y = c.yp;
  const DType at = a_desc.dtype, bt = b_desc.dtype;
  const bool integer = at == DType::kU8 && bt == DType::kI8;
  const DType yt = y_desc.dtype;
  try {
    // Operands whose matrices BLAS cannot read as they are get packed.
    const bool a1 = a_desc.rank() == 1, b1 = b_desc.rank() == 1;
    const i64 ra = a_desc.rank(), rb = b_desc.rank(), ry = y_desc.rank();
    auto mat_strides = [](const TensorDesc& d, bool row_vec, bool col_vec) {
      const i64 r = d.rank();
      if (row_vec) return std::pair<i64, i64>{0, d.strides[0]};
      if (col_vec) return std::pair<i64, i64>{d.strides[0], 0};
      return std::pair<i64, i64>{d.strides[z(r - 2)], d.strides[z(r - 1)]};
    };
    const i64 M = a1 ? 1 : a_desc.dims[z(ra - 2)], K = a_desc.dims[z(ra - 1)], N = b1 ? 1 : b_desc.dims[z(rb - 1)];
    Packed pa, pb;
    const TensorDesc* ad = &a_desc;
    const TensorDesc* bd = &b_desc;
    const void* ap = a;
    const void* bp = b;
    auto [a_sr, a_sc] = mat_strides(*ad, a1, false);
    auto [b_sr, b_sc] = mat_strides(*bd, false, b1);
    Operand oa = as_operand(M, K, a_sr, a_sc), ob = as_operand(K, N, b_sr, b_sc);
    if (!oa.ok) {
      TESSERA_ASSIGN_OR_RETURN(pa, pack(h, a_desc, a));
      ad = &pa.desc;
      ap = pa.mem.data();
      std::tie(a_sr, a_sc) = mat_strides(*ad, a1, false);
      oa = as_operand(M, K, a_sr, a_sc);
    }
    if (!ob.ok) {
      TESSERA_ASSIGN_OR_RETURN(pb, pack(h, b_desc, b));
      bd = &pb.desc;
      bp = pb.mem.data();
      std::tie(b_sr, b_sc) = mat_strides(*bd, false, b1);
      ob = as_operand(K, N, b_sr, b_sc);
    }
    // y: written directly when its matrices are row-major with unit column stride and the
    // dtype is BLAS's output type; else through a packed block.
    const int ym = (a1 ? 0 : 1) + (b1 ? 0 : 1);
    const std::vector<i64> batch(y_desc.dims.begin(), y_desc.dims.end() - ym);
    const i64 y_sr = a1 ? 0 : y_desc.strides[z(ry - ym)], y_sc = b1 ? 0 : y_desc.strides[z(ry - 1)];
    const Operand oy = as_operand(M, N, y_sr, y_sc);
    const bool half = yt == DType::kBF16 || yt == DType::kF16;
    const bool direct = oy.ok && oy.op == blas::Op::kNoTrans && !half && !integer;
    const auto boa = batch_offsets(batch, *ad, a1 ? 1 : 2), bob = batch_offsets(batch, *bd, b1 ? 1 : 2);
    const i64 nbatch = static_cast<i64>(boa.size());
    // The packed block: [batch, M, N] of the BLAS output type.
    const DType ct = integer ? DType::kI32 : half ? DType::kF32 : yt;
    const i64 ce = static_cast<i64>(dtype_size(ct)), ae = static_cast<i64>(dtype_size(at)), be = static_cast<i64>(dtype_size(bt));
    std::vector<unsigned char> block;
    std::vector<i64> boy;
    i64 ldy = 0;
    char* ybase = nullptr;
    if (direct) {
      boy = batch_offsets(batch, y_desc, ym);
      ldy = oy.ld;
      ybase = static_cast<char*>(y);
    } else {
      block.resize(static_cast<std::size_t>(nbatch * M * N * ce));
      boy.resize(z(nbatch));
      for (i64 i = 0; i < nbatch; ++i) boy[z(i)] = i * M * N;
      ldy = std::max<i64>(1, N);
      ybase = reinterpret_cast<char*>(block.data());
    }
    const char* abase = static_cast<const char*>(ap);
    const char* bbase = static_cast<const char*>(bp);
    blas::Handle& bh = h.blas();
    auto gemm_one = [&](i64 i) -> Status {
      const void* A = bbase + bob[z(i)] * be;  // BLAS's A is b
      const void* B = abase + boa[z(i)] * ae;
      void* C = ybase + boy[z(i)] * ce;
      if (integer)  // u8 must be BLAS's A: the column-major [M, N] block is a @ b itself
        return blas::gemm_u8s8s32(bh, flip(oa.op), flip(ob.op), M, N, K, 1, static_cast<const std::uint8_t*>(B), oa.ld,
                                  static_cast<const std::int8_t*>(A), ob.ld, 0, static_cast<std::int32_t*>(C), std::max<i64>(1, M));
      if (at == DType::kBF16)
        return blas::gemm_bf16(bh, ob.op, oa.op, N, M, K, 1.0f, static_cast<const bf16*>(A), ob.ld, static_cast<const bf16*>(B), oa.ld, 0.0f, static_cast<float*>(C), ldy);
      return blas::gemm_f16(bh, ob.op, oa.op, N, M, K, 1.0f, static_cast<const f16*>(A), ob.ld, static_cast<const f16*>(B), oa.ld, 0.0f, static_cast<float*>(C), ldy);
    };
    if (at == DType::kF32 || at == DType::kF64) {
      auto run = [&](auto tag) -> Status {
        using T = decltype(tag);
        std::vector<const T*> pa_(z(nbatch)), pb_(z(nbatch));
        std::vector<T*> pc(z(nbatch));
        for (i64 i = 0; i < nbatch; ++i) {
          pa_[z(i)] = reinterpret_cast<const T*>(bbase) + bob[z(i)];
          pb_[z(i)] = reinterpret_cast<const T*>(abase) + boa[z(i)];
          pc[z(i)] = reinterpret_cast<T*>(ybase) + boy[z(i)];
        }
        return blas::gemm_batched<T>(bh, ob.op, oa.op, N, M, K, T(1), pa_.data(), ob.ld, pb_.data(), oa.ld, T(0), pc.data(), ldy, nbatch);
      };
      TESSERA_RETURN_IF_ERROR(at == DType::kF32 ? run(float{}) : run(double{}));
    } else {
      for (i64 i = 0; i < nbatch; ++i) TESSERA_RETURN_IF_ERROR(gemm_one(i));
    }
    if (direct) return Status::ok();
    // The block into y (rounding f32 to bf16/f16 once): [batch..., M, N] row-major, or with
    // M and N column-major for the integer path.
    TensorDesc bdsc = TensorDesc::make(ct, y_desc.dims);
    if (integer) {
      if (!a1) bdsc.strides[z(ry - ym)] = 1;
      if (!b1) bdsc.strides[z(ry - 1)] = M;
    }
    return detail::run_move(h, detail::Move::of(bdsc, block.data(), y_desc, y));
  } catch (const std::bad_alloc&) {
    return out_of_memory(fn + ": out of memory");
  }
}

}  // namespace

}  // namespace tessera::dnn
