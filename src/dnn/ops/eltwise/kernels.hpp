// Elementwise kernels of the tensor operations (binary, unary, where) on contiguous runs, one
// table per instruction set: avx512.cpp, avx2.cpp and generic.cpp compile the same bodies
// (body.inc over scalar.inc) with their own flags, so the compiler vectorises each for its
// ISA; the f32 math functions come from the activations' vector math. impls.cpp walks the
// broadcast loop nest (loops.hpp) and calls these on the innermost dim.
//
// ISA files include only this header: declarations, no inline code.
#pragma once

#include <cstdint>

namespace tessera::dnn::elt_kernels {

// Compute types, the second index of the tables; f16/bf16 are staged through f32 (binary
// operations on contiguous halves: half_binary).
enum Type : int { kBool, kI8, kU8, kI32, kI64, kF32, kF64, kNumTypes };

inline constexpr int kBinaryOps = 21;  // BinaryOp's values (impls.cpp checks)
inline constexpr int kUnaryOps = 24;   // UnaryOp's values

// y[i] = a[i * sa] op b[i * sb] for i in [0, n); sa, sb are 0 (a broadcast scalar) or 1. y is
// contiguous, of the operand type, or bool for comparisons. Null where the op does not take
// the type.
using BinaryFn = void (*)(std::int64_t n, const void* a, int sa, const void* b, int sb, void* y);
// y[i] = op(x[i]); y may be x (in place).
using UnaryFn = void (*)(std::int64_t n, const void* x, void* y);
// y[i] = c[i * sc] ? a[i * sa] : b[i * sb], on elements of 1, 2, 4 or 8 bytes (index log2).
using WhereFn = void (*)(std::int64_t n, const bool* c, int sc, const void* a, int sa,
                         const void* b, int sb, void* y);

// dst[0, bytes) = src with non-temporal stores where the ISA has them (dst need not be
// aligned); fence() orders them before later stores.
using StreamFn = void (*)(void* dst, const void* src, std::int64_t bytes);
using FenceFn = void (*)();

struct Kernels {
  const char* isa;
  StreamFn stream;
  FenceFn fence;
  BinaryFn binary[kBinaryOps][kNumTypes];
  // The binary operations on f16 ([0]) and bf16 ([1]) operands and results (bool for
  // comparisons) in one pass, computed in f32 as on staged operands; f16 is null where the ISA
  // lacks the conversions.
  BinaryFn half_binary[kBinaryOps][2];
  // The same, for results larger than the caches: the whole 64-byte lines of y are written
  // with non-temporal stores (the caller fences); null for bool results.
  BinaryFn half_binary_stream[kBinaryOps][2];
  UnaryFn unary[kUnaryOps][kNumTypes];
  // The unary operations on contiguous f16 ([0]) and bf16 ([1]) in one pass, as half_binary;
  // and streaming their results as half_binary_stream (null for bool results).
  UnaryFn half_unary[kUnaryOps][2];
  UnaryFn half_unary_stream[kUnaryOps][2];
  WhereFn where[4];
};
// The activations' vector-math function (act_kernels::Math) that computes UnaryOp `op` on f32,
// or -1 for the ops scalar.inc computes (impls.cpp; the unary operation and the elementwise
// chains both use it, so they give the same bits).
int vector_math(int op);

extern const Kernels kGeneric;
extern const Kernels kAvx2;
extern const Kernels kAvx512;

}  // namespace tessera::dnn::elt_kernels
