// The one parser of numbers written as text. Every place momenta reads a
// number that a person or another program wrote (CLI values, `update` lines,
// imported text, the root's query lines, item mappings, timestamps, ports,
// the pid in a lock file or a file name) reads it here, so what counts as a
// number has one answer:
//
//   ParseInteger  the whole text is an optional '-' and decimal digits whose
//                 value fits T (std::from_chars, base 10: no '+', no space,
//                 no "0x"). False for anything else, "" included.
//   ParseReal     the whole text is what strtod (strtof for float) reads in
//                 the C locale, whatever the process's locale: an optional
//                 sign, decimal or hexadecimal digits with an optional
//                 exponent, "inf", "infinity", "nan". A value past the type's
//                 range sets *overflow (the result is then ±infinity, as
//                 strtod gives it); an underflow rounds to nearest (tiny or
//                 zero) and is not an error. False for "" and for text strtod
//                 does not read to its end.
#pragma once

#include <charconv>
#include <string_view>
#include <type_traits>

namespace momenta {

template <typename T>
bool ParseInteger(std::string_view text, T* out) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return !text.empty() && ec == std::errc() && ptr == end;
}

bool ParseReal(std::string_view text, double* out, bool* overflow = nullptr);
bool ParseReal(std::string_view text, float* out, bool* overflow = nullptr);

}  // namespace momenta
