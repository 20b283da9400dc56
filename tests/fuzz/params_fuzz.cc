// Fuzz target `params`: the query-parameter parser of `momenta serve`
// (tools/serve/params.h) on arbitrary request targets.
//
// Input: the target itself (its first 8 KiB, the server's header limit).
// Properties checked on every input:
//   - ParseTarget either fails with a one-line message or gives at most
//     kMaxSegments non-empty segments and kMaxParams parameters, none holding
//     a control character, and fails only when the target does not start with
//     '/', holds a '%' not followed by two hex digits or a control character
//     (raw or escaped), or passes a limit (then *too_large);
//   - a segment holds no byte the target's path did not encode (a decoded
//     segment is never ".." unless the path spelled it), and re-encoding every
//     segment and parameter and parsing again gives the same target;
//   - the typed getters (flags, counts, statistics, ranges against a fixed
//     length) never crash, and their errors are one line;
//   - GetCount's values lie within the bounds asked.
// Seeds (tests/data/fuzz/params/): targets from docs/serve.md's examples.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_check.h"
#include "tools/cli_parse.h"
#include "tools/serve/params.h"

namespace {

using namespace momenta;
using namespace momenta::serve;

bool OneLine(const Status& s) { return s.ToString().find('\n') == std::string::npos; }

std::string Encode(std::string_view text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// Whether every '%' of `text` is followed by two hex digits.
bool EscapesWellFormed(std::string_view text) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '%') {
      if (i + 2 >= text.size()) return false;
      if (!hex(text[i + 1]) || !hex(text[i + 2])) return false;
      i += 2;
    }
  return true;
}

void CheckGetters(const Target& t) {
  for (const char* key : {"snap", "skipna", "approx"}) {
    auto f = GetFlag(t, key);
    FUZZ_CHECK(f.ok() || OneLine(f.status()), "a flag's error is one line");
  }
  auto n = GetCount(t, "bins", 1, 1 << 16, 1000);
  if (n.ok())
    FUZZ_CHECK(*n >= 1 && *n <= (1 << 16), "a count within its bounds");
  else
    FUZZ_CHECK(OneLine(n.status()), "a count's error is one line");
  auto stats = GetStatRequest(t, false);
  if (stats.ok())
    FUZZ_CHECK(!stats->stats.empty() && stats->stats.size() <= kMaxStatsPerRequest, "stats counted");
  else
    FUZZ_CHECK(OneLine(stats.status()), "a stat's error is one line");
  if (const std::string* range = t.Get("range")) {
    auto r = cli::ParseRange(*range, 1000, "range");
    if (r.ok()) FUZZ_CHECK(r->begin <= r->end && r->end <= 1000, "a range inside the array");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view target(reinterpret_cast<const char*>(data), std::min<size_t>(size, 8 << 10));
  bool too_large = false;
  auto t = ParseTarget(target, &too_large);
  if (!t.ok()) {
    FUZZ_CHECK(OneLine(t.status()), "ParseTarget's error is one line");
    FUZZ_CHECK(too_large || target.empty() || target[0] != '/' || !EscapesWellFormed(target) ||
                   t.status().message().find("control character") != std::string::npos,
               "a target refused only when malformed or too large");
    return 0;
  }
  FUZZ_CHECK(!target.empty() && target[0] == '/', "a target starts with '/'");
  FUZZ_CHECK(EscapesWellFormed(target), "escapes well formed in an accepted target");
  FUZZ_CHECK(t->segments.size() <= kMaxSegments && t->params.size() <= kMaxParams, "limits kept");
  const std::string_view path = target.substr(0, target.find('?'));
  auto control = [](const std::string& s) {
    for (unsigned char c : s)
      if (c < 0x20 || c == 0x7f) return true;
    return false;
  };
  for (const auto& [k, v] : t->params) FUZZ_CHECK(!control(k) && !control(v), "no control character in a parameter");
  for (const std::string& seg : t->segments) {
    FUZZ_CHECK(!seg.empty() && !control(seg), "no empty segment, no control character");
    if (seg == "..")
      FUZZ_CHECK(path.find("..") != std::string_view::npos || path.find('%') != std::string_view::npos,
                 "'..' only when the path spelled or encoded it");
  }
  std::string again;
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "/" + std::string.
  for (const std::string& seg : t->segments) {
    again += '/';
    again += Encode(seg);
  }
  if (again.empty()) again.push_back('/');
  for (size_t k = 0; k < t->params.size(); ++k) {
    again += k ? '&' : '?';
    again += Encode(t->params[k].first);
    again += '=';
    again += Encode(t->params[k].second);
  }
  auto round = ParseTarget(again);
  FUZZ_CHECK(round.ok(), "an encoded target parses");
  FUZZ_CHECK(round->segments == t->segments, "segments round-trip");
  FUZZ_CHECK(round->params == t->params, "parameters round-trip");
  CheckGetters(*t);
  return 0;
}
