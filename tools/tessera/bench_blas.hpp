// `tessera bench blas`: one case (an op with its arguments), the plan that runs it on tessera
// and on each anchor, and the table of ops. bench_blas.cpp parses and reports;
// bench_blas_level3.cpp and bench_blas_level12.cpp build the plans (bench_blas_plan.hpp).
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tessera/blas.hpp>

#include "bench_common.hpp"

namespace tessera::cli::blas_bench {

enum class DType : int { kF32, kF64, kC64, kC128, kBf16, kF16, kInt8 };
inline constexpr DType kAllDTypes[] = {DType::kF32,  DType::kF64, DType::kC64, DType::kC128,
                                       DType::kBf16, DType::kF16, DType::kInt8};
std::string_view dtype_name(DType d);
std::optional<DType> parse_dtype(std::string_view name);
constexpr unsigned bit(DType d) {
  return 1u << static_cast<int>(d);
}
inline constexpr unsigned kStandardTypes =
    bit(DType::kF32) | bit(DType::kF64) | bit(DType::kC64) | bit(DType::kC128);
inline constexpr unsigned kComplexTypes = bit(DType::kC64) | bit(DType::kC128);
inline constexpr unsigned kHalfTypes = bit(DType::kBf16) | bit(DType::kF16);

// One benchmark case: the arguments of one library call; which ones an op reads is
// OpInfo::uses. Leading dimensions are 0 until resolved (then tight unless given).
struct BlasCase {
  std::string op;
  DType dtype = DType::kF32;
  std::int64_t m = 0, n = 0, k = 0;
  blas::Op transa = blas::Op::kNoTrans, transb = blas::Op::kNoTrans;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t incx = 1, incy = 1;
  std::complex<double> alpha{1, 0}, beta{0, 0};
  blas::Uplo uplo = blas::Uplo::kUpper;
  blas::Side side = blas::Side::kLeft;
  blas::Diag diag = blas::Diag::kNonUnit;
  std::int64_t batch = -1;  // < 0: a single call; >= 0: the strided-batched variant
};

// The outputs of a call: restored from a pristine copy before each library runs, and
// compared with the copy of tessera's result.
class Outputs {
 public:
  using ErrorFn = double (*)(const void* ref, const void* got, std::size_t count);
  // Registers `count` elements at `data` (already filled with the initial values).
  template <typename T>
  void add(T* data, std::size_t count);
  void restore();         // initial values back
  void save_reference();  // keep the current values as the reference
  // Largest |got - ref| over the largest |ref|, over every output; +inf on a NaN mismatch.
  double error_vs_reference() const;
  const void* reference(std::size_t slot) const { return slots_[slot].reference.data(); }

 private:
  struct Slot {
    void* data;
    std::size_t count, bytes;
    AlignedBuffer pristine, reference;
    ErrorFn error;
  };
  std::vector<Slot> slots_;
};

// Largest |got - ref| / largest |ref| for arrays of T.
template <typename T>
double relative_error(const void* ref, const void* got, std::size_t count);

struct AnchorRun {
  std::string name;
  std::function<void()> call;  // empty when the library cannot run this case
  std::string missing;         // why not, e.g. "no cblas_sbgemm"
};

// How to run one case everywhere. Built by OpInfo::make; buffers live in `storage`.
struct Plan {
  double work = 0;                 // floating-point (or integer) operations per call, or bytes
  bool bandwidth = false;          // work is bytes moved: report GB/s
  std::string peak_kind;           // the Peak field to compare with: "f32", "f64", "bf16", "int8"
  double tolerance = 0;            // allowed Outputs::error_vs_reference between libraries
  bool restore_each_call = false;  // repeating the call would change what it computes
  std::function<Status()> tessera;
  std::vector<AnchorRun> anchors;
  Outputs outputs;
  // Low-precision gemm only: tessera's f32 gemm on the same values, and the error of
  // tessera's result (outputs.reference(0)) against it.
  std::function<Status()> baseline;
  Outputs baseline_outputs;
  std::function<double()> baseline_error;

  template <typename T>
  T* alloc(std::size_t count, const std::string& what) {
    storage.emplace_back(count * sizeof(T), what);
    return static_cast<T*>(storage.back().data());
  }
  std::vector<AlignedBuffer> storage;
};

// The options an op reads.
enum Uses : unsigned {
  kUseM = 1u << 0,
  kUseN = 1u << 1,
  kUseK = 1u << 2,
  kUseTrans2 = 1u << 3,  // --trans with two letters (gemm)
  kUseTrans1 = 1u << 4,  // --trans with one letter
  kUseLda = 1u << 5,
  kUseLdb = 1u << 6,
  kUseLdc = 1u << 7,
  kUseIncx = 1u << 8,
  kUseIncy = 1u << 9,
  kUseAlpha = 1u << 10,
  kUseBeta = 1u << 11,
  kUseUplo = 1u << 12,
  kUseSide = 1u << 13,
  kUseDiag = 1u << 14,
  kUseBatch = 1u << 15,
  kSquare = 1u << 16,  // the matrix is n x n: --m is accepted as a synonym of --n
};

struct OpInfo {
  const char* name;
  int level;  // 1, 2 or 3: level 1 and 2 report GB/s, level 3 GFLOPS
  unsigned uses;
  unsigned dtypes;  // bit(DType) of the types tessera has for it
  const char* summary;
  void (*make)(const BlasCase& c, blas::Handle& h, const std::vector<Anchor>& anchors, Plan& p);
};
// Every op `tessera bench blas` knows, in help order.
const std::vector<OpInfo>& blas_ops();
const OpInfo* find_op(std::string_view name);

}  // namespace tessera::cli::blas_bench
