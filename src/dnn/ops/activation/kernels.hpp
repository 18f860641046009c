// Elementwise activation kernels on flat arrays (x, y, dy, dx all laid out alike), one table
// per instruction set: avx512.cpp, avx2.cpp (both over the shared bodies simd_math.inc and
// act_body.inc) and generic.cpp (scalar, the act_scalar.hpp definitions). impls.cpp picks a
// table through the ordered implementation list and splits the work over threads.
//
// ISA files include only this header: declarations and constants, no inline code, so nothing
// compiled with wide-vector flags can leak into generic objects. Tensors are passed as raw
// storage (f32, or bf16/f16 bit patterns) with f32 compute; stores round to nearest even.
#pragma once

#include <cstdint>

namespace tessera::dnn::act_kernels {

// Mirrors ActKind (impls.cpp asserts the values match).
enum Kind : int {
  kIdentity,
  kRelu,
  kLeakyRelu,
  kElu,
  kSelu,
  kCelu,
  kSigmoid,
  kHardSigmoid,
  kTanh,
  kGeluErf,
  kGeluTanh,
  kSilu,
  kMish,
  kSoftplus,
  kSoftsign,
  kClip,
  kHardSwish,
  kAbs,
  kNumKinds
};
// Storage types, the second index of the tables.
enum Storage : int { kF32 = 0, kBF16 = 1, kF16 = 2, kNumStorage = 3 };
// bf16 results narrowed by the CPU's VCVTNEPS2BF16 (AVX512_BF16), the same bits as kBF16's
// integer rounding; a column of the forward tables only (math_storage and fwd), filled with
// the kBF16 kernels in the tables without it. bf16_column picks the column.
constexpr int kBF16Native = kNumStorage;

struct Params {
  float alpha = 0.0f;
  float beta = 0.0f;
  // Non-temporal stores for the output (the vector kernels): for outputs far larger than the
  // caches, where they skip the read-for-ownership and leave the caches alone.
  bool stream = false;
};

// y[i] = f(x[i]) for i in [0, n). In place (x == y) is allowed.
using FwdFn = void (*)(const Params& p, std::int64_t n, const void* x, void* y);
// dx[i] = f'(x[i]) * dy[i]. dx may alias x or dy.
using BwdFn = void (*)(const Params& p, std::int64_t n, const void* x, const void* dy, void* dx);

// PReLU over n elements sharing one slope, or over a row of n channels with slope[i] each.
using PreluFwdOneFn = void (*)(std::int64_t n, float slope, const void* x, void* y);
using PreluFwdRowFn = void (*)(std::int64_t n, const float* slope, const void* x, void* y);
// dx = x > 0 ? dy : slope * dy; the slope gradient terms x <= 0 ? x * dy : 0 (the product and
// the sums in f64) are returned summed (one slope) or added to acc[i] (a row of channels).
// The summation order is fixed by n alone.
using PreluBwdOneFn = double (*)(std::int64_t n, float slope, const void* x, const void* dy,
                                 void* dx);
using PreluBwdRowFn = void (*)(std::int64_t n, const float* slope, const void* x, const void* dy,
                               void* dx, double* acc);
// CReLU halves: y_pos = relu(x), y_neg = relu(-x); dx = relu'(x) dy_pos - relu'(-x) dy_neg.
using CreluFwdFn = void (*)(std::int64_t n, const void* x, void* y_pos, void* y_neg);
using CreluBwdFn = void (*)(std::int64_t n, const void* x, const void* dy_pos, const void* dy_neg,
                            void* dx);

// The vector math under the activations, on f32 arrays (tests check its accuracy).
enum Math : int {
  kMathExp,
  kMathExpm1,
  kMathTanh,
  kMathErf,
  kMathSigmoid,
  kMathLog1p01,  // log(1 + u), u in [0, 1]
  kMathLogGe1,   // log s, s >= 1
  kMathLog,      // log x, every x
  kMathSin,
  kMathCos,
  kMathTan,
  kMathAsin,
  kMathAcos,
  kMathAtan,
  kMathSinh,
  kMathCosh,
  kMathRsqrt,  // 1 / sqrt x (f32: two roundings, as the scalar rule)
  kMathSqrt,   // correctly rounded (the 16-bit columns run it on their storage: one pass)
  kMathExpLe0,  // e^x for x <= 0, softmax's (one polynomial degree fewer than kMathExp)
  kNumMath
};
using MathFn = void (*)(std::int64_t n, const float* x, float* y);
// The same function on an array of one storage type (f32 compute, results rounded to nearest
// even); with `stream` the output goes out with non-temporal stores, fenced before returning.
// In place (x == y) is allowed.
using MathStorageFn = void (*)(std::int64_t n, const void* x, void* y, bool stream);

// Rows of shifted exponentials: y[r * n + i] = e^(x[r * ldx + i] - shift[r]) for r < rows, the
// shift rounded to f32 and subtracted in f32, then kMathExp (the same bits as that subtraction
// stored and math[kMathExp] on it). log_sum_exp's e^(x - max), in one pass.
using ExpRowsFn = void (*)(std::int64_t n, std::int64_t rows, std::int64_t ldx, const float* x,
                           const double* shift, float* y);

// y[i] = e^(x[i] - m[i]), the subtraction in f32, then kMathExp (the same bits as storing the
// differences and math[kMathExp] on them): log_sum_exp's columns.
using ExpSubFn = void (*)(std::int64_t n, const float* x, const float* m, float* y);

struct Kernels {
  const char* isa;  // "avx512", "avx2", "generic"
  MathFn math[kNumMath];
  ExpRowsFn exp_rows;
  ExpSubFn exp_sub;
  MathStorageFn math_storage[kNumMath][kNumStorage + 1];
  FwdFn fwd[kNumKinds][kNumStorage + 1];
  BwdFn bwd[kNumKinds][kNumStorage];
  PreluFwdOneFn prelu_fwd_one[kNumStorage];
  PreluFwdRowFn prelu_fwd_row[kNumStorage];
  PreluBwdOneFn prelu_bwd_one[kNumStorage];
  PreluBwdRowFn prelu_bwd_row[kNumStorage];
  CreluFwdFn crelu_fwd[kNumStorage];
  CreluBwdFn crelu_bwd[kNumStorage];
};

extern const Kernels kAvx512;   // avx512.cpp: AVX-512 F/BW/DQ/VL, 16 lanes, masked tails
extern const Kernels kAvx2;     // avx2.cpp: AVX2 + FMA + F16C, 8 lanes
extern const Kernels kGeneric;  // generic.cpp: plain C++ over act_scalar.hpp

// The math_storage / fwd column for bf16 results from table t: kBF16Native where t is kAvx512
// and the CPU (under TESSERA_MAX_ISA) has AVX512_BF16, else kBF16.
int bf16_column(const Kernels& t);

}  // namespace tessera::dnn::act_kernels
