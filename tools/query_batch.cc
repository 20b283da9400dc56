#include "tools/query_batch.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "buffers/moment_tree.h"
#include "storage/json_writer.h"
#include "tools/cli_common.h"
#include "tools/cli_signals.h"
#include "tools/line_input.h"
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

std::string ErrorLine(const QuerySpec& spec, uint64_t line, const Status& error) {
  if (spec.json) return "{\"line\":" + std::to_string(line) + ",\"error\":" + JsonWriter().String(error.ToString()).str() + "}\n";
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
  LineAnswerer(BufferedArray& ba, const QuerySpec& spec, bool skip_errors)
      : ba_(ba), spec_(spec), skip_errors_(skip_errors) {}

  int Answer(const std::vector<PendingLine>& batch) {
    std::vector<IndexRange> ranges;
    bool extremes = false;
    bool ola_alone = true;  // kind ola: every line's stats from its index moments (the tree's leaves not read)
    for (const PendingLine& p : batch)
      if (p.error.ok()) {
        ranges.push_back(p.range);
        extremes = extremes || NeedsExtremes(p.stats);
        ola_alone = ola_alone && OlaAlone(p.stats, ba_.array().dtype());
      }
    BatchSummaries summaries;
    std::vector<QueryCost> costs;
    const Status s = summaries.Summarize(ba_, ranges, ola_alone, extremes, &costs);
    for (const auto& n : ba_.TakeNotices()) PrintNotice(n);
    if (!s.ok()) return FailOrInterrupted(s);
    for (const QueryCost& c : costs) {
      array_bytes_ += c.array_bytes;
      tier_bytes_ += c.tier_bytes;
    }
    std::string out;
    size_t next = 0;
    for (const PendingLine& p : batch) {
      Status error = p.error;
      if (error.ok()) {
        auto answers = summaries.Answer(next++, p.stats, spec_.params, p.range, ba_.array().dtype());
        if (answers.ok()) {
          out += AnswerLine(spec_, p.line, p.range, *answers);
          ++answered_;
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
      std::fprintf(stderr, "momenta: %s\n", error.ToString().c_str());
      out += ErrorLine(spec_, p.line, error);
      ++skipped_;
    }
    WriteOut(out);
    std::fflush(stdout);
    return kExitOk;
  }

  void set_input_name(const std::string& name) { input_ = name; }
  std::string where(uint64_t line) const { return input_ + ":" + std::to_string(line); }
  uint64_t answered() const { return answered_; }
  uint64_t skipped() const { return skipped_; }
  uint64_t array_bytes() const { return array_bytes_; }
  uint64_t tier_bytes() const { return tier_bytes_; }

 private:
  BufferedArray& ba_;
  const QuerySpec& spec_;
  const bool skip_errors_;
  std::string input_;
  uint64_t answered_ = 0, skipped_ = 0;
  uint64_t array_bytes_ = 0, tier_bytes_ = 0;
};

}  // namespace

int AnswerRangeLines(BufferedArray& ba, const QuerySpec& spec, const std::string& input, bool skip_errors) {
  auto in = LineInput::Open(input);
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
  std::fprintf(stderr, "(%llu ranges answered%s in %.0f us; read %s from the array and %s from the disk tier)\n",
               static_cast<unsigned long long>(answerer.answered()),
               answerer.skipped() ? (", " + std::to_string(answerer.skipped()) + " lines skipped").c_str() : "",
               timer.ElapsedMicros(), FormatBytes(answerer.array_bytes()).c_str(),
               FormatBytes(answerer.tier_bytes()).c_str());
  return answerer.skipped() ? kExitRuntime : kExitOk;
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

int AnswerBins(BufferedArray& ba, const QuerySpec& spec, IndexRange range, uint64_t bins, uint64_t bin_size,
               bool snap) {
  if (bin_size > 0 && range.size() == 0)
    return UsageFail("--bin-size " + std::to_string(bin_size) + ": the range " + std::to_string(range.begin) + ":" +
                     std::to_string(range.end) + " is empty; give a range of at least one element");
  if (bin_size == 0 && (bins == 0 || bins > range.size()))
    return UsageFail("--bins " + std::to_string(bins) + ": the range " + std::to_string(range.begin) + ":" +
                     std::to_string(range.end) + " holds " + std::to_string(range.size()) +
                     " elements; give 1 <= K <= " + std::to_string(range.size()));
  Stopwatch timer;
  const std::vector<IndexRange> asked = bin_size > 0 ? SizedBins(range, bin_size) : EqualBins(range, bins);
  uint64_t moved = 0;
  const std::vector<IndexRange> edges = snap ? SnapBins(asked, ba.tree().layout().leaf_span(), ba.length(), &moved) : asked;
  BatchSummaries summaries;
  std::vector<QueryCost> costs;
  const Status s =
      summaries.Summarize(ba, edges, OlaAlone(spec.stats, ba.array().dtype()), NeedsExtremes(spec.stats), &costs);
  for (const auto& n : ba.TakeNotices()) PrintNotice(n);
  if (!s.ok()) return FailOrInterrupted(s);
  std::string out;
  uint64_t array_bytes = 0, tier_bytes = 0;
  for (size_t k = 0; k < edges.size(); ++k) {
    array_bytes += costs[k].array_bytes;
    tier_bytes += costs[k].tier_bytes;
    auto answers = summaries.Answer(k, spec.stats, spec.params, edges[k], ba.array().dtype());
    if (!answers.ok() && edges[k].size() == 0) {  // a bin snapping emptied: NaN where a count is needed
      std::vector<StatAnswer> nan;
      for (Stat stat : spec.stats) {
        auto answer = summaries.AnswerOne(k, stat, spec.params, edges[k], ba.array().dtype());
        nan.push_back(answer.ok() ? *answer : StatAnswer{stat, {NAN}, false, 0});
      }
      answers = std::move(nan);
    }
    if (!answers.ok()) return Fail(answers.status().WithContext(spec.path));
    if (spec.json) {
      out += "{\"range\":" + RangeJson(edges[k]);
      if (snap) out += ",\"asked\":" + RangeJson(asked[k]);
      out += ",\"stats\":" + StatsJson(*answers) + "}\n";
    } else {
      out += std::to_string(edges[k].begin) + ":" + std::to_string(edges[k].end) + " " + StatsText(*answers, " ") + "\n";
    }
  }
  WriteOut(out);
  std::fflush(stdout);  // the answers first, then the summary on stderr
  std::fprintf(stderr, "(%llu bins in %.0f us; read %s from the array and %s from the disk tier", 
               static_cast<unsigned long long>(asked.size()), timer.ElapsedMicros(), FormatBytes(array_bytes).c_str(),
               FormatBytes(tier_bytes).c_str());
  if (snap)
    std::fprintf(stderr, "; edges moved by at most %llu elements to leaf boundaries (leaves of %llu)",
                 static_cast<unsigned long long>(moved),
                 static_cast<unsigned long long>(ba.tree().layout().leaf_span()));
  std::fprintf(stderr, ")\n");
  return kExitOk;
}

}  // namespace momenta::cli
