// Plan creation: the description is checked field by field, its layouts made explicit, and a
// 1-D engine chosen for every dimension (cost model, tuning database, or measurement).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numbers>

#include "plan_impl.hpp"
#include "tessera/core/cpu.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/thread_pool.hpp"
#include "tessera/hal/hal.hpp"
#include "tessera/tune/tune_db.hpp"

namespace tessera::fft {

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::kC2C: return "c2c";
    case Kind::kR2C: return "r2c";
    case Kind::kC2R: return "c2r";
  }
  return "?";
}
std::string_view precision_name(Precision p) { return p == Precision::kSingle ? "single" : "double"; }

namespace {

using detail::Side;

std::string fmt_list(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::int64_t x : v) {
    if (!s.empty()) s += 'x';
    s += std::to_string(x);
  }
  return s;
}

// Fills in a side's strides and distance (packed row-major over `alloc` when not given) and
// checks the given ones.
Status make_side(const char* name, const Layout& l, const std::vector<std::int64_t>& len,
                 const std::vector<std::int64_t>& alloc, std::int64_t batch, Side& s) {
  const int d = static_cast<int>(len.size());
  s.len = len;
  if (l.strides.empty()) {
    s.stride.assign(static_cast<std::size_t>(d), 1);
    std::int64_t st = 1;
    for (int k = d - 1; k >= 0; --k) s.stride[static_cast<std::size_t>(k)] = st, st *= alloc[static_cast<std::size_t>(k)];
  } else {
    if (static_cast<int>(l.strides.size()) != d)
      return invalid_argument("fft plan: " + std::string(name) + ".strides has " +
                              std::to_string(l.strides.size()) + " entries, rank is " + std::to_string(d));
    for (int k = 0; k < d; ++k)
      if (l.strides[static_cast<std::size_t>(k)] < 1)
        return invalid_argument("fft plan: " + std::string(name) + ".strides[" + std::to_string(k) +
                                "] = " + std::to_string(l.strides[static_cast<std::size_t>(k)]) +
                                ", must be >= 1");
    s.stride = l.strides;
  }
  std::int64_t packed = 1;
  for (int k = 0; k < d; ++k)
    packed = std::max(packed, s.stride[static_cast<std::size_t>(k)] * alloc[static_cast<std::size_t>(k)]);
  if (l.distance < 0)
    return invalid_argument("fft plan: " + std::string(name) + ".distance = " + std::to_string(l.distance) +
                            ", must be >= 0 (0: packed)");
  s.dist = l.distance == 0 ? packed : l.distance;
  s.span = 1 + (batch - 1) * s.dist;
  for (int k = 0; k < d; ++k) s.span += (len[static_cast<std::size_t>(k)] - 1) * s.stride[static_cast<std::size_t>(k)];
  return Status::ok();
}

// A layout whose elements all have distinct addresses (sufficient test: sorted by stride,
// every stride reaches past everything the smaller ones span).
bool injective(const Side& s, std::int64_t batch) {
  std::vector<std::pair<std::int64_t, std::int64_t>> d;  // (stride, length)
  for (std::size_t k = 0; k < s.len.size(); ++k)
    if (s.len[k] > 1) d.push_back({s.stride[k], s.len[k]});
  if (batch > 1) d.push_back({s.dist, batch});
  std::sort(d.begin(), d.end());
  std::int64_t extent = 1;
  for (auto [st, l] : d) {
    if (st < extent) return false;
    extent += st * (l - 1);
  }
  return true;
}

tune::TuneKey tune_key(Precision p, std::int64_t n, int sign) {
  return {"fft", "dft1d",
          std::string(precision_name(p)) + " n=" + std::to_string(n) + " sign=" + std::to_string(sign),
          hal::cpu_device().fingerprint(), "1", "bitwise"};
}

