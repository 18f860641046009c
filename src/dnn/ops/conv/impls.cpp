// Convolution entry points: argument checks, bf16/f16 staging, the ordered implementation
// lists per direction, immediate-mode choice (tuning database, else the list order) and the
// run. Find mode is in find.cpp.
#include "impls.hpp"

#include <filesystem>
#include <mutex>
#include <unordered_map>

#include "tessera/hal/hal.hpp"
#include "tessera/tune/tune_db.hpp"

namespace tessera::dnn::conv {
namespace {

Status ref_run(Handle&, const Problem& p) { return reference(p); }

// A fast algorithm never sees an empty problem: the reference handles those (it writes
// zeros or bias-only outputs and zero gradients correctly).
template <Status (*A)(const Problem&)>
Status nonempty(const Problem& p) {
  if (p.N == 0 || p.K == 0 || p.Cg == 0 || p.out_spatial() == 0 || p.in_spatial() == 0)
    return detail::refuse("empty problem (a zero dim): left to the reference");
  return A(p);
}

// Forward, best first. The order is the heuristic of immediate mode.
constexpr Algo kForward[] = {
    {ConvAlgo::kDepthwise, {"conv_f32_depthwise", nonempty<depthwise_accepts>, depthwise_fwd}, nullptr,
     depthwise_pack},
    {ConvAlgo::kGemm1x1, {"conv_f32_gemm1x1", nonempty<gemm1x1_fwd_accepts>, gemm1x1_fwd}, nullptr,
     gemm1x1_pack},
    {ConvAlgo::kWinogradF4x3,
     {"conv_f32_winograd_f4x3", nonempty<winograd_f4x3_accepts>, winograd_f4x3_fwd},
     winograd_prefers, winograd_f4x3_pack},
    {ConvAlgo::kWinogradF2x3,
     {"conv_f32_winograd_f2x3", nonempty<winograd_f2x3_accepts>, winograd_f2x3_fwd},
     winograd_prefers, winograd_f2x3_pack},
    {ConvAlgo::kFft, {"conv_f32_fft", nonempty<fft_accepts>, fft_fwd}, fft_prefers, fft_pack},
    {ConvAlgo::kDirect, {"conv_f32_direct_nhwc", nonempty<direct_accepts>, direct_fwd},
     direct_prefers, channels_last_pack},
    {ConvAlgo::kIm2col, {"conv_f32_im2col", nonempty<im2col_accepts>, im2col_fwd}},
    {ConvAlgo::kReference, {"conv_f32_reference", detail::accepts_all<Problem>, ref_run}},
};

// ---- backward data: stride-1 problems become a forward convolution of dy -------------------
// dx = conv(dy, w') with w'[g*Cg + c][k][t'] = w[g*Kg + k][c][taps-1-t'] (flipped, in/out
// channels swapped per group) and padding dil*(k-1) - pad on each side.
Status flip_accepts(const Problem& p) {
  for (int i = 0; i < 3; ++i) {
    if (p.stride[i] != 1) return detail::refuse("stride > 1 (as forward needs stride 1)");
    const std::int64_t ext = p.dil[i] * (p.ker[i] - 1);
    if (p.pad_b[i] > ext || p.pad_e[i] > ext)
      return detail::refuse("padding larger than the dilated kernel extent");
  }
  return Status::ok();
}

// The forward problem of a stride-1 backward-data problem: shapes, strides, layouts,
// padding and data pointers swapped; the weights (not set here) are packed to match the
// activations: [K'][taps][Cg'] for NHWC, else [K'][Cg'][taps].
Problem flipped_shape(const Problem& p) {
  Problem q = p;
  q.dir = ConvDir::kForward;
  q.C = p.K;
  q.K = p.C;
  q.Cg = p.Kg;
  q.Kg = p.Cg;
  q.in = p.out;
  q.out = p.in;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t ext = p.dil[i] * (p.ker[i] - 1);
    q.pad_b[i] = ext - p.pad_b[i];
    q.pad_e[i] = ext - p.pad_e[i];
  }
  q.xs = p.ys;
  q.ys = p.xs;
  q.x_layout = p.y_layout;
  q.y_layout = p.x_layout;
  q.x = p.y_in;
  q.y_out = p.x_out;
  q.y_in = nullptr;
  q.x_out = nullptr;
  q.post = PostOps{};
  const bool inner = p.x_layout == Layout::kNHWC;
  const std::int64_t T = p.ker_spatial(), kw = p.ker[2], khw = p.ker[1] * p.ker[2];
  if (inner) {
    q.ws = {T * q.Cg, 1, khw * q.Cg, kw * q.Cg, q.Cg};
  } else {
    q.ws = {q.Cg * T, T, khw, kw, 1};
  }
  q.w = nullptr;
  q.w_ohwi = inner || T == 1;
  q.w_oihw = !inner || T == 1;
  return q;
}

// flipped_shape plus the flipped weights:
// w'[g*Cg + c][k][taps-1-t] = w[g*Kg + k][c][t].
struct Flipped {
  Problem q;
  std::vector<float> w;
};

Flipped flip(Handle& h, const Problem& p) {
  Flipped f{flipped_shape(p), {}};
  const bool inner = p.x_layout == Layout::kNHWC;
  const std::int64_t T = p.ker_spatial(), Cg = p.Cg, Kg = p.Kg;
  f.w.resize(static_cast<std::size_t>(p.C * Kg * T));
  // A blocked transpose: per (group, 16 channels c, tap), walking k writes 16 output rows a
  // float at a time (their lines stay in L1) and reads 16 neighbouring input floats (OHWI).
  constexpr std::int64_t kCb = 16;
  const std::int64_t nb = (Cg + kCb - 1) / kCb;
  float* out = f.w.data();
  detail::parallel_for(h, 0, p.G * nb, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t g = i / nb, c0 = (i % nb) * kCb, c1 = std::min(Cg, c0 + kCb);
      std::int64_t t = 0;
      for (std::int64_t kd = 0; kd < p.ker[0]; ++kd)
        for (std::int64_t kh = 0; kh < p.ker[1]; ++kh)
          for (std::int64_t kw = 0; kw < p.ker[2]; ++kw, ++t) {
            const std::int64_t ft = T - 1 - t;
            const float* src = p.w + g * Kg * p.ws.n + kd * p.ws.d + kh * p.ws.h + kw * p.ws.w;
            for (std::int64_t kk = 0; kk < Kg; ++kk, src += p.ws.n)
              for (std::int64_t c = c0; c < c1; ++c) {
                const std::int64_t ko = g * Cg + c;
                out[inner ? (ko * T + ft) * Kg + kk : (ko * Kg + kk) * T + ft] = src[c * p.ws.c];
              }
          }
    }
  });
  f.q.w = f.w.data();
  return f;
}

