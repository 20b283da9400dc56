#include "tools/serve/params.h"

#include <cstdio>

#include "buffers/algebra/moments.h"  // kMaxMomentOrder
#include "tools/cli_parse.h"

namespace momenta::serve {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 64)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (text.size() > 64) out += "...";
  return out + "'";
}

// Control characters (a newline, NUL) have no place in a name or a parameter,
// and would break the one-line error messages that quote them.
Status NoControl(const std::string& text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      return Status::InvalidArgument("request", Quoted(text) + " holds a control character (byte " + hex + ")");
    }
  return Status::OK();
}

Status Limit(bool* too_large, std::string_view what, size_t most) {
  if (too_large) *too_large = true;
  return Status::InvalidArgument("request", "more than " + std::to_string(most) + " " + std::string(what));
}

}  // namespace

const std::string* Target::Get(std::string_view key) const {
  const std::string* found = nullptr;
  for (const auto& [k, v] : params)
    if (k == key) found = &v;
  return found;
}

std::vector<std::string> Target::All(std::string_view key) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : params)
    if (k == key) out.push_back(v);
  return out;
}

Result<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus_is_space) {
      out += ' ';
    } else if (c != '%') {
      out += c;
    } else {
      const int hi = i + 1 < text.size() ? HexDigit(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? HexDigit(text[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        return Status::InvalidArgument("request", Quoted(text) + ": '%' is not followed by two hex digits");
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return out;
}

Result<Target> ParseTarget(std::string_view target, bool* too_large) {
  if (too_large) *too_large = false;
  if (target.empty() || target[0] != '/')
    return Status::InvalidArgument("request", "the target " + Quoted(target) + " does not start with '/'");
  const size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  const std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  Target t;
  for (size_t b = 0; b < path.size();) {
    size_t e = path.find('/', b);
    if (e == std::string_view::npos) e = path.size();
    if (e > b) {
      if (t.segments.size() == kMaxSegments) return Limit(too_large, "path segments", kMaxSegments);
      auto seg = PercentDecode(path.substr(b, e - b), /*plus_is_space=*/false);
      if (!seg.ok()) return seg.status();
      MOMENTA_RETURN_IF_ERROR(NoControl(*seg));
      t.segments.push_back(std::move(seg).value());
    }
    b = e + 1;
  }
  for (size_t b = 0; b < query.size();) {
    size_t e = query.find('&', b);
    if (e == std::string_view::npos) e = query.size();
    const std::string_view item = query.substr(b, e - b);
    b = e + 1;
    if (item.empty()) continue;
    if (t.params.size() == kMaxParams) return Limit(too_large, "query parameters", kMaxParams);
    const size_t eq = item.find('=');
    auto key = PercentDecode(item.substr(0, eq), true);
    if (!key.ok()) return key.status();
    auto value = PercentDecode(eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1), true);
    if (!value.ok()) return value.status();
    MOMENTA_RETURN_IF_ERROR(NoControl(*key));
    MOMENTA_RETURN_IF_ERROR(NoControl(*value));
    t.params.emplace_back(std::move(key).value(), std::move(value).value());
  }
  return t;
}

Result<bool> GetFlag(const Target& t, std::string_view key) {
  const std::string* v = t.Get(key);
  if (!v || *v == "0" || *v == "false") return false;
  if (v->empty() || *v == "1" || *v == "true") return true;
  return Status::InvalidArgument(key, Quoted(*v) + " is not 1, 0, true or false");
}

Result<uint64_t> GetCount(const Target& t, std::string_view key, uint64_t lo, uint64_t hi, uint64_t dflt) {
  const std::string* v = t.Get(key);
  if (!v) return dflt;
  auto n = cli::ParseCount(*v, key);
  if (!n.ok()) return n.status();
  if (*n < lo || *n > hi)
    return Status::InvalidArgument(key,
                                   Quoted(*v) + " is not in range " + std::to_string(lo) + " to " + std::to_string(hi));
  return *n;
}

Result<StatRequest> GetStatRequest(const Target& t, bool stats_required, Stat dflt_stat) {
  StatRequest r;
  const std::vector<std::string> names = t.All("stat");
  if (names.size() > kMaxStatsPerRequest)
    return Status::InvalidArgument("stat", "more than " + std::to_string(kMaxStatsPerRequest) + " statistics");
  for (const std::string& name : names) {
    auto s = ParseStat(name, "stat");
    if (!s.ok()) return s.status();
    r.stats.push_back(*s);
  }
  if (r.stats.empty()) {
    if (stats_required) return Status::InvalidArgument("stat", "give at least one stat=S (e.g. stat=mean)");
    r.stats.push_back(dflt_stat);
  }
  auto skipna = GetFlag(t, "skipna");
  if (!skipna.ok()) return skipna.status();
  r.params.skipna = *skipna;
  auto ddof = GetCount(t, "ddof", 0, INT32_MAX, 0);
  if (!ddof.ok()) return ddof.status();
  r.params.ddof = static_cast<int>(*ddof);
  auto degree = GetCount(t, "degree", 0, kMaxMomentOrder, 1);
  if (!degree.ok()) return degree.status();
  r.params.degree = static_cast<int>(*degree);
  if (t.Get("order")) {
    auto order = GetCount(t, "order", 0, kMaxMomentOrder, 0);
    if (!order.ok()) return order.status();
    r.params.order = static_cast<int>(*order);
  }
  if (const std::string* about = t.Get("about")) {
    auto c = cli::ParseFinite(*about, "about");
    if (!c.ok()) return c.status();
    r.params.about = *c;
  }
  return r;
}

}  // namespace momenta::serve
