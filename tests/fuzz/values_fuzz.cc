// Fuzz target `values`: the CLI's parsers of option and argument text
// (tools/cli_parse.h), of `momenta update`'s lines (tools/update_parse.h),
// and the stream parsers the CLI hands its options and input lines to
// (ItemMapping::Parse, ParseTimedItem, ParseHostPort).
//
// Input: one parameter byte, then the text every parser is given (its first
// 256 bytes). The byte
// picks the dtype and array length ParseUpdates checks against (and text or
// binary updates). Properties checked on every input:
//   - counts and indices: an accepted count equals the exact value of its
//     terms (computed here in 128 bits) and is at most 2^63; a count whose
//     terms and running products all stay within 2^63 is accepted; an index
//     is ParseCount of its magnitude with the sign; plain decimal text that
//     strtoll takes is accepted as strtoll's value;
//   - ParseFinite accepts only what strtod reads whole, as strtod's value,
//     finite; plain decimal text that strtod reads without ERANGE is accepted;
//   - ranges: accepted ranges lie within [0, length] with begin <= end, and
//     match a reference evaluation of P:Q; malformed text is InvalidArgument,
//     well-formed text outside the array OutOfRange;
//   - byte sizes are ParseCount times the unit, at most 2^63; durations are
//     N times their unit, in [0, kMaxTime]; times in ms are strtoll's value;
//     fractions lie in [0, 1];
//   - updates: every accepted update has an index below the length and a
//     value that fits the dtype; text updates number the non-blank lines;
//   - a timed item's timestamp is within kMaxTime; a host:port has a host
//     and a port <= 65535; an item mapping's ToString parses back to itself.
// Seeds (tests/data/fuzz/values/): one small file per form the help texts
// show, written by hand: the parameter byte '0' then the text.
#include <algorithm>
#include <cerrno>
#include <clocale>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "storage/npy/dtype.h"
#include "stream/net/net_socket.h"
#include "stream/window/item_mapping.h"
#include "stream/window/window_spec.h"
#include "tests/fuzz/fuzz_check.h"
#include "tools/cli_parse.h"
#include "tools/update_parse.h"

namespace {

using namespace momenta;
// 128-bit integers hold every exact value the references need.
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;
constexpr u128 kLimit = u128{1} << 63;

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// The exact value of digits, saturated at 2^64 (any value past 2^63 is "too
// large" for every parser here).
u128 DigitsValue(std::string_view s) {
  u128 v = 0;
  for (char c : s) {
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > (u128{1} << 64)) return u128{1} << 64;
  }
  return v;
}

// The reference for ParseCount: the syntax, the exact value (saturated), and
// whether every term and running product stays within 2^63 (then the
// parser must accept). nullopt when the syntax is not a count's.
struct CountRef {
  u128 value = 1;
  bool within = true;
};
std::optional<CountRef> ReferenceCount(std::string_view text) {
  if (text.empty()) return std::nullopt;
  CountRef r;
  size_t start = 0;
  while (true) {
    const size_t star = text.find('*', start);
    const std::string_view term = text.substr(start, star == std::string_view::npos ? text.npos : star - start);
    u128 value = 0;
    const size_t caret = term.find('^');
    if (caret == std::string_view::npos) {
      if (!AllDigits(term)) return std::nullopt;
      value = DigitsValue(term);
    } else {
      const std::string_view b = term.substr(0, caret), e = term.substr(caret + 1);
      if (!AllDigits(b) || !AllDigits(e)) return std::nullopt;
      // Each side must fit uint64 (from_chars), else it is no count at all.
      if (DigitsValue(b) > UINT64_MAX || DigitsValue(e) > UINT64_MAX) return std::nullopt;
      const u128 base = DigitsValue(b), exp = DigitsValue(e);
      value = 1;
      if (exp > 0 && base == 0) value = 0;
      for (u128 k = 0; base > 1 && k < exp && value <= kLimit; ++k) value *= base;
      if (value > kLimit) value = kLimit + 1;
    }
    if (caret == std::string_view::npos && DigitsValue(term) > UINT64_MAX) return std::nullopt;
    if (value > kLimit) r.within = false;
    r.value = value > kLimit || r.value > kLimit ? kLimit + 1 : std::min(r.value * value, kLimit + 1);
    if (r.value > kLimit) r.within = false;
    if (star == std::string_view::npos) break;
    start = star + 1;
  }
  return r;
}

void CheckCount(std::string_view text) {
  auto got = cli::ParseCount(text, "--n");
  const auto ref = ReferenceCount(text);
  if (got.ok()) {
    FUZZ_CHECK(ref.has_value(), "accepted a count of no count's syntax");
    FUZZ_CHECK(*got <= kLimit, "count above 2^63");
    FUZZ_CHECK(ref->value == *got, "count differs from its terms' exact value");
  } else {
    FUZZ_CHECK(got.status().code() == Status::Code::kInvalidArgument, got.status().ToString().c_str());
    FUZZ_CHECK(!ref || !ref->within, "refused a count within 2^63");
  }
}

