// What every part of the moment-buffer driver uses: byte units, the clock,
// and the two ways it gives up (Die, and Must on a momenta Status/Result).
// The driver is a program, not a library: a failure prints one line on
// stderr and exits 1.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "storage/util/status.h"

namespace momenta::moments_driver {

constexpr uint64_t kKiB = 1024, kMiB = kKiB << 10, kGiB = kMiB << 10;
constexpr uint64_t kNpyHeaderBytes = 4096;  // the array's elements start here

using Clock = std::chrono::steady_clock;
// Seconds from t to now.
double Since(Clock::time_point t);

// Prints "moments_driver: <message>" on stderr and exits 1.
[[noreturn]] void Die(const std::string& message);

// The value of r, or Die("<what>: <the error>").
template <class T>
T Must(Result<T> r, const char* what) {
  if (!r.ok()) Die(std::string(what) + ": " + r.status().ToString());
  return std::move(r).value();
}
void Must(const Status& s, const char* what);

}  // namespace momenta::moments_driver
