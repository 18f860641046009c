// What a Plan holds: the validated description with its layouts made explicit, one 1-D
// engine per dimension, and the tables of the real transforms.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine.hpp"
#include "tessera/fft.hpp"

namespace tessera::fft {

namespace detail {

// One side's layout in elements of its own type, made explicit.
struct Side {
  std::vector<std::int64_t> len;     // per dimension (the side's element counts)
  std::vector<std::int64_t> stride;  // per dimension
  std::int64_t dist = 0;
  std::int64_t span = 0;  // elements from the first to the last element + 1
  bool real = false;
};

template <typename R>
struct Engines {
  // dims[j]: the complex transform along dimension j. For r2c/c2r the last one has length
  // n / 2 when n is even (the real transform as a half-length complex one), n when odd.
  std::vector<std::unique_ptr<Fft1d<R>>> dims;
  std::vector<cx<R>> real_tw;  // even real n: exp(-2 pi i k / n), k <= n / 2
};

}  // namespace detail

struct Plan::Impl {
  PlanDesc desc;
  int rank = 0;
  int sign = -1;
  int threads = 0;
  detail::Side in, out;
  std::vector<std::int64_t> clen;  // complex-side lengths of the transform
  std::unique_ptr<detail::Engines<float>> f32;
  std::unique_ptr<detail::Engines<double>> f64;
  std::vector<std::string> sources;  // per dimension: "estimate", "measure", "tune-db"

  template <typename R>
  detail::Engines<R>& engines() const {
    if constexpr (std::is_same_v<R, float>)
      return *f32;
    else
      return *f64;
  }
  template <typename R>
  Status run(const void* in, void* out) const;
};

}  // namespace tessera::fft
