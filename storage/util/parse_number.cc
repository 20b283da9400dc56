#include "storage/util/parse_number.h"

#include <locale.h>
#include <stdlib.h>

#include <cerrno>
#include <cmath>
#include <string>

namespace momenta {

namespace {

locale_t CLocale() {
  static const locale_t c = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  return c;
}

template <typename F>
bool ParseWholeReal(std::string_view text, F* out, bool* overflow) {
  const std::string s(text);  // NUL-terminated for strtod
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_same_v<F, float>) {
    *out = strtof_l(s.c_str(), &end, CLocale());
  } else {
    *out = strtod_l(s.c_str(), &end, CLocale());
  }
  // ERANGE is set on overflow (result ±HUGE_VAL) and on underflow (result
  // tiny or zero: rounding to nearest is what we want there).
  if (overflow) *overflow = errno == ERANGE && std::isinf(*out);
  return !s.empty() && end == s.c_str() + s.size();
}

}  // namespace

bool ParseReal(std::string_view text, double* out, bool* overflow) { return ParseWholeReal(text, out, overflow); }
bool ParseReal(std::string_view text, float* out, bool* overflow) { return ParseWholeReal(text, out, overflow); }

}  // namespace momenta
