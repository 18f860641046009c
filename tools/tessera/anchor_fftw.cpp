#include "anchor_fftw.hpp"

#include <cstddef>
#include <mutex>

#include <dlfcn.h>

namespace tessera::cli::fftw {
namespace {

// FFTW's ABI, as its manual documents it (fftw3.h is not needed): a plan is a pointer to an
// opaque struct; fftw_iodim64 is {n, is, os} in ptrdiff_t; complex arrays are interleaved
// (re, im) pairs. The single- and double-precision libraries have the same entry points
// with the prefixes fftwf_ and fftw_; their array arguments are passed here as void*.
struct IoDim64 {
  std::ptrdiff_t n, is, os;
};
using PlanHandle = void*;
using PlanDftFn = PlanHandle (*)(int rank, const IoDim64* dims, int howmany_rank,
                                 const IoDim64* howmany_dims, void* in, void* out, int sign,
                                 unsigned flags);
using PlanRealFn = PlanHandle (*)(int rank, const IoDim64* dims, int howmany_rank,
                                  const IoDim64* howmany_dims, void* in, void* out, unsigned flags);
using PlanFn = void (*)(PlanHandle);
using InitThreadsFn = int (*)();
using PlanWithThreadsFn = void (*)(int);

constexpr unsigned kMeasure = 0;
constexpr unsigned kPatient = 1u << 5;
constexpr unsigned kEstimate = 1u << 6;

struct Api {
  PlanDftFn plan_dft = nullptr;
  PlanRealFn plan_r2c = nullptr, plan_c2r = nullptr;
  PlanFn execute = nullptr, destroy_plan = nullptr;
  PlanWithThreadsFn plan_with_nthreads = nullptr;  // null without the threads library
  Info info;
  std::string error;  // empty when opened
};

// FFTW's planner is not thread-safe: plans are made and destroyed under this lock.
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

constexpr const char* kDirs[] = {"", "/usr/lib/x86_64-linux-gnu/", "/usr/lib64/", "/usr/local/lib/",
                                 "/usr/lib/"};

std::string directory_of(const void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string file = info.dli_fname;
  const std::size_t slash = file.rfind('/');
  return slash == std::string::npos ? "" : file.substr(0, slash + 1);
}

// Opens `lib` (libfftw3f.so.3 or libfftw3.so.3) and its threads library; symbols are
// `prefix` + name. The handles stay open for the life of the process.
Api load(const std::string& prefix, const std::string& lib, const std::string& threads_lib,
         const char* package) {
  Api a;
  const std::string marker = prefix + "plan_guru64_dft";
  void* h = nullptr;
  for (const char* dir : kDirs) {
    const std::string path = dir + lib;
    h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) continue;
    if (dlsym(h, marker.c_str()) != nullptr) {
      a.info.path = path;
      break;
    }
    dlclose(h);
    h = nullptr;
  }
  if (h == nullptr) {
    a.error =
        "FFTW is not installed (no " + lib + " with " + marker + " found; Debian: " + package + ")";
    return a;
  }
  auto resolve = [&](const char* name) -> void* {
    void* p = dlsym(h, (prefix + name).c_str());
    if (p == nullptr && a.error.empty()) a.error = a.info.path + " has no " + prefix + name;
    return p;
  };
  a.plan_dft = reinterpret_cast<PlanDftFn>(resolve("plan_guru64_dft"));
  a.plan_r2c = reinterpret_cast<PlanRealFn>(resolve("plan_guru64_dft_r2c"));
  a.plan_c2r = reinterpret_cast<PlanRealFn>(resolve("plan_guru64_dft_c2r"));
  a.execute = reinterpret_cast<PlanFn>(resolve("execute"));
  a.destroy_plan = reinterpret_cast<PlanFn>(resolve("destroy_plan"));
  if (!a.error.empty()) return a;
  // fftw_version is a character array, not a function.
  if (const void* v = dlsym(h, (prefix + "version").c_str()))
    a.info.version = static_cast<const char*>(v);
  const std::string dir = directory_of(reinterpret_cast<const void*>(a.plan_dft));
  if (!dir.empty()) a.info.path = dir + lib;

