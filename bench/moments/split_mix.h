// splitmix64: the driver's fast generator for the array's data and the
// build profile's warm leaves (std::mt19937_64 draws ranges and updates).
#pragma once

#include <cstdint>

namespace momenta::moments_driver {

struct SplitMix {
  uint64_t s;  // the state; the seed is its first value
  uint64_t operator()() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Unit() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }  // [0, 1)
};

}  // namespace momenta::moments_driver