template <std::size_t I>
Status via_forward_accepts(const Problem& p) {
  TESSERA_RETURN_IF_ERROR(flip_accepts(p));
  return kForward[I].impl.accepts(flipped_shape(p));  // accepting depends on shapes only
}
template <std::size_t I>
Status via_forward_run(Handle& h, const Problem& p) {
  Flipped f = flip(h, p);
  return kForward[I].impl.run(h, f.q);
}

// The flipped weights cost one pass over all of them per call (a transposing one, several ns
// per element once they outgrow L2); with few pixels that pass outweighs the convolution
// (512 x 512 x 3 x 3 at 7 x 7: 10 ms of flip for 2.5 ms of Winograd), and GEMM + col2im, which
// reads the weights as they are, wins.
constexpr std::int64_t kFlipMinPixels = 256;
Status prefers_or_ok(const Algo& a, const Problem& p) { return a.prefers ? a.prefers(p) : Status::ok(); }
template <std::size_t I>
Status via_forward_prefers(const Problem& p) {
  if (p.N * p.in_spatial() < kFlipMinPixels && p.Cg * p.Kg > 64)
    return detail::refuse("fewer than " + std::to_string(kFlipMinPixels) +
                          " pixels: flipping the weights would cost more than GEMM + col2im");
  return prefers_or_ok(kForward[I], flipped_shape(p));
}

// Direct backward data without the flip (brgemm_bwd_data_flipped): the batch-reduce tiles
// read the caller's weights flipped in place. Needs whole vectors of every weight row (Cg a
// multiple of 16) and reductions over single taps (not whole kernel rows, which a reversed
// view does not make contiguous). q is flipped_shape(p) (flip_accepts(p) holds: the entry's
// accepts ran first).
bool direct_in_place(const Problem& p, const Problem& q) {
  return p.Cg % 16 == 0 && brgemm_usable(q) && !brgemm_kernel_rows(q) && kForward[5].impl.accepts(q).is_ok();
}

// Strided problems (which have no forward form) run the batch-reduce tiles per phase of dx
// (brgemm_bwd_data_strided).
Status direct_bwd_data_accepts(const Problem& p) {
  if (p.stride[0] != 1 || p.stride[1] != 1 || p.stride[2] != 1) {
    if (brgemm_bwd_data_strided_usable(p)) return Status::ok();
    return detail::refuse("stride > 1 needs AVX-512, channels-last dx and dy, one group, channels a multiple of 16, "
                          "2-D and no dilation");
  }
  return via_forward_accepts<5>(p);
}

