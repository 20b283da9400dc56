#include "tools/serve/time_axis.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

namespace momenta::serve {
namespace {

// `text` whole as a finite number, or nothing.
std::optional<double> WholeNumber(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Days from 1970-01-01 to the proleptic Gregorian date y-m-d (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// `count` decimal digits of `s` at `pos` as a number, or -1.
int Digits(const std::string& s, size_t pos, size_t count) {
  if (pos + count > s.size()) return -1;
  int v = 0;
  for (size_t k = pos; k < pos + count; ++k) {
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return -1;
    v = v * 10 + (s[k] - '0');
  }
  return v;
}

// "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SS[.f+]Z" as seconds since the epoch.
std::optional<double> IsoInstant(const std::string& s) {
  static const int kDaysIn[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const int y = Digits(s, 0, 4), mo = Digits(s, 5, 2), d = Digits(s, 8, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || s.size() < 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  if (d > kDaysIn[mo - 1] + (mo == 2 && IsLeap(y) ? 1 : 0)) return std::nullopt;
  const double day = static_cast<double>(DaysFromCivil(y, mo, d)) * 86400.0;
  if (s.size() == 10) return day;
  const int h = Digits(s, 11, 2), mi = Digits(s, 14, 2), sec = Digits(s, 17, 2);
  if (s[10] != 'T' || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || s[13] != ':' || s[16] != ':' ||
      s.back() != 'Z')
    return std::nullopt;
  double frac = 0;
  size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    double scale = 0.1;
    for (++pos; pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])); ++pos, scale /= 10)
      frac += (s[pos] - '0') * scale;
    if (pos == 20) return std::nullopt;  // a '.' with no digit
  }
  if (pos != s.size() - 1) return std::nullopt;
  return day + h * 3600.0 + mi * 60.0 + sec + frac;
}

// "NAME=VALUE" as {NAME, VALUE}; "VALUE" as {"", VALUE}.
std::pair<std::string, std::string> SplitNamed(const std::string& arg) {
  const size_t eq = arg.rfind('=');
  if (eq == std::string::npos) return {"", arg};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

// The flag's values by array name ("" for every array), each parsed by `parse`.
template <typename Parse>
Result<std::map<std::string, double>> ByName(const std::vector<std::string>& args, const std::string& flag,
                                             const std::set<std::string>& names, Parse parse) {
  std::map<std::string, double> out;
  for (const std::string& arg : args) {
    auto [name, value] = SplitNamed(arg);
    if (!name.empty() && !names.count(name))
      return Status::InvalidArgument(flag, "'" + arg + "': no served array is named '" + name + "'");
    auto v = parse(value);
    if (!v.ok()) return Status::InvalidArgument(flag, (name.empty() ? "" : name + "=") + v.status().message());
    if (!out.emplace(name, *v).second)
      return Status::InvalidArgument(
          flag, "'" + arg + "': " + (name.empty() ? "given twice for every array" : "given twice for " + name));
  }
  return out;
}

}  // namespace

Result<double> ParseRate(const std::string& text) {
  const auto v = WholeNumber(text);
  if (!v || !(*v > 0)) return Status::InvalidArgument("'" + text + "'", "not a rate in hertz (a number > 0)");
  return *v;
}

Result<double> ParseInstant(const std::string& text) {
  if (auto v = WholeNumber(text)) return *v;
  if (auto v = IsoInstant(text)) return *v;
  return Status::InvalidArgument(
      "'" + text + "'", "neither seconds since the epoch nor an ISO-8601 UTC time like 2026-01-02T03:04:05.5Z");
}

Status CheckTimeAxisValues(const std::vector<std::string>& rates, const std::vector<std::string>& starts) {
  for (const std::string& arg : rates) {
    auto [name, value] = SplitNamed(arg);
    auto v = ParseRate(value);
    if (!v.ok()) return Status::InvalidArgument("--rate", (name.empty() ? "" : name + "=") + v.status().message());
  }
  for (const std::string& arg : starts) {
    auto [name, value] = SplitNamed(arg);
    auto v = ParseInstant(value);
    if (!v.ok()) return Status::InvalidArgument("--start", (name.empty() ? "" : name + "=") + v.status().message());
  }
  return Status::OK();
}

Result<std::map<std::string, TimeAxis>> ResolveTimeAxes(const std::vector<std::string>& rates,
                                                        const std::vector<std::string>& starts,
                                                        const std::vector<std::string>& names) {
  const std::set<std::string> known(names.begin(), names.end());
  auto rate = ByName(rates, "--rate", known, ParseRate);
  if (!rate.ok()) return rate.status();
  auto start = ByName(starts, "--start", known, ParseInstant);
  if (!start.ok()) return start.status();
  std::map<std::string, TimeAxis> out;
  for (const std::string& name : names) {
    auto r = rate->count(name) ? rate->find(name) : rate->find("");
    auto s = start->count(name) ? start->find(name) : start->find("");
    if (r == rate->end() && s == start->end()) continue;
    if (r == rate->end()) return Status::InvalidArgument("--start", name + " has a start but no --rate");
    if (s == start->end()) return Status::InvalidArgument("--rate", name + " has a rate but no --start");
    out[name] = TimeAxis{r->second, s->second};
  }
  return out;
}

}  // namespace momenta::serve
