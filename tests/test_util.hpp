// Helpers shared by the GoogleTest suites.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include <tessera/core/cpu.hpp>
#include <tessera/core/status.hpp>

namespace tessera::testing {

// Runs fn(isa) once for every ISA level this CPU supports, with TESSERA_MAX_ISA's cap set to
// it, so one machine exercises every kernel path. Restores the cap afterwards.
template <typename Fn>
void for_each_isa(Fn&& fn) {
  for (Isa isa : supported_isa_levels()) {
    ScopedIsaCap cap(isa);
    SCOPED_TRACE(std::string("TESSERA_MAX_ISA=") + std::string(isa_name(isa)));
    fn(isa);
  }
}

// Unwraps a Result in a test, failing with its message.
template <typename T>
T value_or_fail(Result<T> r) {
  if (!r.is_ok()) throw Error(r.status());
  return std::move(r).value();
}

// A fresh directory under the test temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "tessera-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed in " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// n floats uniform in [-1, 1) from a fixed seed.
inline std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

}  // namespace tessera::testing
