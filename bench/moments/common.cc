#include "bench/moments/common.h"

#include <cstdio>
#include <cstdlib>

namespace momenta::moments_driver {

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void Die(const std::string& message) {
  std::fprintf(stderr, "moments_driver: %s\n", message.c_str());
  std::exit(1);
}

void Must(const Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

}  // namespace momenta::moments_driver
