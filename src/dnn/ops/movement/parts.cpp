// Concat and split of packed row-major tensors along an axis with short rows (an NHWC channel
// concat): one walk over the outer rows instead of one move per part. Each row of the whole is
// written (concat) or read (split) once, in order, by one thread, in one parallel region for
// all the parts; past the last-level cache the rows of a unit are put together in L1 and
// streamed out whole.
#include <algorithm>
#include <cstring>
#include <memory>

#include "../../common.hpp"
#include "../activation/dense.hpp"
#include "../eltwise/kernels.hpp"
#include "move.hpp"

namespace tessera::dnn::detail {
namespace {

namespace ek = elt_kernels;
using i64 = std::int64_t;

template <const ek::Kernels* kE>
Status parts_run(Handle& h, const Parts& p) {
  const auto n = p.widths.size();
  const i64 e = p.elem;
  std::vector<i64> at(n + 1, 0);  // each part's first element in the whole's row
  for (std::size_t i = 0; i < n; ++i) at[i + 1] = at[i] + p.widths[i];
  const i64 row = at[n] * e, per = std::max<i64>(1, kPartsRowBytes / row);  // rows per unit
  const bool stream = stream_output(p.outer * row);
  std::size_t lead = 0;  // the first part with elements (the split's prefetches ride on it)
  while (lead + 1 < n && p.widths[lead] == 0) ++lead;
  parallel_for(h, 0, (p.outer + per - 1) / per, 1, [&](i64 u0, i64 u1) {
    std::unique_ptr<unsigned char[]> stage;
    if (stream) stage = std::make_unique_for_overwrite<unsigned char[]>(static_cast<std::size_t>(per * row));
    for (i64 u = u0; u < u1; ++u) {
      const i64 r0 = u * per, k = std::min(per, p.outer - r0);
      if (p.join) {
        unsigned char* y = p.dst[0] + r0 * row;
        unsigned char* d = stream ? stage.get() : y;
        for (i64 r = 0; r < k; ++r)
          for (std::size_t i = 0; i < n; ++i) {
            const i64 w = p.widths[i] * e;
            if (w == 0) continue;  // (an empty part's pointer may be null)
            const unsigned char* x = p.src[i] + (r0 + r) * w;
            if (stream)  // the part's row a unit ahead (as below)
              for (i64 b = 0; b < w; b += 64) __builtin_prefetch(x + per * w + b, 0, 3);
            std::memcpy(d + r * row + at[i] * e, x, static_cast<std::size_t>(w));
          }
        if (stream) kE->stream(y, stage.get(), k * row);
      } else {
        const unsigned char* x = p.src[0] + r0 * row;
        for (std::size_t i = 0; i < n; ++i) {
          const i64 w = p.widths[i] * e;
          if (w == 0) continue;
          unsigned char* y = p.dst[i] + r0 * w;
          unsigned char* d = stream ? stage.get() : y;
          for (i64 r = 0; r < k; ++r) {
            if (i == lead && stream)  // the same row a unit ahead (the hardware prefetchers fall behind the streamed stores)
              for (i64 b = 0; b < row; b += 64) __builtin_prefetch(x + (r + per) * row + b, 0, 3);
            std::memcpy(d + r * w, x + r * row + at[i] * e, static_cast<std::size_t>(w));
          }
          if (stream) kE->stream(y, stage.get(), k * w);
        }
      }
    }
    if (stream) kE->fence();
  });
  return Status::ok();
}

template <Isa kNeeds>
Status parts_accepts(const Parts&) {
  return isa_allows(kNeeds);
}

constexpr Impl<Parts> kPartsImpls[] = {
    {"parts_avx512", &parts_accepts<Isa::kAvx512>, &parts_run<&ek::kAvx512>},
    {"parts_avx2", &parts_accepts<Isa::kAvx2>, &parts_run<&ek::kAvx2>},
    {"parts_generic", &parts_accepts<Isa::kGeneric>, &parts_run<&ek::kGeneric>},
};

}  // namespace

Status run_parts(Handle& h, const Parts& p) { return run_first_accepting(h, "parts", kPartsImpls, p); }

}  // namespace tessera::dnn::detail