void CheckIndex(const std::string& text) {
  auto got = cli::ParseIndex(text, "INDEX");
  const bool negative = !text.empty() && text[0] == '-';
  auto magnitude = cli::ParseCount(negative ? std::string_view(text).substr(1) : std::string_view(text), "INDEX");
  if (got.ok()) {
    FUZZ_CHECK(magnitude.ok(), "accepted an index whose magnitude is no count");
    FUZZ_CHECK(negative ? *magnitude <= kLimit : *magnitude < kLimit, "index magnitude out of range");
    FUZZ_CHECK(static_cast<uint64_t>(*got) == (negative ? 0 - *magnitude : *magnitude), "index differs from its count");
  } else {
    FUZZ_CHECK(!magnitude.ok() || (!negative && *magnitude == kLimit), "refused an index of a valid count");
  }
  // Plain decimal text: what strtoll gives.
  if (AllDigits(negative ? std::string_view(text).substr(1) : std::string_view(text))) {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno == 0 && end == text.c_str() + text.size()) {
      FUZZ_CHECK(got.ok(), "refused an index strtoll takes");
      FUZZ_CHECK(*got == v, "index differs from strtoll");
    } else {
      FUZZ_CHECK(!got.ok(), "accepted an index strtoll finds out of range");
    }
  }
}

// [-] digits [. digits] [e [+-] digits]: what from_chars and strtod agree on.
bool PlainDecimal(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t e = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++e;
    if (e == 0) return false;
  }
  return i == s.size();
}

bool SameDouble(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void CheckFinite(const std::string& text) {
  auto got = cli::ParseFinite(text, "--about");
  errno = 0;
  char* end = nullptr;
  const double ref = std::strtod(text.c_str(), &end);
  const bool whole = !text.empty() && end == text.c_str() + text.size();
  const int err = errno;
  if (got.ok()) {
    FUZZ_CHECK(std::isfinite(*got), "ParseFinite accepted a non-finite value");
    FUZZ_CHECK(whole, "ParseFinite accepted what strtod does not read whole");
    FUZZ_CHECK(SameDouble(*got, ref), "ParseFinite differs from strtod");
  } else if (PlainDecimal(text) && whole && err == 0 && std::isfinite(ref)) {
    FUZZ_CHECK(false, "ParseFinite refused a plain finite decimal");
  }
}

void CheckRange(std::string_view text, uint64_t length) {
  auto got = cli::ParseRange(text, length);
  const size_t colon = text.find(':');
  const bool one_colon = colon != std::string_view::npos && text.find(':', colon + 1) == std::string_view::npos;
  std::optional<i128> b, e;
  bool sides_ok = one_colon;
  if (one_colon) {
    const std::string_view p = text.substr(0, colon), q = text.substr(colon + 1);
    auto side = [&](std::string_view s, i128 dflt) -> std::optional<i128> {
      if (s.empty()) return dflt;
      auto v = cli::ParseIndex(s, "--range");
      if (!v.ok()) return std::nullopt;
      return *v < 0 ? i128{*v} + length : i128{*v};
    };
    b = side(p, 0);
    e = side(q, length);
    sides_ok = b && e;
  }
  if (!sides_ok) {
    FUZZ_CHECK(!got.ok() && got.status().code() == Status::Code::kInvalidArgument,
               "malformed range not refused as InvalidArgument");
    return;
  }
  const bool inside = *b >= 0 && *e >= 0 && *b <= *e && *e <= i128{length};
  if (!inside) {
    FUZZ_CHECK(!got.ok() && got.status().code() == Status::Code::kOutOfRange,
               "range outside the array not refused as OutOfRange");
    return;
  }
  FUZZ_CHECK(got.ok(), got.status().ToString().c_str());
  FUZZ_CHECK(got->begin <= got->end && got->end <= length, "accepted range outside [0, length]");
  FUZZ_CHECK(i128{got->begin} == *b && i128{got->end} == *e, "range differs from its reference");
}

void CheckBytes(const std::string& text) {
  auto got = cli::ParseBytes(text);
  if (!got.ok()) return;
  FUZZ_CHECK(*got <= kLimit, "byte size above 2^63");
  if (text.empty()) {
    FUZZ_CHECK(*got == 0, "empty budget is not 0");
    return;
  }
  uint64_t unit = 1;
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
  auto n = cli::ParseCount(unit == 1 ? text : text.substr(0, text.size() - 1), "--ram-budget");
  FUZZ_CHECK(n.ok(), "byte size of no count");
  FUZZ_CHECK(u128{*n} * unit == *got, "byte size is not count x unit");
}

std::optional<long long> Strtoll(const std::string& text, size_t n) {
  const std::string s = text.substr(0, n);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

void CheckTimes(const std::string& text) {
  auto d = cli::ParseDuration(text, "--window");
  if (d.ok()) {
    FUZZ_CHECK(*d >= 0 && *d <= kMaxTime, "duration outside [0, kMaxTime]");
    size_t digits = 0;
    while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || (digits == 0 && text[0] == '-')))
      ++digits;
    const std::string_view unit = std::string_view(text).substr(digits);
    const int64_t scale = unit.empty() || unit == "ms" ? 1
                          : unit == "s"                ? 1000
                          : unit == "m"                ? 60000
                          : unit == "h"                ? 3600000
                          : unit == "d"                ? 86400000
                                                       : 0;
    FUZZ_CHECK(scale != 0, "duration with an unknown unit");
    const auto n = Strtoll(text, digits);
    FUZZ_CHECK(n && *n >= 0 && *n * scale == *d, "duration is not N x unit");
  }
  auto t = cli::ParseTimeFlag(text);
  if (!text.empty()) {
    const auto ref = Strtoll(text, text.size());
    // from_chars takes no '+' and no blanks; strtoll does.
    const bool plain =
        !text.empty() && text[0] != '+' && text[0] != ' ' && !std::isspace(static_cast<unsigned char>(text[0]));
    if (t.ok())
      FUZZ_CHECK(ref && *ref == *t && *t != kLogTimeNow, "--time differs from strtoll");
    else if (plain && ref && *ref != kLogTimeNow)
      FUZZ_CHECK(false, "--time refused what strtoll takes");
    auto ms = cli::ParseTimeMs(text, 7, "--since");
    FUZZ_CHECK(ms.ok() == t.ok() || (ref && *ref == kLogTimeNow), "--since and --time disagree");
    if (ms.ok()) FUZZ_CHECK(ref && *ms == *ref, "--since differs from strtoll");
  } else {
    FUZZ_CHECK(t.ok() && *t == kLogTimeNow, "empty --time is not now");
  }
  auto phis = cli::ParseFractions(text);
  if (phis.ok())
    for (double phi : *phis) FUZZ_CHECK(phi >= 0 && phi <= 1, "fraction outside [0, 1]");
}

