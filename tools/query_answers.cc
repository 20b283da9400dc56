#include "tools/query_answers.h"

#include <charconv>
#include <cmath>

#include "storage/util/json_writer.h"

namespace momenta::cli {
namespace {

std::string ValueText(const StatAnswer& answer, size_t k) {
  return answer.is_integer ? Int128ToString(answer.integer) : FormatNumber(answer.values[k]);
}

bool IsList(Stat stat) { return stat == Stat::kMoments || stat == Stat::kPolyfit; }

}  // namespace

std::string FormatNumber(long double v) {
  if (std::isnan(v)) return "nan";
  char buf[40];
  const double d = static_cast<double>(v);
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, res.ptr);
}

std::string StatsText(const std::vector<StatAnswer>& answers, const char* separator) {
  std::string out;
  for (size_t s = 0; s < answers.size(); ++s) {
    if (s) out += separator;
    out += StatName(answers[s].stat);
    for (size_t k = 0; k < answers[s].values.size(); ++k) {
      out += ' ';  // appends: GCC 12 warns falsely (-Wrestrict) on " " + std::string
      out += ValueText(answers[s], k);
    }
  }
  return out;
}

std::string StatsJson(const std::vector<StatAnswer>& answers) {
  std::string out = "{";
  for (size_t s = 0; s < answers.size(); ++s) {
    if (s) out += ',';
    out += JsonWriter().String(StatName(answers[s].stat)).str() + ":";
    const bool list = IsList(answers[s].stat);
    if (list) out += '[';
    for (size_t k = 0; k < answers[s].values.size(); ++k) {
      if (k) out += ',';
      const long double v = answers[s].values[k];
      if (answers[s].is_integer || std::isfinite(v))
        out += ValueText(answers[s], k);
      else
        out += JsonWriter().Double(static_cast<double>(v)).str();  // "NaN", "Infinity", "-Infinity"
    }
    if (list) out += ']';
  }
  return out + "}";
}

std::string RangeJson(const IndexRange& range) {
  std::string out = "[";  // appends: GCC 12 warns falsely (-Wrestrict) on "[" + std::string
  out += std::to_string(range.begin);
  out += ',';
  out += std::to_string(range.end);
  return out + "]";
}

}  // namespace momenta::cli