  // The threads library must be the companion of the library just opened: its planner
  // hooks go into that library's planner.
  for (const std::string& path : {dir + threads_lib, threads_lib}) {
    void* t = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (t == nullptr) continue;
    auto init = reinterpret_cast<InitThreadsFn>(dlsym(t, (prefix + "init_threads").c_str()));
    auto with =
        reinterpret_cast<PlanWithThreadsFn>(dlsym(t, (prefix + "plan_with_nthreads").c_str()));
    const bool same = dlsym(t, marker.c_str()) == reinterpret_cast<void*>(a.plan_dft);
    if (init != nullptr && with != nullptr && same && init() != 0) {
      a.plan_with_nthreads = with;
      a.info.threads_path = path;
      break;
    }
    dlclose(t);
  }
  return a;
}

const Api& api(fft::Precision p) {
  if (p == fft::Precision::kSingle) {
    static const Api single =
        load("fftwf_", "libfftw3f.so.3", "libfftw3f_threads.so.3", "libfftw3-single3");
    return single;
  }
  static const Api dbl =
      load("fftw_", "libfftw3.so.3", "libfftw3_threads.so.3", "libfftw3-double3");
  return dbl;
}

class FftwPlan final : public Plan {
 public:
  FftwPlan(const Api& a, PlanHandle p) : api_(a), plan_(p) {}
  ~FftwPlan() override {
    std::lock_guard<std::mutex> lock(planner_mutex());
    api_.destroy_plan(plan_);
  }
  FftwPlan(const FftwPlan&) = delete;
  FftwPlan& operator=(const FftwPlan&) = delete;
  void execute() const override { api_.execute(plan_); }

 private:
  const Api& api_;
  PlanHandle plan_;
};

std::string dims_text(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::int64_t e : v) {
    if (!s.empty()) s += 'x';
    s += std::to_string(e);
  }
  return s;
}

// Fills in the strides and distance of one side; `row` is the elements of the fastest
// dimension's rows (padded on the real side of an in-place real transform).
Status resolve(Side& s, const fft::Layout& given, std::int64_t row, const char* name) {
  const std::size_t rank = s.lengths.size();
  std::int64_t packed = row;
  std::vector<std::int64_t> strides(rank, 1);
  for (std::size_t i = rank - 1; i > 0; --i) {
    strides[i - 1] = packed;
    packed *= s.lengths[i - 1];
  }
  if (given.strides.empty()) {
    s.strides = strides;
  } else {
    if (given.strides.size() != rank)
      return invalid_argument(std::string(name) + ".strides has " +
                              std::to_string(given.strides.size()) + " entries for rank " +
                              std::to_string(rank));
    for (std::size_t i = 0; i < rank; ++i)
      if (given.strides[i] < 0)
        return invalid_argument(std::string(name) + ".strides[" + std::to_string(i) +
                                "] = " + std::to_string(given.strides[i]) + " must be >= 0");
    s.strides = given.strides;
  }
  if (given.distance < 0)
    return invalid_argument(std::string(name) + ".distance = " + std::to_string(given.distance) +
                            " must be >= 0");
  s.distance = given.distance == 0 ? packed : given.distance;
  return Status::ok();
}

}  // namespace

std::int64_t Side::span(std::int64_t batch) const {
  std::int64_t last = (batch - 1) * distance;
  for (std::size_t i = 0; i < lengths.size(); ++i) last += (lengths[i] - 1) * strides[i];
  return last + 1;
}

std::int64_t Side::count() const {
  std::int64_t n = 1;
  for (std::int64_t l : lengths) n *= l;
  return n;
}

