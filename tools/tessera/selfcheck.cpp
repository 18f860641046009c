// `tessera selfcheck`: a short check that this build works on this machine — every ISA path
// of the f16/bf16 conversions against the scalar code, thread-pool determinism, allocator,
// streams and events, npy, the tuning database and gemm on every ISA path. Seconds, not
// minutes.
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <tessera/blas.hpp>
#include <tessera/core/cpu.hpp>
#include <tessera/core/half.hpp>
#include <tessera/core/npy.hpp>
#include <tessera/core/tensor.hpp>
#include <tessera/core/thread_pool.hpp>
#include <tessera/hal/hal.hpp>
#include <tessera/tune/tune_db.hpp>

#include "commands.hpp"

namespace tessera::cli {
namespace {

using Check = Result<std::string> (*)();

// Runs fn once per ISA level the CPU has, with the cap set to it; stops at the first failure.
template <typename Fn>
Status for_each_isa(Fn&& fn) {
  for (Isa isa : supported_isa_levels()) {
    ScopedIsaCap cap(isa);
    TESSERA_RETURN_IF_ERROR(fn(isa));
  }
  return Status::ok();
}

Result<std::string> check_f16() {
  std::vector<std::uint16_t> bits(65536);
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<std::uint16_t>(i);
  std::vector<float> wide(65536);
  std::vector<std::uint16_t> narrow(65536);
  int paths = 0;
  Status s = for_each_isa([&](Isa isa) -> Status {
    ++paths;
    convert_f16_to_f32(reinterpret_cast<const f16*>(bits.data()), wide.data(), bits.size());
    convert_f32_to_f16(wide.data(), reinterpret_cast<f16*>(narrow.data()), wide.size());
    for (std::size_t i = 0; i < bits.size(); ++i) {
      float ref = f16_bits_to_f32(bits[i]);
      if (std::memcmp(&ref, &wide[i], 4) != 0 || narrow[i] != f32_to_f16_bits(ref))
        return internal_error("f16 pattern " + std::to_string(i) + " differs on the " +
                              std::string(isa_name(isa)) + " path");
    }
    return Status::ok();
  });
  if (!s.is_ok()) return s;
  return std::to_string(paths) + " ISA paths x 65536 patterns, both ways";
}

Result<std::string> check_bf16() {
  std::mt19937 rng(7);
  std::vector<float> src(1 << 16);
  for (float& v : src) {
    std::uint32_t b = rng();
    std::memcpy(&v, &b, 4);
  }
  std::vector<std::uint16_t> narrow(src.size());
  std::vector<float> wide(src.size());
  int paths = 0;
  Status s = for_each_isa([&](Isa isa) -> Status {
    ++paths;
    convert_f32_to_bf16(src.data(), reinterpret_cast<bf16*>(narrow.data()), src.size());
    convert_bf16_to_f32(reinterpret_cast<const bf16*>(narrow.data()), wide.data(), src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
      float back = bf16_bits_to_f32(narrow[i]);
      if (narrow[i] != f32_to_bf16_bits(src[i]) || std::memcmp(&back, &wide[i], 4) != 0)
        return internal_error("bf16 value " + std::to_string(i) + " differs on the " +
                              std::string(isa_name(isa)) + " path");
    }
    return Status::ok();
  });
  if (!s.is_ok()) return s;
  return std::to_string(paths) + " ISA paths x 65536 random f32 values";
}

Result<std::string> check_thread_pool() {
  std::vector<float> x(1 << 20);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : x) v = dist(rng);
  auto sum_with = [&](int threads) {
    set_num_threads(threads);
    return parallel_reduce<float>(
        0, static_cast<std::int64_t>(x.size()), 4096, 0.0f,
        [&](std::int64_t b, std::int64_t e) {
          float s = 0;
          for (std::int64_t i = b; i < e; ++i) s += x[static_cast<std::size_t>(i)];
          return s;
        },
        [](float a, float b) { return a + b; });
  };
  const int default_threads = default_num_threads();
  float first = sum_with(1);
  for (int t : {2, 3, default_threads}) {
    float s = sum_with(t);
    if (std::memcmp(&s, &first, 4) != 0) {
      set_num_threads(0);
      return internal_error("parallel_reduce differs between 1 and " + std::to_string(t) +
                            " threads");
    }
  }
  set_num_threads(0);
  return std::string("sum of 2^20 floats bitwise identical for 1, 2, 3 and ") +
         std::to_string(default_threads) + " threads";
}

Result<std::string> check_memory_and_streams() {
  hal::Device& cpu = hal::cpu_device();
  const MemoryStats before = cpu.allocator().stats();
  {
    TESSERA_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros({257, 3}, DType::kF32, cpu.allocator()));
    if (reinterpret_cast<std::uintptr_t>(t.data()) % kDefaultAlignment != 0)
      return internal_error("allocation is not 64-byte aligned");
    TESSERA_ASSIGN_OR_RETURN(auto stream, cpu.create_stream());
    TESSERA_ASSIGN_OR_RETURN(auto start, cpu.create_event());
    TESSERA_ASSIGN_OR_RETURN(auto stop, cpu.create_event());
    TESSERA_RETURN_IF_ERROR(stream->record(*start));
    float* p = t.data<float>();
    TESSERA_RETURN_IF_ERROR(stream->enqueue([p] {
      for (int i = 0; i < 257 * 3; ++i) p[i] = static_cast<float>(i);
      return Status::ok();
    }));
    TESSERA_RETURN_IF_ERROR(stream->record(*stop));
    TESSERA_RETURN_IF_ERROR(stream->synchronize());
    TESSERA_ASSIGN_OR_RETURN(double ms, stop->elapsed_ms_since(*start));
    if (ms < 0 || p[770] != 770.0f) return internal_error("stream work or event timing is wrong");
  }
  if (cpu.allocator().stats().bytes_in_use != before.bytes_in_use)
    return internal_error("allocator bytes in use did not return to the baseline");
  return std::string("aligned allocation, stream order, events, allocator statistics");
}

