#include "tools/query_batch.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string_view>

#include "storage/util/json_writer.h"
#include "storage/util/line_reader.h"
#include "tools/cli_common.h"
#include "tools/cli_signals.h"
#include "tools/query_answers.h"
#include "tools/range_lines.h"

namespace momenta::cli {
namespace {

constexpr size_t kLinesPerBatch = 256;

// A line waiting for its answer: its range, or the error it gave.
struct PendingLine {
  uint64_t line = 0;
  IndexRange range;
  std::vector<Stat> stats;
  Status error;  // not OK: the line failed before it was asked
};

void WriteOut(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// The closing line on stderr: "(N ranges answered in T us; they cover X of
// the array; read Y from the array and Z from the disk tier in R requests)",
// or with json one object {"<noun>s":N,...,"array_bytes_read":Y,...}; `more`
// adds to the text (before its ')'), more_json to the object.
void PrintTotals(const BatchTotals& t, const char* noun, bool json, double micros, const std::string& more = "",
                 const std::function<void(JsonWriter&)>& more_json = nullptr) {
  if (json) {
    JsonWriter j;
    j.BeginObject().Key(std::string(noun) + "s").UInt(t.answered);
    if (t.skipped) j.Key("skipped").UInt(t.skipped);
    j.Key("elapsed_us").Double(micros).Key("covered_bytes").UInt(t.covered_bytes);
    j.Key("array_bytes_read").UInt(t.read.array_bytes).Key("tier_bytes_read").UInt(t.read.tier_bytes);
    j.Key("read_requests").UInt(t.read.requests);
    if (more_json) more_json(j);
    j.EndObject();
    std::fprintf(stderr, "%s\n", j.str().c_str());
    return;
  }
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on long operator+ chains.
  std::string line = "(";
  line.append(Counted(t.answered, noun));
  if (std::string_view(noun) == "range") line.append(" answered");
  if (t.skipped) line.append(", ").append(Counted(t.skipped, "line")).append(" skipped");
  char micros_text[32];
  std::snprintf(micros_text, sizeof micros_text, " in %.0f us", micros);
  line.append(micros_text).append(t.answered == 1 ? "; it covers " : "; they cover ");
  line.append(FormatBytes(t.covered_bytes)).append(" of the array; read ").append(FormatBytes(t.read.array_bytes));
  line.append(" from the array and ").append(FormatBytes(t.read.tier_bytes)).append(" from the disk tier in ");
  line.append(Counted(t.read.requests, "request")).append(more).append(")\n");
  std::fputs(line.c_str(), stderr);
}

std::string ErrorLine(const QuerySpec& spec, uint64_t line, const Status& error) {
  if (spec.json)
    return "{\"line\":" + std::to_string(line) + ",\"error\":" + JsonWriter().String(error.ToString()).str() + "}\n";
  return "error: " + error.ToString() + "\n";
}

std::string AnswerLine(const QuerySpec& spec, uint64_t line, const IndexRange& range,
                       const std::vector<StatAnswer>& answers) {
  if (spec.json)
    return "{\"line\":" + std::to_string(line) + ",\"range\":" + RangeJson(range) + ",\"stats\":" + StatsJson(answers) +
           "}\n";
  return std::to_string(range.begin) + ":" + std::to_string(range.end) + " " + StatsText(answers, " ") + "\n";
}

// Answers `batch` in order. Returns kExitOk, or the exit code to stop with
// (the lines before the failing one answered, its message printed).
class LineAnswerer {
 public:
  // sink: the answers are appended there, errors too (as skip_errors),
  // nothing printed; a failure of a whole batch is kept in failure().
  LineAnswerer(BufferedArray& ba, const QuerySpec& spec, bool skip_errors, std::string* sink = nullptr)
      : ba_(ba), spec_(spec), skip_errors_(skip_errors || sink), sink_(sink) {}

  int Answer(const std::vector<PendingLine>& batch) {
    std::vector<IndexRange> ranges;
    std::vector<Stat> asked;  // every line's stats: what the batch is summarized for
    for (const PendingLine& p : batch)
      if (p.error.ok()) {
        ranges.push_back(p.range);
        asked.insert(asked.end(), p.stats.begin(), p.stats.end());
      }
    RangeAnswers summaries;
    const Status s = ba_.StatBatch(ranges, asked, &summaries, &totals_.read);
    for (const auto& n : ba_.TakeNotices()) PrintNotice(n);
    if (!s.ok() && sink_) {
      failure_ = s;
      return kExitRuntime;
    }
    if (!s.ok()) return FailOrInterrupted(s);
    std::string out;
    size_t next = 0;
    for (const PendingLine& p : batch) {
      Status error = p.error;
      if (error.ok()) {
        auto answers = summaries.Answer(next++, p.stats, spec_.params);
        if (answers.ok()) {
          out += AnswerLine(spec_, p.line, p.range, *answers);
          ++totals_.answered;
          totals_.Cover(p.range, ba_.array().itemsize());
          continue;
        }
        error = answers.status().WithContext(where(p.line));
      }
      if (!skip_errors_) {
        WriteOut(out);
        std::fflush(stdout);
        return error.code() == Status::Code::kInvalidArgument && !p.error.ok() ? UsageFail(error.ToString())
                                                                               : Fail(error);
      }
      if (!sink_) std::fprintf(stderr, "momenta: %s\n", error.ToString().c_str());
      out += ErrorLine(spec_, p.line, error);
      ++totals_.skipped;
    }
    if (sink_) {
      *sink_ += out;
      return kExitOk;
    }
    WriteOut(out);
    std::fflush(stdout);
    return kExitOk;
  }

  void set_input_name(const std::string& name) { input_ = name; }
  std::string where(uint64_t line) const { return input_ + ":" + std::to_string(line); }
  const BatchTotals& totals() const { return totals_; }
  const Status& failure() const { return failure_; }

 private:
  BufferedArray& ba_;
  const QuerySpec& spec_;
  const bool skip_errors_;
  std::string* const sink_;
  Status failure_;
  std::string input_;
  BatchTotals totals_;
};

}  // namespace

int AnswerRangeLines(BufferedArray& ba, const QuerySpec& spec, const std::string& input, bool skip_errors) {
  auto in = LineReader::Open(input, StopToken::Cancel());
  if (!in.ok()) return Fail(in.status());
  Stopwatch timer;
  LineAnswerer answerer(ba, spec, skip_errors);
  answerer.set_input_name((*in)->name());
  std::vector<PendingLine> batch;
  while (true) {
    auto line = (*in)->Next();
    if (!line.ok()) return FailOrInterrupted(line.status());
    if (*line) {
      const uint64_t number = (*in)->line_number();
      auto parsed = ParseRangeLine(**line, ba.length(), answerer.where(number));
      if (!parsed.ok()) {
        batch.push_back({number, {}, {}, parsed.status()});
      } else if (!parsed->blank) {
        batch.push_back({number, parsed->range, parsed->stats.value_or(spec.stats), Status::OK()});
      }
    }
    const bool more = *line && batch.size() < kLinesPerBatch && (*in)->Ready();
    if (!batch.empty() && !more) {
      if (const int code = answerer.Answer(batch); code != kExitOk) return code;
      batch.clear();
    }
    if (!*line) break;
  }
  PrintTotals(answerer.totals(), "range", spec.json, timer.ElapsedMicros());
  return answerer.totals().skipped ? kExitRuntime : kExitOk;
}

Status AnswerRangeText(BufferedArray& ba, const QuerySpec& spec, std::string_view text, const std::string& name,
                       std::string* out, BatchTotals* totals) {
  LineAnswerer answerer(ba, spec, /*skip_errors=*/true, out);
  answerer.set_input_name(name);
  std::vector<PendingLine> batch;
  uint64_t number = 0;
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    std::string_view line = text.substr(b, e - b);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    b = e + 1;
    ++number;
    auto parsed = ParseRangeLine(line, ba.length(), answerer.where(number));
    if (!parsed.ok())
      batch.push_back({number, {}, {}, parsed.status()});
    else if (!parsed->blank)
      batch.push_back({number, parsed->range, parsed->stats.value_or(spec.stats), Status::OK()});
    if (batch.size() == kLinesPerBatch || (b >= text.size() && !batch.empty())) {
      if (answerer.Answer(batch) != kExitOk) break;
      batch.clear();
    }
  }
  *totals = answerer.totals();
  return answerer.failure();
}

std::vector<IndexRange> EqualBins(IndexRange range, uint64_t bins) {
  std::vector<IndexRange> out;
  out.reserve(bins);
  const UInt128 n = range.size();
  auto edge = [&](uint64_t i) { return range.begin + static_cast<uint64_t>(n * i / bins); };
  for (uint64_t i = 0; i < bins; ++i) out.push_back({edge(i), edge(i + 1)});
  return out;
}

std::vector<IndexRange> SizedBins(IndexRange range, uint64_t size) {
  std::vector<IndexRange> out;
  out.reserve(range.size() / size + 1);
  for (uint64_t b = range.begin; b < range.end; b += std::min(size, range.end - b))
    out.push_back({b, b + std::min(size, range.end - b)});
  return out;
}

std::vector<IndexRange> SnapBins(const std::vector<IndexRange>& bins, uint64_t leaf_span, uint64_t length,
                                 uint64_t* moved) {
  *moved = 0;
  auto snap = [&](uint64_t e) {
    const uint64_t below = e / leaf_span * leaf_span;
    const uint64_t above = std::min(below + leaf_span, length);
    const uint64_t s = (above - e < e - below) ? above : below;
    *moved = std::max(*moved, s > e ? s - e : e - s);
    return s;
  };
  std::vector<IndexRange> out;
  out.reserve(bins.size());
  for (const IndexRange& b : bins) out.push_back({snap(b.begin), snap(b.end)});
  return out;
}

Status CheckBins(IndexRange range, uint64_t bins, uint64_t bin_size) {
  if (bin_size > 0 && range.size() == 0)
    return Status::InvalidArgument("--bin-size " + std::to_string(bin_size),
                                   "the range " + std::to_string(range.begin) + ":" + std::to_string(range.end) +
                                       " is empty; give a range of at least one element");
  if (bin_size == 0 && (bins == 0 || bins > range.size()))
    return Status::InvalidArgument("--bins " + std::to_string(bins),
                                   "the range " + std::to_string(range.begin) + ":" + std::to_string(range.end) +
                                       " holds " + Counted(range.size(), "element") +
                                       "; give 1 <= K <= " + std::to_string(range.size()));
  return Status::OK();
}

Result<BinLines> AnswerBinLines(BufferedArray& ba, const QuerySpec& spec, IndexRange range, uint64_t bins,
                                uint64_t bin_size, bool snap) {
  BinLines result;
  const std::vector<IndexRange> asked = bin_size > 0 ? SizedBins(range, bin_size) : EqualBins(range, bins);
  result.leaf = ba.leaf_span();
  const std::vector<IndexRange> edges = snap ? SnapBins(asked, result.leaf, ba.length(), &result.moved) : asked;
  RangeAnswers summaries;
  BatchTotals& totals = result.totals;
  const Status s = ba.StatBatch(edges, spec.stats, &summaries, &totals.read);
  for (const auto& n : ba.TakeNotices()) PrintNotice(n);
  if (!s.ok()) return s;
  result.lines.reserve(edges.size());
  for (size_t k = 0; k < edges.size(); ++k) {
    ++totals.answered;
    totals.Cover(edges[k], ba.array().itemsize());
    auto answers = summaries.Answer(k, spec.stats, spec.params);
    if (!answers.ok() && edges[k].size() == 0) {  // a bin snapping emptied: NaN where a count is needed
      std::vector<StatAnswer> nan;
      for (Stat stat : spec.stats) {
        auto answer = summaries.AnswerOne(k, stat, spec.params);
        nan.push_back(answer.ok() ? *answer : StatAnswer{stat, {NAN}, false, 0});
      }
      answers = std::move(nan);
    }
    if (!answers.ok()) return answers.status().WithContext(spec.path);
    std::string line;
    if (spec.json) {
      line = "{\"range\":" + RangeJson(edges[k]);
      if (snap) line += ",\"asked\":" + RangeJson(asked[k]);
      line += ",\"stats\":" + StatsJson(*answers) + "}";
    } else {
      line = std::to_string(edges[k].begin) + ":" + std::to_string(edges[k].end) + " " + StatsText(*answers, " ");
    }
    result.lines.push_back(std::move(line));
  }
  return result;
}

int AnswerBins(BufferedArray& ba, const QuerySpec& spec, IndexRange range, uint64_t bins, uint64_t bin_size,
               bool snap) {
  if (const Status usage = CheckBins(range, bins, bin_size); !usage.ok()) return UsageFail(usage.message());
  Stopwatch timer;
  auto bin_lines = AnswerBinLines(ba, spec, range, bins, bin_size, snap);
  if (!bin_lines.ok()) return FailOrInterrupted(bin_lines.status());
  std::string out;
  for (const std::string& line : bin_lines->lines) out.append(line).append("\n");
  WriteOut(out);
  std::fflush(stdout);  // the answers first, then the summary on stderr
  const uint64_t moved = bin_lines->moved, leaf = bin_lines->leaf;
  const std::string more = snap ? "; edges moved by at most " + Counted(moved, "element") +
                                      " to leaf boundaries (leaves of " + std::to_string(leaf) + ")"
                                : "";
  PrintTotals(bin_lines->totals, "bin", spec.json, timer.ElapsedMicros(), more, [&](JsonWriter& j) {
    if (snap) j.Key("edges_moved").UInt(moved).Key("leaf").UInt(leaf);
  });
  return kExitOk;
}

}  // namespace momenta::cli