Result<Layouts> layouts(const fft::PlanDesc& d) {
  const std::size_t rank = d.lengths.size();
  if (rank < 1 || rank > 3)
    return invalid_argument("rank = " + std::to_string(rank) + " must be 1, 2 or 3");
  for (std::size_t i = 0; i < rank; ++i)
    if (d.lengths[i] < 1)
      return invalid_argument("lengths[" + std::to_string(i) +
                              "] = " + std::to_string(d.lengths[i]) + " must be >= 1");
  if (d.batch < 1) return invalid_argument("batch = " + std::to_string(d.batch) + " must be >= 1");
  const std::int64_t n = d.lengths.back(), half = n / 2 + 1;
  Side real{false, d.lengths, {}, 0};
  Side cplx{true, d.lengths, {}, 0};
  if (d.kind != fft::Kind::kC2C) cplx.lengths.back() = half;
  Layouts l;
  l.in = d.kind == fft::Kind::kR2C ? real : cplx;
  l.out = d.kind == fft::Kind::kC2R ? real : cplx;
  // In-place real transforms use FFTW's padded rows on the real side.
  const bool padded = d.in_place && d.kind != fft::Kind::kC2C;
  const std::int64_t in_row = !l.in.complex && padded ? 2 * half : l.in.lengths.back();
  const std::int64_t out_row = !l.out.complex && padded ? 2 * half : l.out.lengths.back();
  TESSERA_RETURN_IF_ERROR(resolve(l.in, d.in, in_row, "in"));
  TESSERA_RETURN_IF_ERROR(resolve(l.out, d.out, out_row, "out"));
  return l;
}

std::string_view rigor_name(Rigor r) {
  switch (r) {
    case Rigor::kEstimate:
      return "FFTW_ESTIMATE";
    case Rigor::kMeasure:
      return "FFTW_MEASURE";
    case Rigor::kPatient:
      return "FFTW_PATIENT";
  }
  return "?";
}

const Info* open(fft::Precision precision, std::string* why) {
  const Api& a = api(precision);
  if (!a.error.empty()) {
    if (why != nullptr) *why = a.error;
    return nullptr;
  }
  return &a.info;
}

Result<std::unique_ptr<Plan>> make_plan(const fft::PlanDesc& d, void* in, void* out, int threads,
                                        Rigor rigor) {
  std::string why;
  if (open(d.precision, &why) == nullptr) return unsupported(why);
  const Api& a = api(d.precision);
  if (d.scale != 1.0) return unsupported("FFTW does not scale its output (scale must be 1)");
  if (threads < 1)
    return invalid_argument("threads = " + std::to_string(threads) + " must be >= 1");
  if (threads > 1 && a.plan_with_nthreads == nullptr)
    return unsupported("FFTW's threads library was not found beside " + a.info.path +
                       ": FFTW runs 1 thread only");
  if (in == nullptr || out == nullptr) return invalid_argument("FFTW plan: null array");
  if (d.in_place != (in == out))
    return invalid_argument(d.in_place ? "an in-place plan takes in == out"
                                       : "an out-of-place plan takes in != out");
  TESSERA_ASSIGN_OR_RETURN(Layouts l, layouts(d));
  const int rank = static_cast<int>(d.lengths.size());
  IoDim64 dims[3];
  for (int i = 0; i < rank; ++i) {
    const auto u = static_cast<std::size_t>(i);
    dims[i] = {d.lengths[u], l.in.strides[u], l.out.strides[u]};
  }
  const IoDim64 howmany{d.batch, l.in.distance, l.out.distance};
  const unsigned flags = rigor == Rigor::kEstimate  ? kEstimate
                         : rigor == Rigor::kPatient ? kPatient
                                                    : kMeasure;
  PlanHandle p = nullptr;
  {
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (a.plan_with_nthreads != nullptr) a.plan_with_nthreads(threads);
    switch (d.kind) {
      case fft::Kind::kC2C:
        p = a.plan_dft(rank, dims, 1, &howmany, in, out, static_cast<int>(d.direction), flags);
        break;
      case fft::Kind::kR2C:
        p = a.plan_r2c(rank, dims, 1, &howmany, in, out, flags);
        break;
      case fft::Kind::kC2R:
        p = a.plan_c2r(rank, dims, 1, &howmany, in, out, flags);
        break;
    }
  }
  if (p == nullptr)
    return unsupported("FFTW cannot plan " + std::string(fft::kind_name(d.kind)) + " " +
                       dims_text(d.lengths) + " batch " + std::to_string(d.batch) +
                       " with these strides");
  return std::unique_ptr<Plan>(std::make_unique<FftwPlan>(a, p));
}

}  // namespace tessera::cli::fftw
