#include "tools/query_answers.h"

#include <charconv>
#include <cmath>

#include "storage/array/array_file.h"
#include "storage/util/json_writer.h"
#include "tools/cli_common.h"  // PrintNotice

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

Result<std::vector<StatAnswer>> AnswerRange(BufferedArray& ba, const std::vector<Stat>& stats, const StatParams& params,
                                            const IndexRange& range, QueryCost* cost) {
  auto answers = ba.Stat(range.begin, range.end, stats, params, cost);  // cost: after merging
  for (const auto& n : ba.TakeNotices()) PrintNotice(n);
  return answers;
}

std::string RangeAnswerJson(BufferedArray& ba, const std::string& path, const IndexRange& range,
                            const std::vector<StatAnswer>& answers, double micros, const QueryCost& cost) {
  std::string out = "{\"path\":" + JsonWriter().String(path).str() + ",\"range\":" + RangeJson(range) +
                    ",\"stats\":" + StatsJson(answers);
  JsonWriter tail;
  tail.BeginObject().Key("elapsed_us").Double(micros).Key("array_bytes_read").UInt(cost.array_bytes);
  tail.Key("tier_bytes_read").UInt(cost.tier_bytes).Key("read_requests").UInt(cost.requests);
  tail.Key("ram_nodes").UInt(cost.ram_nodes).Key("io").String(ba.array().io().Name());
  // What opening cost besides the query: a (re)build or a replay, timed apart.
  const OpenReport& opened = ba.open_report();
  tail.Key("open").BeginObject().Key("rebuilt").Bool(opened.full_pass);
  if (opened.full_pass)
    tail.Key("rebuild_reason")
        .String(opened.full_pass_reason)
        .Key("rebuild_us")
        .Double(opened.full_pass_seconds * 1e6)
        .Key("rebuild_bytes_read")
        .UInt(opened.full_pass_bytes_read);
  tail.Key("replayed").UInt(opened.replayed).Key("recovered").Bool(opened.recovered).EndObject().EndObject();
  return out + "," + tail.str().substr(1);
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
