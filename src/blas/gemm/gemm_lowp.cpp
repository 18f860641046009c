// Low-precision gemm: bf16 x bf16 -> f32 and f16 x f16 -> f32 (f32 accumulation), and
// u8 x s8 -> s32. bf16 runs natively on AVX512-BF16 (vdpbf16ps on k-pairs); elsewhere, and
// for f16 (no FP16 arithmetic on this hardware generation), the inputs are widened to f32
// while packing and the f32 kernels run: packing is O(mk + kn), the kernel O(mnk).
#include "../common.hpp"
#include "engine.hpp"
#include "blocking_key.hpp"
#include "gemm_common.hpp"

namespace tessera::blas {
namespace {

template <typename U>
engine::Blocking blocking(const U& u, std::size_t a_bytes, std::size_t b_bytes) {
  return engine::blocking_for(u.name, u.mr, u.nr, u.ku, a_bytes, b_bytes);
}

// op(X) as a view: element (i, p) of op(A) or (p, j) of op(B) for a column-major matrix.
template <typename TSrc, typename F>
auto op_view(const TSrc* x, Op op, std::int64_t ld, F f) {
  const bool n = op == Op::kNoTrans;
  return engine::make_view(x, n ? 1 : ld, n ? ld : 1, f);
}

template <typename TA, typename TB, typename TC, typename VA, typename VB>
Status run_views(Handle& h, const kernels::GemmUkr<TA, TB, TC>& u, const engine::Blocking& blk,
                 std::int64_t m, std::int64_t n, std::int64_t k, const VA& av, const VB& bv,
                 TC alpha, TC beta, TC* c, std::int64_t ldc) {
  return engine::run(
      h, u, blk, m, n, k,
      [&](TA* dst, std::int64_t i0, std::int64_t p0, std::int64_t rows, std::int64_t kc) {
        engine::pack_block_a(dst, u.mr, u.ku, av, i0, p0, rows, kc);
      },
      [&](TB* dst, std::int64_t p0, std::int64_t j0, std::int64_t kc, std::int64_t cols) {
        engine::pack_block_b(dst, u.nr, u.ku, bv, p0, j0, kc, cols);
      },
      alpha, beta, c, ldc);
}

const kernels::GemmUkr<float, float, float>& f32_ukr() {
  const auto* u = engine::select_ukr(kernels::kGemmF32);
  TESSERA_ASSERT(u != nullptr, "the generic gemm kernel is always usable");
  return *u;
}

template <typename H>
Status half_gemm(Handle& h, const char* routine, const char* dtype, Op ta, Op tb,
                 std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const H* a,
                 std::int64_t lda, const H* b, std::int64_t ldb, float beta, float* c,
                 std::int64_t ldc) {
  const std::string fn = routine;
  TESSERA_RETURN_IF_ERROR(detail::check_gemm_args(fn, ta, tb, m, n, k, a, lda, b, ldb, c, ldc));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  TESSERA_VLOG(kBench) << detail::gemm_bench_line(dtype, ta, tb, m, n, k, lda, ldb, ldc,
                                                  detail::fmt_scalar(alpha),
                                                  detail::fmt_scalar(beta), 0,
                                                  detail::max_threads(h));
  return detail::guard_oom(fn, [&]() -> Status {
    if constexpr (std::is_same_v<H, bf16>) {
      if (const auto* u = engine::select_ukr(kernels::kGemmBf16)) {
        auto bits = [](bf16 v) { return v.bits; };
        return run_views(h, *u, blocking(*u, 2, 2), m, n, k, op_view(a, ta, lda, bits),
                         op_view(b, tb, ldb, bits), alpha, beta, c, ldc);
      }
    }
    const auto& u = f32_ukr();
    auto widen = [](H v) { return static_cast<float>(v); };
    return run_views(h, u, blocking(u, 4, 4), m, n, k, op_view(a, ta, lda, widen),
                     op_view(b, tb, ldb, widen), alpha, beta, c, ldc);
  });
}

}  // namespace

Status gemm_bf16(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                 float alpha, const bf16* a, std::int64_t lda, const bf16* b, std::int64_t ldb,
                 float beta, float* c, std::int64_t ldc) {
  return half_gemm(h, "gemm_bf16", "bf16", ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

Status gemm_f16(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                float alpha, const f16* a, std::int64_t lda, const f16* b, std::int64_t ldb,
                float beta, float* c, std::int64_t ldc) {
  return half_gemm(h, "gemm_f16", "f16", ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

Status gemm_u8s8s32(Handle& h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                    std::int32_t alpha, const std::uint8_t* a, std::int64_t lda,
                    const std::int8_t* b, std::int64_t ldb, std::int32_t beta, std::int32_t* c,
                    std::int64_t ldc) {
  const std::string fn = "gemm_u8s8s32";
  TESSERA_RETURN_IF_ERROR(detail::check_gemm_args(fn, ta, tb, m, n, k, a, lda, b, ldb, c, ldc));
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h));
  TESSERA_VLOG(kBench) << detail::gemm_bench_line("int8", ta, tb, m, n, k, lda, ldb, ldc,
                                                  std::to_string(alpha), std::to_string(beta), 0,
                                                  detail::max_threads(h));
  const auto* u = engine::select_ukr(kernels::kGemmU8S8);
  TESSERA_ASSERT(u != nullptr, "the generic int8 kernel is always usable");
  auto id_a = [](std::uint8_t v) { return v; };
  auto id_b = [](std::int8_t v) { return v; };
  return detail::guard_oom(fn, [&] {
    return run_views(h, *u, blocking(*u, 1, 1), m, n, k, op_view(a, ta, lda, id_a),
                     op_view(b, tb, ldb, id_b), alpha, beta, c, ldc);
  });
}

std::string describe_lowp_gemm(const std::string& dtype) {
  auto show = [](const auto& u, engine::Blocking b) {
    return std::string(u.name) + " " + engine::blocking_params(b) + " (" + b.source + ")";
  };
  if (dtype == "bf16") {
    if (const auto* u = engine::select_ukr(kernels::kGemmBf16)) return show(*u, blocking(*u, 2, 2));
    return show(f32_ukr(), blocking(f32_ukr(), 4, 4)) + " (bf16 widened while packing)";
  }
  if (dtype == "f16") return show(f32_ukr(), blocking(f32_ukr(), 4, 4)) + " (f16 widened while packing)";
  if (dtype == "int8") {
    const auto* u = engine::select_ukr(kernels::kGemmU8S8);
    return show(*u, blocking(*u, 1, 1));
  }
  return "unknown dtype '" + dtype + "'";
}

}  // namespace tessera::blas
