#include "tools/cli_parse.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "storage/log/log_format.h"
#include "storage/util/parse_number.h"
#include "stream/window/window_spec.h"

namespace momenta::cli {

namespace {

// "'text'" (built by appending: GCC 12 warns falsely, -Wrestrict, on
// operator+ chains once these are inlined).
std::string Quoted(std::string_view text) {
  std::string s;
  s.reserve(text.size() + 2);
  s += '\'';
  s.append(text);
  s += '\'';
  return s;
}

Result<uint64_t> ParseUnsigned(std::string_view text, std::string_view what) {
  uint64_t v = 0;
  if (!ParseInteger(text, &v)) return Status::InvalidArgument(what, Quoted(text) + " is not a non-negative integer");
  return v;
}

constexpr uint64_t kCountLimit = uint64_t{1} << 63;

}  // namespace

Result<uint64_t> ParseCount(std::string_view text, std::string_view what) {
  if (text.empty()) return Status::InvalidArgument(what, "'' is not a count (e.g. 1000, 2^20, 3*2^20)");
  auto too_large = [&] { return Status::InvalidArgument(what, Quoted(text) + " is larger than 2^63"); };
  uint64_t product = 1;
  size_t start = 0;
  while (true) {
    size_t star = text.find('*', start);
    std::string_view term = text.substr(start, star == std::string_view::npos ? text.npos : star - start);
    uint64_t value;
    if (size_t caret = term.find('^'); caret != std::string_view::npos) {
      auto base = ParseUnsigned(term.substr(0, caret), what);
      auto exp = ParseUnsigned(term.substr(caret + 1), what);
      if (!base.ok() || !exp.ok())
        return Status::InvalidArgument(what, Quoted(text) + " is not a count (e.g. 1000, 2^20, 3*2^20)");
      // 0^N and 1^N end at once; a larger base overflows within 64 steps.
      value = *exp == 0 ? 1 : (*base <= 1 ? *base : 1);
      for (uint64_t k = 0; *base > 1 && k < *exp; ++k)
        if (__builtin_mul_overflow(value, *base, &value) || value > kCountLimit) return too_large();
    } else {
      auto v = ParseUnsigned(term, what);
      if (!v.ok()) return Status::InvalidArgument(what, Quoted(text) + " is not a count (e.g. 1000, 2^20, 3*2^20)");
      value = *v;
      if (value > kCountLimit) return too_large();
    }
    if (__builtin_mul_overflow(product, value, &product) || product > kCountLimit) return too_large();
    if (star == std::string_view::npos) break;
    start = star + 1;
  }
  return product;
}

Result<int64_t> ParseIndex(std::string_view text, std::string_view what) {
  const bool negative = !text.empty() && text.front() == '-';
  auto magnitude = ParseCount(negative ? text.substr(1) : text, what);
  if (!magnitude.ok() || (!negative && *magnitude == kCountLimit))
    return Status::InvalidArgument(what, Quoted(text) + " is not an index (e.g. 7, -1, 2^30, -2^10)");
  // -2^63 is the one magnitude that fits only as a negative number.
  return negative ? static_cast<int64_t>(0 - *magnitude) : static_cast<int64_t>(*magnitude);
}

Result<double> ParseFinite(std::string_view text, std::string_view what) {
  double v = 0;
  // A value past the range of a double reads as infinity: not finite either.
  if (!ParseReal(text, &v) || !std::isfinite(v))
    return Status::InvalidArgument(what, Quoted(text) + " is not a finite number");
  return v;
}

Result<IndexRange> ParseRange(std::string_view text, uint64_t length, std::string_view what) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos)
    return Status::InvalidArgument(what, Quoted(text).append(" is not of the form P:Q"));
  const int64_t n = static_cast<int64_t>(length);
  auto side = [&](std::string_view s, int64_t dflt) -> Result<int64_t> {
    if (s.empty()) return dflt;
    return ParseIndex(s, what);
  };
  auto p = side(text.substr(0, colon), 0);
  auto q = side(text.substr(colon + 1), n);
  if (!p.ok()) return p.status();
  if (!q.ok()) return q.status();
  // Negative sides count from the end; -2^63 + n cannot overflow.
  int64_t b = *p < 0 ? *p + n : *p;
  int64_t e = *q < 0 ? *q + n : *q;
  const std::string problem = RangeProblem(b, e, length);
  if (!problem.empty())
    return Status::OutOfRange(what, Quoted(text)
                                        .append(" is not a range of the array (length ")
                                        .append(std::to_string(length))
                                        .append("): ")
                                        .append(problem));
  return IndexRange{static_cast<uint64_t>(b), static_cast<uint64_t>(e)};
}

Result<uint64_t> ParseBytes(const std::string& text, std::string_view what) {
  if (text.empty()) return uint64_t{0};
  uint64_t unit = 1;
  std::string body = text;
  switch (text.back()) {
    case 'K':
    case 'k':
      unit = 1 << 10;
      break;
    case 'M':
    case 'm':
      unit = 1 << 20;
      break;
    case 'G':
    case 'g':
      unit = 1 << 30;
      break;
    default:
      break;
  }
  if (unit != 1) body.pop_back();
  auto n = ParseCount(body, what);
  uint64_t bytes = 0;
  if (!n.ok() || __builtin_mul_overflow(*n, unit, &bytes) || bytes > (uint64_t{1} << 63))
    return Status::InvalidArgument(what, "'" + text + "' is not a size of at most 2^63 (e.g. 1M, 65536, 2^20)");
  return bytes;
}

Result<int64_t> ParseDuration(const std::string& text, const char* flag) {
  // N, then a unit: the digits end where the unit's letters start.
  const size_t digits_end = std::min(text.find_first_not_of("-0123456789"), text.size());
  const std::string_view unit = std::string_view(text).substr(digits_end);
  int64_t v = 0;
  const bool number = ParseInteger(std::string_view(text).substr(0, digits_end), &v);
  int64_t scale = 0;
  if (unit.empty() || unit == "ms")
    scale = 1;
  else if (unit == "s")
    scale = 1000;
  else if (unit == "m")
    scale = 60 * 1000;
  else if (unit == "h")
    scale = 3600 * 1000;
  else if (unit == "d")
    scale = 24 * 3600 * 1000;
  if (!number || scale == 0 || v < 0 || v > kMaxTime / scale)
    return Status::InvalidArgument(flag, "'" + text + "' is not a duration (N, or N with ms, s, m, h, d)");
  return v * scale;
}

Result<int64_t> ParseTimeFlag(const std::string& text) {
  if (text.empty()) return kLogTimeNow;
  int64_t t = 0;
  if (!ParseInteger(text, &t) || t == kLogTimeNow)
    return Status::InvalidArgument("--time", "'" + text + "' is not a time in ms");
  return t;
}

Result<int64_t> ParseTimeMs(const std::string& text, int64_t dflt, const char* flag) {
  if (text.empty()) return dflt;
  int64_t v = 0;
  if (!ParseInteger(text, &v)) return Status::InvalidArgument(flag, "'" + text + "' is not a time in ms");
  return v;
}

Result<std::vector<double>> ParseFractions(const std::string& text) {
  std::vector<double> phis;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    double phi = 0;
    if (!ParseReal(part, &phi) || !(phi >= 0 && phi <= 1))
      return Status::InvalidArgument("--quantiles", "'" + part + "' is not a fraction in [0, 1]");
    phis.push_back(phi);
  }
  return phis;
}

}  // namespace momenta::cli
