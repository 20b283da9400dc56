#include "bench/moments/checks.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "bench/moments/format.h"

namespace momenta::moments_driver {
namespace {

// |got - want| relative to |want|, and relative to the bound's scale.
struct Err {
  long double rel = 0, scaled = 0;
};
Err ErrorOf(long double got, long double want, long double scale) {
  const long double d = std::fabs(got - want);
  return {want != 0 ? d / std::fabs(want) : d, scale > 0 ? d / scale : d};
}

}  // namespace

void CheckAnswer(DriverContext& ctx, const char* label, const Range& r, const Answer& m, bool extremes,
                 const Exact& e) {
  bool ok = true;
  std::string line;
  if (extremes) {
    ok = m.min == e.min && m.max == e.max;
    line = Fmt("min %.17g", m.min) + Fmt(" (exact %.17g),", e.min) + Fmt(" max %.17g", m.max) +
           Fmt(" (exact %.17g)", e.max);
  } else {
    const long double n = static_cast<long double>(e.n);
    const Err es = ErrorOf(m.sum, e.sum, e.abs), em = ErrorOf(m.mean, e.mean(), e.abs / n),
              ev = ErrorOf(m.var, e.var(), e.sq / n);
    for (const Err& x : {es, em, ev}) ok &= x.rel <= 1e-9L || x.scaled <= 1e-9L;
    line = Fmt("sum %.12e", static_cast<double>(m.sum)) + Fmt(" rel.err %.1e", static_cast<double>(es.rel)) +
           Fmt(", mean rel.err %.1e", static_cast<double>(em.rel)) +
           Fmt(", var rel.err %.1e", static_cast<double>(ev.rel));
  }
  std::printf("check %-22s [%" PRIu64 ", %" PRIu64 ") %s: %s  %s\n", label, r.p, r.q,
              r.kind == 0 ? "data ends" : "anywhere ", ok ? "OK" : "WRONG", line.c_str());
  ctx.correct &= ok;
}

void CompareRuns(DriverContext& ctx, const QueryRun& a, const QueryRun& b, bool extremes) {
  long double worst = 0;
  size_t n = std::min(a.samples.size(), b.samples.size()), bad = 0;
  for (size_t k = 0; k < n; ++k) {
    const Answer &x = a.samples[k].answer, &y = b.samples[k].answer;
    if (extremes) {
      bad += x.min != y.min || x.max != y.max;
      continue;
    }
    for (auto [u, v] : {std::pair{x.sum, y.sum}, {x.mean, y.mean}, {x.var, y.var}}) {
      const long double d = std::fabs(u - v) / std::max(std::fabs(v), 1e-300L);
      worst = std::max(worst, d);
      bad += d > 2e-9L;
    }
  }
  std::printf("check %s vs %s on %zu ranges: %s (largest relative difference %.1e)\n", a.label.c_str(), b.label.c_str(),
              n, bad == 0 ? "OK" : "DIFFER", static_cast<double>(worst));
  ctx.correct &= bad == 0;
}

}  // namespace momenta::moments_driver
