// Elementwise chains (tensor_ops.hpp): the broadcast loop nest of x, the operands and y
// (nest.hpp), walked row by row in blocks of kBlock elements; every step of the chain runs on
// the block (in y's memory when y is contiguous along the row, else in a staging block) before
// the next block is read. The steps call the kernels the separate operations call on the same
// instruction set: the binary table, the unary table or the activations' vector math for f32
// unary functions, the activations' forward kernels. No reductions: any thread split gives the
// same bits.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "../activation/kernels.hpp"
#include "kernels.hpp"
#include "nest.hpp"
#include "tessera/dnn/tensor_ops.hpp"

namespace tessera::dnn {
namespace {

namespace ek = elt_kernels;
namespace ak = act_kernels;
using i64 = std::int64_t;

constexpr i64 kBlock = 1024;  // elements per step call: the block and staged operands stay in L1
constexpr i64 kGrain = 65536;  // elements per thread chunk, at least (as the separate operations)

struct ChainCall {
  std::span<const ChainStep> steps;
  const TensorDesc& x;
  const void* xp;
  std::span<const TensorDesc> ops;
  std::span<const void* const> opp;
  const TensorDesc& y;
  void* yp;
};

// A step bound to one instruction set's kernel.
struct Bound {
  ChainStep::Kind kind;
  ek::BinaryFn bin = nullptr;
  ek::UnaryFn un = nullptr;
  ak::MathFn math = nullptr;
  ak::FwdFn act = nullptr;
  ak::Params params;
  int operand = 0;  // its operand index in the nest (1 + the caller's index)
  bool operand_first = false;
};

template <const ek::Kernels* kK, const ak::Kernels* kA>
Status chain_run(Handle& h, const ChainCall& c) {
  const i64 total = c.y.numel();
  if (total == 0) return Status::ok();
  std::vector<Bound> steps;
  for (const ChainStep& s : c.steps) {
    Bound b{s.kind};
    if (s.kind == ChainStep::Kind::kBinary) {
      b.bin = kK->binary[static_cast<int>(s.binary)][ek::kF32];
      b.operand = 1 + s.operand;
      b.operand_first = s.operand_first;
    } else if (s.kind == ChainStep::Kind::kUnary) {
      const int vm = ek::vector_math(static_cast<int>(s.unary));
      if (vm >= 0) b.math = kA->math[vm];
      else b.un = kK->unary[static_cast<int>(s.unary)][ek::kF32];
    } else {
      b.act = kA->fwd[static_cast<int>(s.activation.kind)][ak::kF32];
      b.params.alpha = s.activation.alpha;
      b.params.beta = s.activation.beta;
    }
    steps.push_back(b);
  }
  // Nest operands: x, the chain's operands, y.
  const int n_ops = static_cast<int>(c.ops.size());
  const TensorDesc* descs[detail::kMaxOperands];
  const void* ptrs[detail::kMaxOperands];
  descs[0] = &c.x;
  ptrs[0] = c.xp;
  for (int k = 0; k < n_ops; ++k) {
    descs[1 + k] = &c.ops[static_cast<std::size_t>(k)];
    ptrs[1 + k] = c.opp[static_cast<std::size_t>(k)];
  }
  const int ny = 1 + n_ops;
  descs[ny] = &c.y;
  const detail::Nest nest = detail::make_nest(c.y.dims, std::span<const TensorDesc* const>(descs, static_cast<std::size_t>(ny + 1)));
  const i64 L = nest.inner(), rows = nest.rows();
  const i64 blocks_per_row = (L + kBlock - 1) / kBlock;
  const i64 units = rows * blocks_per_row;
  const i64 grain = std::max<i64>(1, kGrain / std::min(L, kBlock));
  const i64 ys = nest.inner_stride(ny);
  detail::parallel_for(h, 0, units, grain, [&](i64 u0, i64 u1) {
    // Staging: one block per nest operand (strided ones are gathered), one for y when y is
    // strided along the row.
    auto tmp = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>((ny + 1) * kBlock));
    detail::RowCursor cur(nest, u0 / blocks_per_row);
    for (i64 u = u0; u < u1; ++u) {
      if (u != u0 && u % blocks_per_row == 0) cur.next();
      const i64 j = (u % blocks_per_row) * kBlock, n = std::min(kBlock, L - j);
      // Operand k's elements of this block: a pointer read with step 0 (broadcast) or 1.
      const auto source = [&](int k, int& step) -> const float* {
        const i64 st = nest.inner_stride(k);
        const float* base = static_cast<const float*>(ptrs[k]) + cur.offset[static_cast<std::size_t>(k)] + j * st;
        step = st == 0 ? 0 : 1;
        if (st == 0 || st == 1) return base;
        float* t = tmp.get() + k * kBlock;
        for (i64 i = 0; i < n; ++i) t[i] = base[i * st];
        return t;
      };
      float* const y_at = static_cast<float*>(c.yp) + cur.offset[static_cast<std::size_t>(ny)] + j * ys;
      float* const v = ys == 1 ? y_at : tmp.get() + ny * kBlock;
      int xstep = 1;
      const float* src = source(0, xstep);
      if (xstep == 0) {  // x broadcast along the row (a scalar x): its value, repeated
        std::fill(v, v + n, *src);
        src = v;
      }
      for (const Bound& b : steps) {
        if (b.bin != nullptr) {
          int step = 1;
          const float* o = source(b.operand, step);
          if (b.operand_first) b.bin(n, o, step, src, 1, v);
          else b.bin(n, src, 1, o, step, v);
        } else if (b.math != nullptr) {
          b.math(n, src, v);
        } else if (b.un != nullptr) {
          b.un(n, src, v);
        } else {
          b.act(b.params, n, src, v);
        }
        src = v;
      }
      if (src != v) std::memcpy(v, src, static_cast<std::size_t>(n) * sizeof(float));  // no steps
      if (ys != 1)
        for (i64 i = 0; i < n; ++i) y_at[i * ys] = v[i];
    }
  });
  return Status::ok();
}

template <Isa kNeeds>
Status chain_accepts(const ChainCall&) {
  return detail::isa_allows(kNeeds);
}

constexpr detail::Impl<ChainCall> kChainImpls[] = {
    {"chain_avx512", &chain_accepts<Isa::kAvx512>, &chain_run<&ek::kAvx512, &ak::kAvx512>},
    {"chain_avx2", &chain_accepts<Isa::kAvx2>, &chain_run<&ek::kAvx2, &ak::kAvx2>},
    {"chain_generic", detail::accepts_all<ChainCall>, &chain_run<&ek::kGeneric, &ak::kGeneric>},
};

bool arithmetic(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
    case BinaryOp::kSub:
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kPow:
    case BinaryOp::kMin:
    case BinaryOp::kMax: return true;
    default: return false;
  }
}

}  // namespace

