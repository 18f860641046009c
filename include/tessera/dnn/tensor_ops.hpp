// tessera DNN tensor operations: elementwise binary and unary operations with NumPy / ONNX
// broadcasting, where(), and reductions over any set of axes. Included by tessera/dnn.hpp.
//
// Conventions (as the rest of the DNN layer): a Handle, a TensorDesc (dtype, dims, element
// strides; rank 0 is a scalar) plus a raw host pointer per tensor, a Status back. Arguments are
// checked before anything is read or written. Any strides are accepted (inputs may broadcast
// with stride 0 too); outputs must not overlap an input except exactly (in place).
//
// Dtypes and their rules (docs/dnn.md, "Tensor operations", has the full table):
// - Arithmetic is computed in the dtype itself; f16/bf16 are computed in f32 and rounded once.
// - Integer add/sub/mul/neg/abs wrap around (two's complement; never undefined behaviour).
//   Integer div truncates toward zero, mod takes the divisor's sign; a zero divisor gives 0
//   (and INT_MIN / -1 gives INT_MIN) instead of a trap. Integer pow with a negative
//   exponent gives 0 except for bases 1 and -1.
// - min/max propagate NaN (as numpy.minimum / torch.minimum).
// - Comparisons give bool outputs; and/or/xor/not take and give bool.
// - Results are bitwise identical for any thread count.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tessera/dnn.hpp"