Result<std::string> check_npy() {
  int n = 0;
  for (DType t : kAllDTypes) {
    TESSERA_ASSIGN_OR_RETURN(Tensor x, Tensor::zeros({2, 3}, t));
    auto* bytes = static_cast<unsigned char*>(x.data());
    for (std::size_t i = 0; i < x.nbytes(); ++i)
      bytes[i] = static_cast<unsigned char>(i * 37 % 251);
    if (t == DType::kBool)
      for (std::size_t i = 0; i < x.nbytes(); ++i) bytes[i] &= 1;
    TESSERA_ASSIGN_OR_RETURN(std::string file, to_npy_bytes(x));
    TESSERA_ASSIGN_OR_RETURN(Tensor y, parse_npy(std::string_view(file)));
    if (!bitwise_equal(x, y))
      return internal_error("npy round trip changed a " + std::string(dtype_name(t)) + " tensor");
    ++n;
  }
  return std::to_string(n) + " dtypes round-tripped";
}

Result<std::string> check_tune_db() {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera-selfcheck-" + std::to_string(::getpid()));
  std::string path = (dir / "tune.sqlite").string();
  Result<std::string> result = [&]() -> Result<std::string> {
    TESSERA_ASSIGN_OR_RETURN(tune::TuneDb db, tune::TuneDb::open(path));
    tune::TuneRecord rec;
    rec.key = {"selfcheck", "noop", "n=1", hal::cpu_device().fingerprint(), "0", "bitwise"};
    rec.candidates = {{"slow", "{}", 2.0, 0.1, 3, true, ""}, {"fast", "{}", 1.0, 0.1, 3, true, ""}};
    TESSERA_RETURN_IF_ERROR(db.record(rec));
    TESSERA_ASSIGN_OR_RETURN(auto found, db.lookup(rec.key));
    if (!found || found->solution != "fast")
      return internal_error("tuning db lookup did not return the winner");
    return std::string("record, lookup and winner selection on a scratch database");
  }();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return result;
}

// gemm on every ISA path (packed engine and small path) against a plain triple loop in double.
Result<std::string> check_gemm() {
  const std::int64_t m = 77, n = 45, k = 130;
  std::mt19937 g(5);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n), c(m * n), want(m * n);
  for (auto& v : a) v = d(g);
  for (auto& v : b) v = d(g);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double acc = 0;
      for (std::int64_t p = 0; p < k; ++p) acc += double(a[i + p * m]) * b[j + p * n];
      want[i + j * m] = static_cast<float>(acc);
    }
  blas::Handle h;
  std::string used;
  Status s = for_each_isa([&](Isa isa) -> Status {
    for (blas::Op ta : {blas::Op::kNoTrans, blas::Op::kTrans}) {
      std::vector<float> at(a.size());
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t p = 0; p < k; ++p) at[p + i * k] = a[i + p * m];
      const bool nt = ta == blas::Op::kNoTrans;
      TESSERA_RETURN_IF_ERROR(blas::gemm<float>(h, ta, blas::Op::kTrans, m, n, k, 1.0f,
                                                nt ? a.data() : at.data(), nt ? m : k, b.data(),
                                                n, 0.0f, c.data(), m));
      for (std::int64_t i = 0; i < m * n; ++i)
        if (std::abs(c[i] - want[i]) > 1e-4f * k)
          return internal_error("sgemm differs from the reference on the " +
                                std::string(isa_name(isa)) + " path at element " +
                                std::to_string(i));
    }
    if (!used.empty()) used += ", ";
    const std::string kernel = blas::describe_gemm("f32", m, n, k);
    used += kernel.substr(0, kernel.find(' '));
    return Status::ok();
  });
  if (!s.is_ok()) return s;
  return "sgemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
         " on " + used;
}

struct NamedCheck {
  const char* name;
  Check fn;
};
constexpr NamedCheck kChecks[] = {
    {"f16 conversions", check_f16},
    {"bf16 conversions", check_bf16},
    {"thread pool", check_thread_pool},
    {"memory, streams, events", check_memory_and_streams},
    {"npy", check_npy},
    {"tuning database", check_tune_db},
    {"blas gemm", check_gemm},
};

}  // namespace

void add_selfcheck_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("selfcheck", "Run a short check that this build works on this machine");
  auto json_out = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json_out, "Print one JSON object instead of text");
  cmd->callback([json_out] {
    nlohmann::json results = nlohmann::json::array();
    int passed = 0;
    for (const NamedCheck& c : kChecks) {
      auto t0 = std::chrono::steady_clock::now();
      Result<std::string> r = c.fn();
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      passed += r.is_ok();
      std::string detail = r.is_ok() ? *r : r.status().to_string();
      results.push_back({{"check", c.name}, {"ok", r.is_ok()}, {"detail", detail}, {"ms", ms}});
      if (!*json_out)
        std::printf("  %-5s %-24s %s (%.0f ms)\n", r.is_ok() ? "ok" : "FAIL", c.name,
                    detail.c_str(), ms);
    }
    const int total = static_cast<int>(std::size(kChecks));
    if (*json_out)
      std::cout << nlohmann::json{{"passed", passed}, {"total", total}, {"checks", results}}.dump(2)
                << "\n";
    else
      std::printf("selfcheck: %d/%d passed\n", passed, total);
    if (passed != total) throw CommandError{"selfcheck failed", 1};
  });
}

}  // namespace tessera::cli