Status elementwise_chain(Handle& h, std::span<const ChainStep> steps, const TensorDesc& x_desc, const void* x,
                         std::span<const TensorDesc> operand_descs, std::span<const void* const> operands,
                         const TensorDesc& y_desc, void* y) {
  static const std::string fn = "elementwise_chain";
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, fn.c_str()));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "x", x_desc, x));
  TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, "y", y_desc, y));
  TESSERA_RETURN_IF_ERROR(detail::check_distinct(fn, "y", y_desc));
  if (x_desc.dtype != DType::kF32 || y_desc.dtype != DType::kF32)
    return invalid_argument(fn + ": x and y must be f32, got " + std::string(dtype_name(x_desc.dtype)) + " and " + std::string(dtype_name(y_desc.dtype)));
  if (x_desc.dims != y_desc.dims)
    return invalid_argument(fn + ": x dims [" + detail::dims_string(x_desc.dims) + "] differ from y's [" + detail::dims_string(y_desc.dims) + "]");
  TESSERA_RETURN_IF_ERROR(detail::check_no_overlap(fn, "y", y_desc, y, "x", x_desc, x));
  if (operand_descs.size() != operands.size()) return invalid_argument(fn + ": " + std::to_string(operand_descs.size()) + " operand descs for " + std::to_string(operands.size()) + " pointers");
  if (operands.size() > static_cast<std::size_t>(kMaxChainOperands))
    return invalid_argument(fn + ": " + std::to_string(operands.size()) + " operands (at most " + std::to_string(kMaxChainOperands) + ")");
  for (std::size_t k = 0; k < operands.size(); ++k) {
    const std::string name = "operand " + std::to_string(k);
    const TensorDesc& d = operand_descs[k];
    TESSERA_RETURN_IF_ERROR(detail::check_tensor(fn, name.c_str(), d, operands[k]));
    if (d.dtype != DType::kF32) return invalid_argument(fn + ": " + name + " is " + std::string(dtype_name(d.dtype)) + ", not f32");
    TESSERA_ASSIGN_OR_RETURN(const std::vector<std::int64_t> b, broadcast_dims(d.dims, y_desc.dims));
    if (b != y_desc.dims)
      return invalid_argument(fn + ": " + name + " dims [" + detail::dims_string(d.dims) + "] do not broadcast to y's [" + detail::dims_string(y_desc.dims) + "]");
    TESSERA_RETURN_IF_ERROR(detail::check_disjoint(fn, "y", y_desc, y, name.c_str(), d, operands[k]));
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ChainStep& s = steps[i];
    const std::string what = fn + ": step " + std::to_string(i);
    switch (s.kind) {
      case ChainStep::Kind::kBinary:
        if (!arithmetic(s.binary)) return invalid_argument(what + ": " + std::string(binary_name(s.binary)) + " is not an arithmetic operation");
        if (s.operand < 0 || static_cast<std::size_t>(s.operand) >= operands.size())
          return invalid_argument(what + ": operand " + std::to_string(s.operand) + " of " + std::to_string(operands.size()));
        break;
      case ChainStep::Kind::kUnary:
        if (static_cast<int>(s.unary) < 0 || static_cast<int>(s.unary) >= kNumUnaryOps || s.unary == UnaryOp::kNot ||
            s.unary == UnaryOp::kIsNan || s.unary == UnaryOp::kIsInf)
          return invalid_argument(what + ": not an f32 -> f32 unary operation");
        break;
      case ChainStep::Kind::kActivation:
        if (static_cast<int>(s.activation.kind) < 0 || static_cast<int>(s.activation.kind) >= ak::kNumKinds)
          return invalid_argument(what + ": unknown activation");
        break;
      default: return invalid_argument(what + ": unknown step kind");
    }
  }
  const ChainCall c{steps, x_desc, x, operand_descs, operands, y_desc, y};
  return detail::run_first_accepting(h, fn.c_str(), kChainImpls, c);
}

}  // namespace tessera::dnn