namespace tessera::dnn {

// ---- Binary -----------------------------------------------------------------------------------
enum class BinaryOp : int {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMod,   // result has the divisor's sign (Python %, ONNX Mod fmod=0)
  kFmod,  // result has the dividend's sign (C fmod, ONNX Mod fmod=1)
  kMin,
  kMax,
  kEqual,  // comparisons: y is bool
  kNotEqual,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kAnd,  // logical: a, b and y are bool
  kOr,
  kXor,
  kBitAnd,  // bitwise: integer dtypes
  kBitOr,
  kBitXor,
};
inline constexpr int kNumBinaryOps = 21;
std::string_view binary_name(BinaryOp op);  // "add", "greater_equal", "bit_and", ...
std::optional<BinaryOp> parse_binary(std::string_view name);

// The broadcast of two shapes (NumPy rules: right-aligned, each pair equal or one of them 1).
Result<std::vector<std::int64_t>> broadcast_dims(std::span<const std::int64_t> a,
                                                 std::span<const std::int64_t> b);

// y = a op b with broadcasting: y's dims must be broadcast_dims(a, b); a and b have the same
// dtype; y has it too, or bool for comparisons.
Status binary(Handle& h, BinaryOp op, const TensorDesc& a_desc, const void* a,
              const TensorDesc& b_desc, const void* b, const TensorDesc& y_desc, void* y);

// y = cond ? a : b, the three broadcast together; cond is bool, a, b and y share a dtype.
Status where(Handle& h, const TensorDesc& cond_desc, const void* cond, const TensorDesc& a_desc,
             const void* a, const TensorDesc& b_desc, const void* b, const TensorDesc& y_desc,
             void* y);

// ---- Unary ------------------------------------------------------------------------------------
enum class UnaryOp : int {
  kNeg,
  kAbs,
  kSign,
  kReciprocal,
  kSqrt,
  kRsqrt,
  kExp,
  kLog,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kTanh,
  kErf,
  kFloor,
  kCeil,
  kRound,  // to nearest, ties to even (ONNX Round)
  kNot,    // bool
  kIsNan,  // float -> bool
  kIsInf,  // float -> bool (either sign)
};
inline constexpr int kNumUnaryOps = 24;
std::string_view unary_name(UnaryOp op);  // "neg", "rsqrt", "isnan", ...
std::optional<UnaryOp> parse_unary(std::string_view name);

// y = op(x); x and y have equal dims (y is bool for isnan/isinf). neg/abs/sign also take
// integers; the math functions take f32, f64, f16 and bf16.
Status unary(Handle& h, UnaryOp op, const TensorDesc& x_desc, const void* x,
             const TensorDesc& y_desc, void* y);

// ---- Elementwise chains ------------------------------------------------------------------------
// One step of a chain over a running value v: v = unary(v), v = activation(v), or
// v = binary(v, operand) (binary(operand, v) with operand_first).
struct ChainStep {
  enum class Kind : int { kUnary, kActivation, kBinary };
  Kind kind = Kind::kUnary;
  UnaryOp unary = UnaryOp::kNeg;
  Activation activation;
  BinaryOp binary = BinaryOp::kAdd;
  int operand = 0;             // kBinary: the index into the operands
  bool operand_first = false;  // kBinary: binary(operand, v)
};
inline constexpr int kMaxChainOperands = 4;

// y = the steps applied to x in order, in one pass over y: blocks small enough for the L1
// cache go through every step before the next block is read. Each step runs the kernel the
// operation alone would (binary, unary, activation_forward on the same instruction set), so
// the result has the bits of the unfused sequence. f32 only; x has y's dims; each operand
// broadcasts to them (rank <= y's); binary steps are the arithmetic ones (add, sub, mul, div,
// pow, min, max), unary steps the f32 math ones. y may be x (in place) but shares no memory
// with an operand. At most kMaxChainOperands operands.
Status elementwise_chain(Handle& h, std::span<const ChainStep> steps, const TensorDesc& x_desc, const void* x,
                         std::span<const TensorDesc> operand_descs, std::span<const void* const> operands,
                         const TensorDesc& y_desc, void* y);

// ---- Reductions -------------------------------------------------------------------------------
enum class ReduceOp : int {
  kSum,
  kMean,
  kProd,
  kMax,
  kMin,
  kL1,         // sum |x|
  kL2,         // sqrt(sum x^2)
  kSumSquare,  // sum x^2
  kLogSum,     // log(sum x)
  kLogSumExp,  // log(sum e^x), computed stably (max subtracted first)
};
inline constexpr int kNumReduceOps = 10;
std::string_view reduce_name(ReduceOp op);  // "sum", "log_sum_exp", ...
std::optional<ReduceOp> parse_reduce(std::string_view name);

// The output of reducing x over `axes` (negative counts from the back; empty = all axes):
// the reduced dims become 1 (keepdims) or disappear. Packed row-major, x's dtype.
Result<TensorDesc> reduce_output_desc(const TensorDesc& x, std::span<const int> axes,
                                      bool keepdims);

// y = op over `axes` of x; y's dims are reduce_output_desc's (any strides). Sums of floats
// accumulate in f64 (f32, f16, bf16 inputs) in a fixed order; integer sums wrap around.
// Over zero elements: sum, L1, L2, sum_square 0; prod 1; mean NaN (0 for integers);
// max -inf / min +inf (the dtype's lowest / highest for integers); log_sum and log_sum_exp
// -inf. max/min propagate NaN. Integer dtypes take sum, mean (truncated), prod, max, min,
// L1 and sum_square.
Status reduce(Handle& h, ReduceOp op, std::span<const int> axes, bool keepdims,
              const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc, void* y);

// y (i64) = the index along `axis` of the largest (arg_max) or smallest element: the first
// such index, or the last when `last_index`. NaN counts as larger (arg_max) / smaller
// (arg_min) than any number, so the first NaN wins (the last with last_index). The axis
// must not be empty.
Status arg_reduce(Handle& h, bool arg_max, int axis, bool keepdims, bool last_index,
                  const TensorDesc& x_desc, const void* x, const TensorDesc& y_desc,
                  void* y);

// ---- MatMul -----------------------------------------------------------------------------------
// y = a @ b with NumPy / ONNX MatMul semantics: the last two dims are the matrices ([M, K] and
// [K, N]), the dims before them broadcast; a 1-D a is a row [1, K] and a 1-D b a column
// [K, 1], their unit dim left out of y. Dtypes (a, b -> y):
// - f32, f64: BLAS gemm (batched);
// - bf16, f16: products summed in f32 (BLAS mixed-precision gemm), y rounded once to the dtype;
// - u8 x i8 -> i32 (ONNX MatMulInteger without zero points): int32 sums, wrapping.
// Any strides: matrices stored transposed go to BLAS as transposed operands, others are packed
// first. Results are bitwise identical for any thread count (BLAS's kBitwise mode).
Result<std::vector<std::int64_t>> matmul_output_dims(std::span<const std::int64_t> a,
                                                     std::span<const std::int64_t> b);
Status matmul(Handle& h, const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
              const void* b, const TensorDesc& y_desc, void* y);

}  // namespace tessera::dnn