void CheckUpdates(const std::string& text, uint8_t param) {
  const DType dtype = static_cast<DType>(param % 10);
  const uint64_t lengths[] = {0, 1, 100, uint64_t{1} << 40};
  const uint64_t length = lengths[(param / 10) % 4];
  const bool binary = (param / 40) % 2 == 1;
  auto got = cli::ParseUpdates(text, binary, "updates", dtype, length, 42);
  if (!got.ok()) {
    const auto code = got.status().code();
    FUZZ_CHECK(code == Status::Code::kInvalidArgument || code == Status::Code::kOutOfRange,
               got.status().ToString().c_str());
    return;
  }
  for (const IndexedValue& u : *got) {
    FUZZ_CHECK(u.index < length, "update index outside the array");
    FUZZ_CHECK(ValueFits(dtype, u.value), "update value does not fit the dtype");
  }
  if (binary) {
    FUZZ_CHECK(got->size() * 16 == text.size(), "binary update count");
    return;
  }
  // Reference: lines (split at '\n'), cut at '#', with a non-blank field.
  size_t lines = 0, start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line = std::string_view(text).substr(start, nl - start);
    line = line.substr(0, line.find('#'));
    bool field = false;
    for (char c : line) field = field || !std::isspace(static_cast<unsigned char>(c));
    lines += field;
    start = nl + 1;
  }
  FUZZ_CHECK(got->size() == lines, "text update count differs from the non-blank lines");
}

void CheckStreamParsers(const std::string& text) {
  auto mapping = ItemMapping::Parse(text, "--item");
  if (mapping.ok()) {
    auto again = ItemMapping::Parse(mapping->ToString(), "--item");
    FUZZ_CHECK(again.ok(), "an item mapping's ToString does not parse");
    FUZZ_CHECK(again->ToString() == mapping->ToString(), "item mapping round trip");
  }
  for (const char* m : {"index", "index/7", "value/0.5"}) {
    auto map = ItemMapping::Parse(m, "--item");
    int64_t ts = 0, item = 0;
    if (ParseTimedItem(text, *map, "in", 1, &ts, &item).ok())
      FUZZ_CHECK(ts >= -kMaxTime && ts <= kMaxTime, "timed item's timestamp out of range");
  }
  auto hp = ParseHostPort(text, "--root");
  if (hp.ok()) FUZZ_CHECK(!hp->host.empty(), "host:port without a host");
}

}  // namespace

// Command-line text and update lines are short: past this, longer inputs
// reach no new code and only slow the target down.
constexpr size_t kMaxInput = 256;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size = std::min(size, kMaxInput + 1);
  const uint8_t param = data[0];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  CheckCount(text);
  CheckIndex(text);
  CheckFinite(text);
  for (uint64_t length : {uint64_t{0}, uint64_t{10}, uint64_t{1} << 40, uint64_t{INT64_MAX}}) CheckRange(text, length);
  CheckBytes(text);
  CheckTimes(text);
  CheckUpdates(text, param);
  CheckStreamParsers(text);
  return 0;
}