Status direct_bwd_data(Handle& h, const Problem& p) {
  if (p.stride[0] != 1 || p.stride[1] != 1 || p.stride[2] != 1) return brgemm_bwd_data_strided(h, p);
  const Problem q = flipped_shape(p);
  if (direct_in_place(p, q)) return brgemm_bwd_data_flipped(h, p, q);
  return via_forward_run<5>(h, p);
}

Status direct_bwd_data_prefers(const Problem& p) {
  if (p.stride[0] != 1 || p.stride[1] != 1 || p.stride[2] != 1) return Status::ok();  // accepted: strided tiles
  const Problem q = flipped_shape(p);
  if (direct_in_place(p, q)) return prefers_or_ok(kForward[5], q);
  return via_forward_prefers<5>(p);
}

constexpr Algo kBackwardData[] = {
    {ConvAlgo::kDepthwise, {"conv_bwd_data_f32_depthwise_flipped", via_forward_accepts<0>, via_forward_run<0>}},
    {ConvAlgo::kGemm1x1, {"conv_bwd_data_f32_gemm1x1", nonempty<gemm1x1_bwd_data_accepts>, gemm1x1_bwd_data}},
    {ConvAlgo::kWinogradF4x3, {"conv_bwd_data_f32_winograd_f4x3_flipped", via_forward_accepts<2>, via_forward_run<2>},
     via_forward_prefers<2>},
    {ConvAlgo::kWinogradF2x3, {"conv_bwd_data_f32_winograd_f2x3_flipped", via_forward_accepts<3>, via_forward_run<3>},
     via_forward_prefers<3>},
    {ConvAlgo::kFft, {"conv_bwd_data_f32_fft_flipped", via_forward_accepts<4>, via_forward_run<4>},
     via_forward_prefers<4>},
    {ConvAlgo::kDirect, {"conv_bwd_data_f32_direct", nonempty<direct_bwd_data_accepts>, direct_bwd_data},
     direct_bwd_data_prefers},
    {ConvAlgo::kIm2col, {"conv_bwd_data_f32_col2im", nonempty<im2col_accepts>, im2col_bwd_data}},
    {ConvAlgo::kReference, {"conv_bwd_data_f32_reference", detail::accepts_all<Problem>, ref_run}},
};
static_assert(kForward[0].algo == ConvAlgo::kDepthwise && kForward[2].algo == ConvAlgo::kWinogradF4x3 &&
              kForward[3].algo == ConvAlgo::kWinogradF2x3 && kForward[4].algo == ConvAlgo::kFft &&
              kForward[5].algo == ConvAlgo::kDirect);

Status direct_wgrad_accepts(const Problem& p) {
  if (!brgemm_wgrad_rows_usable(p))
    return detail::refuse("needs AVX-512, x and dy both NHWC or both NCHW, one group, at most 32 input "
                          "channels, no dilation along w and output channels a multiple of 16");
  return Status::ok();
}
Status direct_wgrad_prefers(const Problem& p) {
  if (!brgemm_wgrad_rows_preferred(p))
    return detail::refuse("more than 16 input channels and stride 1: Winograd or im2col is faster");
  return Status::ok();
}

constexpr Algo kBackwardWeights[] = {
    {ConvAlgo::kDepthwise, {"conv_bwd_weights_f32_depthwise", nonempty<depthwise_accepts>, depthwise_bwd_weights}},
    {ConvAlgo::kGemm1x1, {"conv_bwd_weights_f32_gemm1x1", nonempty<gemm1x1_accepts>, gemm1x1_bwd_weights}},
    {ConvAlgo::kDirect, {"conv_bwd_weights_f32_direct_rows", nonempty<direct_wgrad_accepts>, brgemm_wgrad_rows},
     direct_wgrad_prefers},
    {ConvAlgo::kWinogradF4x3,
     {"conv_bwd_weights_f32_winograd_f4x3", nonempty<winograd_f4x3_bwd_weights_accepts>, winograd_f4x3_bwd_weights},
     winograd_prefers},
    {ConvAlgo::kWinogradF2x3,
     {"conv_bwd_weights_f32_winograd_f2x3", nonempty<winograd_f2x3_bwd_weights_accepts>, winograd_f2x3_bwd_weights},
     winograd_prefers},
    {ConvAlgo::kFft, {"conv_bwd_weights_f32_fft", nonempty<fft_accepts>, fft_bwd_weights}, fft_prefers},
    {ConvAlgo::kIm2col, {"conv_bwd_weights_f32_im2col", nonempty<im2col_accepts>, im2col_bwd_weights}},
    {ConvAlgo::kReference, {"conv_bwd_weights_f32_reference", detail::accepts_all<Problem>, ref_run}},
};

