// splitmix64's output function (Steele, Lea, Flood, OOPSLA 2014): the train layer's seeded
// streams (sample orders, initial weights) mix their counters with it, so the same seed gives
// the same bits on every machine and standard library.
#pragma once

#include <cstdint>

namespace tessera::train::detail {

inline std::uint64_t splitmix64_mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace tessera::train::detail
