// `tessera tune blas`: measured search of the GEMM blocking sizes for this machine.
#include <algorithm>
#include <chrono>
#include <random>
#include <set>

#include "blocking_key.hpp"
#include "engine.hpp"
#include "tessera/tune/tune_db.hpp"

namespace tessera::blas {
namespace {

struct Problem {
  std::string dtype;
  const char* kernel;
  int mr, nr, ku;
  std::size_t a_bytes, b_bytes;
  std::function<Status(Handle&)> run;  // one gemm of the tuning size
};

template <typename T>
std::vector<T> filled(std::int64_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(static_cast<int>(g() % 7) - 3);
  return v;
}

// Builds the timing closure and describes the kernel the dtype uses now.
Result<Problem> make_problem(const std::string& dtype, std::int64_t s) {
  const std::int64_t n2 = s * s;
  if (dtype == "f32" || dtype == "f64") {
    const bool f = dtype == "f32";
    const auto* u32 = engine::select_ukr(kernels::kGemmF32);
    const auto* u64 = engine::select_ukr(kernels::kGemmF64);
    Problem p{dtype, f ? u32->name : u64->name, f ? u32->mr : u64->mr, f ? u32->nr : u64->nr, 1,
              f ? 4u : 8u, f ? 4u : 8u, nullptr};
    if (f) {
      auto a = std::make_shared<std::vector<float>>(filled<float>(n2, 1));
      auto c = std::make_shared<std::vector<float>>(static_cast<std::size_t>(n2));
      p.run = [a, c, s](Handle& h) {
        return gemm<float>(h, Op::kNoTrans, Op::kNoTrans, s, s, s, 1.0f, a->data(), s, a->data(),
                           s, 0.0f, c->data(), s);
      };
    } else {
      auto a = std::make_shared<std::vector<double>>(filled<double>(n2, 1));
      auto c = std::make_shared<std::vector<double>>(static_cast<std::size_t>(n2));
      p.run = [a, c, s](Handle& h) {
        return gemm<double>(h, Op::kNoTrans, Op::kNoTrans, s, s, s, 1.0, a->data(), s, a->data(),
                            s, 0.0, c->data(), s);
      };
    }
    return p;
  }
  if (dtype == "bf16") {
    const auto* u = engine::select_ukr(kernels::kGemmBf16);
    if (u == nullptr) return unsupported("tune blas: bf16 runs on the f32 kernel on this CPU (no AVX512-BF16); tune f32 instead");
    auto a = std::make_shared<std::vector<bf16>>(static_cast<std::size_t>(n2), bf16(0.5f));
    auto c = std::make_shared<std::vector<float>>(static_cast<std::size_t>(n2));
    return Problem{dtype, u->name, u->mr, u->nr, u->ku, 2, 2, [a, c, s](Handle& h) {
                     return gemm_bf16(h, Op::kNoTrans, Op::kNoTrans, s, s, s, 1.0f, a->data(), s,
                                      a->data(), s, 0.0f, c->data(), s);
                   }};
  }
  if (dtype == "int8") {
    const auto* u = engine::select_ukr(kernels::kGemmU8S8);
    auto a = std::make_shared<std::vector<std::uint8_t>>(filled<std::uint8_t>(n2, 2));
    auto b = std::make_shared<std::vector<std::int8_t>>(filled<std::int8_t>(n2, 3));
    auto c = std::make_shared<std::vector<std::int32_t>>(static_cast<std::size_t>(n2));
    return Problem{dtype, u->name, u->mr, u->nr, u->ku, 1, 1, [a, b, c, s](Handle& h) {
                     return gemm_u8s8s32(h, Op::kNoTrans, Op::kNoTrans, s, s, s, 1, a->data(), s,
                                         b->data(), s, 0, c->data(), s);
                   }};
  }
  return invalid_argument("tune blas: unknown dtype '" + dtype + "' (f32, f64, bf16, int8)");
}

struct Timing {
  double median_us = 0, spread_us = 0;
  std::int64_t samples = 0;
};

Result<Timing> time_candidate(Handle& h, const Problem& p, const engine::Blocking& b,
                              double min_seconds) {
  engine::set_blocking_override(&b);
  std::vector<double> us;
  double total = 0;
  Status s = p.run(h);  // warm-up (also faults in the packing buffers)
  while (s.is_ok() && (us.size() < 3 || total < min_seconds)) {
    auto t0 = std::chrono::steady_clock::now();
    s = p.run(h);
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    us.push_back(sec * 1e6);
    total += sec;
  }
  engine::set_blocking_override(nullptr);
  if (!s.is_ok()) return s;
  std::sort(us.begin(), us.end());
  return Timing{us[us.size() / 2], us.back() - us.front(), static_cast<std::int64_t>(us.size())};
}

}  // namespace

Result<std::vector<GemmTuneResult>> tune_gemm_blocking(Handle& h, const GemmTuneOptions& o) {
  if (o.size < 64 || o.size > 8192)
    return invalid_argument("tune blas: size = " + std::to_string(o.size) +
                            " must be in [64, 8192]");
  std::vector<Problem> problems;
  for (const std::string& d : o.dtypes) {
    auto p = make_problem(d, o.size);
    if (!p.is_ok()) return p.status();
    problems.push_back(std::move(p).value());
  }
  std::optional<tune::TuneDb> db;
  if (o.write) {
    auto opened = tune::TuneDb::open(o.db_path.empty() ? tune::default_db_path() : o.db_path);
    if (!opened.is_ok()) return opened.status();
    db.emplace(std::move(opened).value());
  }
  const double flops = 2.0 * static_cast<double>(o.size) * o.size * o.size;
  std::vector<GemmTuneResult> results;
  for (const Problem& p : problems) {
    const engine::Blocking start =
        engine::heuristic_blocking(p.mr, p.nr, p.ku, p.a_bytes, p.b_bytes);
    std::vector<tune::Candidate> candidates;
    std::set<std::string> seen;
    engine::Blocking best = start;
    double best_us = 0;
    auto consider = [&](engine::Blocking b) -> Status {
      b.mc = std::max<std::int64_t>(p.mr, b.mc / p.mr * p.mr);
      b.nc = std::max<std::int64_t>(p.nr, b.nc / p.nr * p.nr);
      b.kc = std::max<std::int64_t>(16, b.kc / 16 * 16);
      const std::string key = engine::blocking_params(b);
      if (!seen.insert(key).second) return Status::ok();
      TESSERA_ASSIGN_OR_RETURN(Timing t, time_candidate(h, p, b, o.min_seconds_per_candidate));
      candidates.push_back(
          {p.kernel, engine::blocking_json(b), t.median_us, t.spread_us, t.samples, false, ""});
      TESSERA_VLOG(kTune) << "tune blas: " << p.kernel << " " << key << " " << t.median_us << " us";
      if (best_us == 0 || t.median_us < best_us) best_us = t.median_us, best = b;
      return Status::ok();
    };
    TESSERA_RETURN_IF_ERROR(consider(start));
    const double start_us = best_us;
    for (std::int64_t kc : {128, 192, 256, 320, 384, 448, 512, 640}) {
      engine::Blocking b = best;
      b.kc = kc;
      TESSERA_RETURN_IF_ERROR(consider(b));
    }
    const engine::Blocking after_kc = best;
    for (double f : {0.5, 0.75, 1.5, 2.0}) {
      engine::Blocking b = after_kc;
      b.mc = static_cast<std::int64_t>(static_cast<double>(after_kc.mc) * f);
      TESSERA_RETURN_IF_ERROR(consider(b));
    }
    const engine::Blocking after_mc = best;
    for (std::int64_t nc : {1024, 2048, 4096}) {
      engine::Blocking b = after_mc;
      b.nc = nc;
      TESSERA_RETURN_IF_ERROR(consider(b));
    }
    const std::string chosen = engine::blocking_params(best);
    const std::string chosen_json = engine::blocking_json(best);
    for (auto& c : candidates) {
      c.accepted = c.params == chosen_json;
      c.reason = c.accepted ? "fastest" : "slower";
    }
    if (db) {
      tune::TuneRecord rec;
      rec.key = engine::blocking_key(p.kernel);
      rec.solution = p.kernel;
      rec.params = chosen_json;
      rec.candidates = candidates;
      TESSERA_RETURN_IF_ERROR(db->record(rec));
    }
    results.push_back({p.dtype, p.kernel, engine::blocking_params(start), chosen,
                       flops / start_us * 1e-3, flops / best_us * 1e-3,
                       static_cast<int>(candidates.size())});
  }
  engine::forget_cached_blocking();
  return results;
}

}  // namespace tessera::blas