// ---- immediate mode: tuning-database choices, cached per process ------------------------------
std::mutex g_cache_mutex;
std::unordered_map<std::string, std::string> g_cache;  // db path + signature -> impl name ("" = none)

std::string db_path_of(const Handle& h) {
  return h.tune_db().empty() ? tune::default_db_path() : h.tune_db();
}

std::optional<std::string> tuned_impl(Handle& h, const std::string& signature) {
  if (!h.use_tune_db()) return std::nullopt;
  const std::string path = db_path_of(h);
  const std::string key = path + "\n" + signature;
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    auto it = g_cache.find(key);
    if (it != g_cache.end())
      return it->second.empty() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::string found;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {  // never create a database just to find it empty
    auto db = tune::TuneDb::open(path);
    if (db.is_ok()) {
      auto rec = db->lookup(tune_key(signature));
      if (rec.is_ok() && rec->has_value()) found = (*rec)->solution;
    }
  }
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_cache[key] = found;
  return found.empty() ? std::nullopt : std::optional<std::string>(found);
}

}  // namespace

std::optional<double> tuned_time_us(Handle& h, const std::string& signature) {
  if (!h.use_tune_db()) return std::nullopt;
  const std::string path = db_path_of(h);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  auto db = tune::TuneDb::open(path);
  if (!db.is_ok()) return std::nullopt;
  auto rec = db->lookup(tune_key(signature));
  if (!rec.is_ok() || !rec->has_value()) return std::nullopt;
  std::optional<double> best;
  for (const tune::Candidate& c : (*rec)->candidates)
    if (c.accepted && c.solution == (*rec)->solution && (!best || c.median_us < *best)) best = c.median_us;
  return best;
}

std::span<const Algo> algos_for(ConvDir dir) {
  switch (dir) {
    case ConvDir::kForward: return kForward;
    case ConvDir::kBackwardData: return kBackwardData;
    case ConvDir::kBackwardWeights: return kBackwardWeights;
  }
  return kForward;
}

tune::TuneKey tune_key(const std::string& signature) {
  return {"dnn", "conv", signature, hal::cpu_device().fingerprint(), "1", "bitwise"};
}

void remember_choice(const Handle& h, const std::string& signature, const std::string& impl) {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_cache[db_path_of(h) + "\n" + signature] = impl;
}

void forget_choices() {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_cache.clear();
}

Result<const Algo*> select(Handle& h, const Problem& p, ConvAlgo want, std::string* source) {
  const char* op = p.dir == ConvDir::kForward        ? "conv_forward"
                   : p.dir == ConvDir::kBackwardData ? "conv_backward_data"
                                                     : "conv_backward_weights";
  std::span<const Algo> list = algos_for(p.dir);
  if (want != ConvAlgo::kAuto) {
    std::string reasons;
    for (const Algo& a : list) {
      if (a.algo != want) continue;
      Status s = a.impl.accepts(p);
      if (s.is_ok()) {
        TESSERA_VLOG(kDispatch) << op << ": chose " << a.impl.name << " (requested)";
        if (source) *source = "requested";
        return &a;
      }
      reasons += std::string(reasons.empty() ? "" : "; ") + a.impl.name + ": " + s.message();
    }
    if (reasons.empty())
      return unsupported(std::string(op) + ": algorithm " + std::string(algo_name(want)) +
                         " is not available for " + std::string(dir_name(p.dir)));
    return unsupported(std::string(op) + ": algorithm " + std::string(algo_name(want)) +
                       " refused: " + reasons);
  }
  if (auto name = tuned_impl(h, p.signature())) {
    for (const Algo& a : list) {
      if (*name != a.impl.name) continue;
      if (a.impl.accepts(p).is_ok()) {
        TESSERA_VLOG(kDispatch) << op << ": chose " << a.impl.name << " (tuning database)";
        if (source) *source = "tune-db";
        return &a;
      }
    }
    TESSERA_VLOG(kDispatch) << op << ": tuning database names " << *name
                            << ", which is unknown or refuses; using the heuristic";
  }
  for (const Algo& a : list) {
    Status s = a.impl.accepts(p);
    if (s.is_ok() && a.prefers != nullptr) {
      Status pref = a.prefers(p);
      if (!pref.is_ok()) {
        TESSERA_VLOG(kDispatch) << op << ": " << a.impl.name << " accepts but is not preferred: "
                                << pref.message();
        continue;
      }
    }
    if (s.is_ok()) {
      TESSERA_VLOG(kDispatch) << op << ": chose " << a.impl.name;
      if (source) *source = "heuristic";
      return &a;
    }
    TESSERA_VLOG(kDispatch) << op << ": " << a.impl.name << " refused: " << s.message();
  }
  return &list.back();
}

}  // namespace tessera::dnn::conv
