// Find mode: time every accepting algorithm on the real problem, record every candidate (time,
// spread, refusal reason) in the tuning database, return them ranked.
#include <algorithm>
#include <chrono>
#include <random>

#include "impls.hpp"

namespace tessera::dnn {

Result<std::vector<ConvCandidate>> find_convolution(Handle& h, ConvDir dir, const ConvDesc& c,
                                                    const TensorDesc& x_desc,
                                                    const TensorDesc& w_desc,
                                                    const TensorDesc& y_desc,
                                                    const FindOptions& o) {
  const std::string fn = "find_convolution";
  TESSERA_RETURN_IF_ERROR(detail::begin_call(h, "find_convolution"));
  TESSERA_ASSIGN_OR_RETURN(conv::Problem p, conv::make_problem(fn, dir, c, x_desc, w_desc, y_desc));
  if (o.min_samples < 1 || !(o.min_seconds_per_algo >= 0))
    return invalid_argument(fn + ": min_samples must be >= 1 and min_seconds_per_algo >= 0");
  // Random f32 data over each tensor's span (staging is not part of any algorithm).
  std::mt19937 gen(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto filled = [&](const TensorDesc& d) {
    std::vector<float> v(static_cast<std::size_t>(std::max<std::int64_t>(d.span(), 1)));
    for (auto& e : v) e = dist(gen);
    return v;
  };
  std::vector<float> xb = filled(x_desc), wb = filled(w_desc), yb = filled(y_desc);
  std::vector<float> bias(static_cast<std::size_t>(std::max<std::int64_t>(p.K, 1)));
  p.dtype = DType::kF32;
  switch (dir) {
    case ConvDir::kForward: p.x = xb.data(), p.w = wb.data(), p.y_out = yb.data(); break;
    case ConvDir::kBackwardData: p.w = wb.data(), p.y_in = yb.data(), p.x_out = xb.data(); break;
    case ConvDir::kBackwardWeights:
      p.x = xb.data(), p.y_in = yb.data(), p.w_out = wb.data(), p.dbias = bias.data();
      break;
  }
  const std::string signature = p.signature();
  std::vector<ConvCandidate> out;
  for (const conv::Algo& a : conv::algos_for(dir)) {
    ConvCandidate cand;
    cand.algo = a.algo;
    cand.impl = a.impl.name;
    if (a.algo == ConvAlgo::kReference && !o.include_reference) {
      cand.reason = "reference: not timed (FindOptions::include_reference)";
      out.push_back(cand);
      continue;
    }
    Status s = a.impl.accepts(p);
    if (!s.is_ok()) {
      cand.reason = s.message();
      out.push_back(cand);
      continue;
    }
    TESSERA_RETURN_IF_ERROR(a.impl.run(h, p).with_context(fn + ": warm-up of " + a.impl.name));
    std::vector<double> us;
    double total = 0;
    while (static_cast<int>(us.size()) < o.min_samples || total < o.min_seconds_per_algo) {
      auto t0 = std::chrono::steady_clock::now();
      TESSERA_RETURN_IF_ERROR(a.impl.run(h, p));
      const double sec =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      us.push_back(sec * 1e6);
      total += sec;
      if (us.size() >= 1000) break;
    }
    std::sort(us.begin(), us.end());
    cand.accepted = true;
    cand.median_us = us[us.size() / 2];
    cand.spread_us = us.back() - us.front();
    cand.samples = static_cast<std::int64_t>(us.size());
    TESSERA_VLOG(kTune) << fn << ": " << a.impl.name << " " << cand.median_us << " us";
    out.push_back(cand);
  }
  std::stable_sort(out.begin(), out.end(), [](const ConvCandidate& a, const ConvCandidate& b) {
    if (a.accepted != b.accepted) return a.accepted;
    return a.accepted && a.median_us < b.median_us;
  });
  if (out.empty() || !out.front().accepted)
    return unsupported(fn + ": no algorithm accepted " + signature);
  if (o.record) {
    const std::string path = h.tune_db().empty() ? tune::default_db_path() : h.tune_db();
    TESSERA_ASSIGN_OR_RETURN(tune::TuneDb db, tune::TuneDb::open(path));
    tune::TuneRecord rec;
    rec.key = conv::tune_key(signature);
    rec.solution = out.front().impl;
    rec.params = "{}";
    for (const ConvCandidate& cand : out)
      rec.candidates.push_back({cand.impl, "{}", cand.median_us, cand.spread_us, cand.samples,
                                cand.accepted, cand.accepted ? "" : cand.reason});
    TESSERA_RETURN_IF_ERROR(db.record(rec));
    conv::remember_choice(h, signature, rec.solution);
  }
  return out;
}

}  // namespace tessera::dnn