template <typename R>
double time_engine(const detail::Fft1d<R>& f, double seconds) {
  const std::int64_t n = f.n();
  std::vector<detail::cx<R>> x(static_cast<std::size_t>(n)), y(x.size()),
      s(static_cast<std::size_t>(f.scratch_size(1)));
  for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = {R(std::sin(0.1 * i)), R(std::cos(0.3 * i))};
  using clock = std::chrono::steady_clock;
  std::vector<double> t;
  const auto start = clock::now();
  while (t.size() < 5 || (std::chrono::duration<double>(clock::now() - start).count() < seconds && t.size() < 10000)) {
    const auto t0 = clock::now();
    f.run(x.data(), y.data(), s.data(), 1);
    t.push_back(std::chrono::duration<double>(clock::now() - t0).count() * 1e6);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The engine for one dimension: the database's entry when allowed and valid, else the cost
// model's first candidate, or in measure mode the fastest candidate (recorded).
template <typename R>
Result<std::unique_ptr<detail::Fft1d<R>>> choose(const PlanDesc& desc, const PlanOptions& o,
                                                 std::int64_t n, int sign, std::string& source) {
  const Isa isa = cpu_info().isa();
  const std::vector<detail::Factors> cands = detail::candidate_factors(n);
  const tune::TuneKey key = tune_key(desc.precision, n, sign);
  const std::string path = o.tune_db.empty() ? tune::default_db_path() : o.tune_db;
  if (desc.planning == Planning::kMeasure && cands.size() > 1) {
    tune::TuneRecord rec;
    rec.key = key;
    double best = 0;
    std::unique_ptr<detail::Fft1d<R>> win;
    const double per = o.measure_seconds / static_cast<double>(cands.size());
    for (const detail::Factors& f : cands) {
      auto e = detail::Fft1d<R>::create(n, sign, f, isa);
      if (e->factors() != f) continue;  // a codelet this machine cannot run
      const double us = time_engine(*e, per);
      rec.candidates.push_back({f.name(), "{}", us, 0.0, 5, true, ""});
      TESSERA_VLOG(kTune) << "fft " << key.signature << ": " << f.name() << " " << us << " us";
      if (!win || us < best) best = us, win = std::move(e);
    }
    rec.solution = win->factors().name();
    rec.params = "{}";
    source = "measure";
    TESSERA_ASSIGN_OR_RETURN(tune::TuneDb db, tune::TuneDb::open(path));
    TESSERA_RETURN_IF_ERROR(db.record(rec));
    return win;
  }
  if (o.use_tune_db && cands.size() > 1) {
    auto db = tune::TuneDb::open(path);
    if (db.is_ok()) {
      auto rec = db->lookup(key);
      detail::Factors f;
      if (rec.is_ok() && rec->has_value() && detail::parse_factors((*rec)->solution, n, f)) {
        source = "tune-db";
        return detail::Fft1d<R>::create(n, sign, f, isa);
      }
    }
  }
  source = "estimate";
  for (const detail::Factors& f : cands)  // the first this machine runs as named
    if (auto e = detail::Fft1d<R>::create(n, sign, f, isa); e->factors() == f) return e;
  return detail::Fft1d<R>::create(n, sign, cands.front(), isa);
}

template <typename R>
Status build(Plan::Impl& p, const PlanOptions& o) {
  auto E = std::make_unique<detail::Engines<R>>();
  const int d = p.rank;
  for (int j = 0; j < d; ++j) {
    std::int64_t n = p.clen[static_cast<std::size_t>(j)];
    const bool real_dim = p.desc.kind != Kind::kC2C && j == d - 1;
    if (real_dim) {
      const std::int64_t L = p.desc.lengths.back();
      n = L % 2 == 0 ? L / 2 : L;
      if (L % 2 == 0) {
        E->real_tw.resize(static_cast<std::size_t>(L / 2 + 1));
        for (std::int64_t k = 0; k <= L / 2; ++k) {
          const long double a = 2.0L * std::numbers::pi_v<long double> * static_cast<long double>(k) /
                                static_cast<long double>(L);
          E->real_tw[static_cast<std::size_t>(k)] = {static_cast<R>(std::cos(a)), static_cast<R>(-std::sin(a))};
        }
      }
    }
    std::string source;
    TESSERA_ASSIGN_OR_RETURN(auto e, choose<R>(p.desc, o, n, p.sign, source));
    E->dims.push_back(std::move(e));
    p.sources.push_back(source);
  }
  if constexpr (std::is_same_v<R, float>)
    p.f32 = std::move(E);
  else
    p.f64 = std::move(E);
  return Status::ok();
}

}  // namespace

Result<Plan> Plan::create(const PlanDesc& desc, const PlanOptions& options) {
  auto p = std::make_shared<Impl>();
  p->desc = desc;
  const int d = static_cast<int>(desc.lengths.size());
  if (d < 1 || d > 3)
    return invalid_argument("fft plan: rank (lengths.size()) = " + std::to_string(d) + ", must be 1, 2 or 3");
  for (int k = 0; k < d; ++k)
    if (desc.lengths[static_cast<std::size_t>(k)] < 1)
      return invalid_argument("fft plan: lengths[" + std::to_string(k) + "] = " +
                              std::to_string(desc.lengths[static_cast<std::size_t>(k)]) + ", must be >= 1");
  if (desc.batch < 1) return invalid_argument("fft plan: batch = " + std::to_string(desc.batch) + ", must be >= 1");
  if (!std::isfinite(desc.scale)) return invalid_argument("fft plan: scale must be finite");
  if (desc.kind != Kind::kC2C && desc.kind != Kind::kR2C && desc.kind != Kind::kC2R)
    return invalid_argument("fft plan: unknown kind");
  if (desc.precision != Precision::kSingle && desc.precision != Precision::kDouble)
    return invalid_argument("fft plan: unknown precision");
  if (desc.direction != Direction::kForward && desc.direction != Direction::kInverse)
    return invalid_argument("fft plan: unknown direction");
  if (desc.kind == Kind::kR2C && desc.direction != Direction::kForward)
    return invalid_argument("fft plan: r2c is a forward transform (direction must be kForward)");
  if (desc.kind == Kind::kC2R && desc.direction != Direction::kInverse)
    return invalid_argument("fft plan: c2r is an inverse transform (direction must be kInverse)");
  if (options.threads < 0) return invalid_argument("fft plan: options.threads must be >= 0");
  std::int64_t total = desc.batch;
  for (std::int64_t l : desc.lengths) {
    if (total > (std::int64_t{1} << 40) / l) return invalid_argument("fft plan: " + fmt_list(desc.lengths) + " x batch " + std::to_string(desc.batch) + " is too large");
    total *= l;
  }
  p->rank = d;
  p->sign = static_cast<int>(desc.direction);
  p->threads = options.threads;
  p->clen = desc.lengths;
  const bool real = desc.kind != Kind::kC2C;
  if (real) p->clen.back() = desc.lengths.back() / 2 + 1;
  // Element counts and allocation extents of each side; in-place real sides are padded.
  std::vector<std::int64_t> padded = p->clen;
  if (real) padded.back() = 2 * p->clen.back();
  const std::vector<std::int64_t>& rlen = desc.lengths;
  const std::vector<std::int64_t>& ralloc = desc.in_place ? padded : desc.lengths;
  switch (desc.kind) {
    case Kind::kC2C:
      TESSERA_RETURN_IF_ERROR(make_side("in", desc.in, p->clen, p->clen, desc.batch, p->in));
      TESSERA_RETURN_IF_ERROR(make_side("out", desc.out, p->clen, p->clen, desc.batch, p->out));
      break;
    case Kind::kR2C:
      TESSERA_RETURN_IF_ERROR(make_side("in", desc.in, rlen, ralloc, desc.batch, p->in));
      TESSERA_RETURN_IF_ERROR(make_side("out", desc.out, p->clen, p->clen, desc.batch, p->out));
      p->in.real = true;
      break;
    case Kind::kC2R:
      TESSERA_RETURN_IF_ERROR(make_side("in", desc.in, p->clen, p->clen, desc.batch, p->in));
      TESSERA_RETURN_IF_ERROR(make_side("out", desc.out, rlen, ralloc, desc.batch, p->out));
      p->out.real = true;
      break;
  }
  if (!injective(p->out, desc.batch))
    return invalid_argument("fft plan: out layout (strides " + fmt_list(p->out.stride) + ", distance " +
                            std::to_string(p->out.dist) + ") maps two output elements to one place");
  if (desc.in_place) {
    // The same memory on both sides: complex offsets equal, or real offsets twice the
    // complex ones (each complex row over the real row it replaces).
    const Side& r = desc.kind == Kind::kC2R ? p->out : p->in;
    const Side& c = desc.kind == Kind::kC2R ? p->in : p->out;
    bool ok = true;
    if (!real) {
      ok = p->in.stride == p->out.stride && p->in.dist == p->out.dist;
    } else {
      ok = r.stride.back() == 1 && c.stride.back() == 1 && r.dist == 2 * c.dist;
      for (int k = 0; k + 1 < d; ++k) ok = ok && r.stride[static_cast<std::size_t>(k)] == 2 * c.stride[static_cast<std::size_t>(k)];
    }
    if (!ok)
      return invalid_argument(
          std::string("fft plan: in-place ") + std::string(kind_name(desc.kind)) +
          (real ? " needs unit last strides and real strides and distance twice the complex ones"
                : " needs equal in and out layouts") +
          " (in strides " + fmt_list(p->in.stride) + " distance " + std::to_string(p->in.dist) + ", out strides " +
          fmt_list(p->out.stride) + " distance " + std::to_string(p->out.dist) + ")");
  }
  if (desc.precision == Precision::kSingle) {
    TESSERA_RETURN_IF_ERROR(build<float>(*p, options));
  } else {
    TESSERA_RETURN_IF_ERROR(build<double>(*p, options));
  }
  return Plan(std::shared_ptr<const Impl>(std::move(p)));
}

Status Plan::execute(const void* in, void* out) const {
  if (!impl_) return invalid_argument("fft execute: empty plan");
  const Impl& p = *impl_;
  if (in == nullptr || out == nullptr) return invalid_argument(std::string("fft execute: ") + (in ? "out" : "in") + " is null");
  const std::size_t rsz = p.desc.precision == Precision::kSingle ? sizeof(float) : sizeof(double);
  const std::size_t ib = static_cast<std::size_t>(p.in.span) * (p.in.real ? rsz : 2 * rsz);
  const std::size_t ob = static_cast<std::size_t>(p.out.span) * (p.out.real ? rsz : 2 * rsz);
  const auto* a = static_cast<const unsigned char*>(in);
  const auto* b = static_cast<const unsigned char*>(out);
  if (p.desc.in_place) {
    if (in != out) return invalid_argument("fft execute: the plan is in-place, but in != out");
  } else if (a < b + ob && b < a + ib) {
    return invalid_argument("fft execute: the plan is out-of-place, but in and out overlap");
  }
  // Packed layouts replay exactly; the bench has no stride options.
  TESSERA_VLOG(kBench) << "tessera bench fft --lengths " << fmt_list(p.desc.lengths)
                       << (p.desc.kind == Kind::kC2C ? "" : " --real") << " --dir "
                       << (p.desc.direction == Direction::kForward ? "fwd" : "inv") << " --batch "
                       << p.desc.batch << " --precision " << precision_name(p.desc.precision)
                       << (p.desc.in_place ? " --in-place" : "") << " --planning "
                       << (p.desc.planning == Planning::kEstimate ? "estimate" : "measure")
                       << " --threads " << (p.threads > 0 ? p.threads : thread_pool().num_threads());
  return p.desc.precision == Precision::kSingle ? p.run<float>(in, out) : p.run<double>(in, out);
}

const PlanDesc& Plan::desc() const { return impl_->desc; }
std::int64_t Plan::input_span() const { return impl_->in.span; }
std::int64_t Plan::output_span() const { return impl_->out.span; }

std::string Plan::describe() const {
  const Impl& p = *impl_;
  std::string s = std::string(kind_name(p.desc.kind)) + " " + std::string(precision_name(p.desc.precision)) +
                  " " + fmt_list(p.desc.lengths) + (p.desc.batch > 1 ? " batch " + std::to_string(p.desc.batch) : "") +
                  (p.desc.in_place ? " in-place" : "") + ":";
  for (int j = 0; j < p.rank; ++j) {
    std::string name, isa;
    std::int64_t n;
    if (p.f32) {
      const auto& e = *p.f32->dims[static_cast<std::size_t>(j)];
      name = e.factors().name(), isa = e.isa(), n = e.n();
    } else {
      const auto& e = *p.f64->dims[static_cast<std::size_t>(j)];
      name = e.factors().name(), isa = e.isa(), n = e.n();
    }
    const bool half = p.desc.kind != Kind::kC2C && j == p.rank - 1 && p.desc.lengths.back() % 2 == 0;
    if (j) s += ";";
    s += " dim " + std::to_string(j) + " " +
         (half ? "real via complex n=" : "n=") + std::to_string(n) + " " +
         (name.rfind("bluestein", 0) == 0 ? name : "stockham " + name) + " " + isa + " (" +
         p.sources[static_cast<std::size_t>(j)] + ")";
  }
  return s;
}

Plan::Plan(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;
Plan::Plan(const Plan&) = default;
Plan& Plan::operator=(const Plan&) = default;
Plan::~Plan() = default;

void reference_dft(const std::complex<long double>* in, std::int64_t in_stride,
                   std::complex<long double>* out, std::int64_t out_stride, std::int64_t n, int sign) {
  std::vector<std::complex<long double>> tw(static_cast<std::size_t>(n)), res(static_cast<std::size_t>(n));
  for (std::int64_t t = 0; t < n; ++t) {
    const long double a = 2.0L * std::numbers::pi_v<long double> * static_cast<long double>(t) / static_cast<long double>(n);
    tw[static_cast<std::size_t>(t)] = {std::cos(a), sign * std::sin(a)};
  }
  for (std::int64_t k = 0; k < n; ++k) {
    std::complex<long double> acc = 0;
    for (std::int64_t j = 0; j < n; ++j) acc += in[j * in_stride] * tw[static_cast<std::size_t>((j * k) % n)];
    res[static_cast<std::size_t>(k)] = acc;
  }
  for (std::int64_t k = 0; k < n; ++k) out[k * out_stride] = res[static_cast<std::size_t>(k)];
}

}  // namespace tessera::fft
