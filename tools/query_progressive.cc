#include "tools/query_progressive.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "buffers/algebra/square_bounds.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/ola/ola_progressive.h"
#include "storage/array/array_file.h"
#include "storage/util/json_writer.h"
#include "tools/cli_common.h"
#include "tools/query_answers.h"

namespace momenta::cli {
namespace {

// One printed line: a bound on the statistic, and what it cost so far.
struct Line {
  SumBound bound;
  bool exact = false;
  uint64_t array_bytes = 0;
  double micros = 0;
};

const char* NanName(NanState s) {
  switch (s) {
    case NanState::kNo:
      return "no";
    case NanState::kMaybe:
      return "maybe";
    case NanState::kCertain:
      return "certain";
  }
  return "?";
}

// A bound's three numbers as text: integers exactly, doubles shortest.
std::string Number(const SumBound& b, Int128 integer, double v) {
  return b.is_integer ? Int128ToString(integer) : FormatNumber(v);
}
std::string JsonNumber(const SumBound& b, Int128 integer, double v) {
  if (b.is_integer) return Int128ToString(integer);
  if (std::isfinite(v)) return FormatNumber(v);
  return JsonWriter().Double(v).str();  // "NaN", "Infinity", "-Infinity"
}

void Print(Stat stat, const Line& line, bool json, const LineSink& sink) {
  const SumBound& b = line.bound;
  const std::string estimate = (json ? JsonNumber : Number)(b, b.int_estimate, b.estimate);
  const std::string lower = (json ? JsonNumber : Number)(b, b.int_lower, b.lower);
  const std::string upper = (json ? JsonNumber : Number)(b, b.int_upper, b.upper);
  std::string out;
  if (json) {
    out = "{\"stat\":\"" + std::string(StatName(stat)) + "\",\"estimate\":" + estimate + ",\"lower\":" + lower +
          ",\"upper\":" + upper + ",\"exact\":" + (line.exact ? "true" : "false") + ",\"nan\":\"" + NanName(b.nan) +
          "\",\"array_bytes_read\":" + std::to_string(line.array_bytes) +
          ",\"elapsed_us\":" + JsonWriter().Double(line.micros).str() + "}\n";
  } else {
    out = std::string(StatName(stat)) + " " + estimate + " [" + lower + ", " + upper + "]" +
          (b.nan == NanState::kMaybe ? " or nan" : "") + (line.exact ? " exact" : " approx") + "\n";
  }
  sink(out);
}

// The count: known exactly from the range, nothing read.
SumBound CountBound(IndexRange range) {
  SumBound b;
  b.is_integer = true;
  b.int_estimate = b.int_lower = b.int_upper = range.size();
  b.estimate = b.lower = b.upper = static_cast<double>(range.size());
  b.exact = true;
  return b;
}

// The ordinary query's answer as a bound: its value, the interval `last`
// widened to hold it (rounding may put the buffer's answer just outside the
// interval of the exact one: the buffer's accuracy bound allows that).
SumBound FinalBound(const StatAnswer& answer, const SumBound& last) {
  SumBound b;
  b.exact = true;
  const long double v = answer.values[0];
  if (answer.is_integer) {
    b.is_integer = true;
    b.int_estimate = b.int_lower = b.int_upper = answer.integer;
    b.estimate = b.lower = b.upper = static_cast<double>(v);
    return b;
  }
  if (std::isnan(v)) {
    b.nan = NanState::kCertain;
    b.estimate = b.lower = b.upper = std::nan("");
    return b;
  }
  b.estimate = static_cast<double>(v);
  if (std::isinf(v) || last.nan == NanState::kCertain) {
    b.lower = b.upper = b.estimate;
    return b;
  }
  b.lower = std::min(last.lower, DoubleBelow(v));
  b.upper = std::max(last.upper, DoubleAbove(v));
  return b;
}

// Nothing left to read could change the answer: NaN, or one infinity with no NaN possible.
bool Decided(const SumBound& b) {
  return b.nan == NanState::kCertain || (b.nan == NanState::kNo && std::isinf(b.lower) && b.lower == b.upper);
}

// The final line: the ordinary query's answer, `last` widened to hold it.
// (Not the facade's Stat: for kind ola, Stat answers a float array's sum and
// mean from the Ola buffer alone, whose value may differ from the tree
// summary's in the last bits and whose array bytes read differ; the line
// this prints stays the tree summary's, as it always was.)
Status PrintFinal(BufferedArray& ba, const std::string& path, Stat stat, IndexRange range, const SumBound& last,
                  uint64_t bytes_before, const Stopwatch& timer, bool json, const LineSink& sink) {
  QueryCost cost;
  auto summary = ba.Summarize(range.begin, range.end, /*need_extremes=*/false, &cost);
  for (const auto& n : ba.TakeNotices()) PrintNotice(n);
  if (!summary.ok()) return summary.status();
  auto answer = ComputeStat(stat, {}, *summary, range.begin, ba.array().dtype());
  if (!answer.ok()) return answer.status().WithContext(path);
  Print(stat, Line{FinalBound(*answer, last), true, bytes_before + cost.array_bytes, timer.ElapsedMicros()}, json,
        sink);
  return Status::OK();
}

// Makes the progressive reader of `range` (make: ProgressiveSumOf or
// TreePiecesOf) into *progressive and starts it: its first bound. A damaged
// node (Corruption): the ordinary query rebuilds the buffer (with a notice),
// then the reader is made again over the new one and starts again.
template <typename Progressive>
Result<SumBound> StartOrRebuild(BufferedArray& ba, IndexRange range,
                                std::unique_ptr<Progressive> (*make)(BufferedArray&, uint64_t, uint64_t),
                                std::unique_ptr<Progressive>* progressive) {
  *progressive = make(ba, range.begin, range.end);
  auto started = (*progressive)->Start();
  if (started.ok() || started.status().code() != Status::Code::kCorruption) return started;
  auto rebuilt = ba.Summarize(range.begin, range.end, /*need_extremes=*/false);
  for (const auto& n : ba.TakeNotices()) PrintNotice(n);
  if (!rebuilt.ok()) return rebuilt.status();
  *progressive = make(ba, range.begin, range.end);
  return (*progressive)->Start();
}

// sumsq and rms: the tree's pieces (both kinds keep a tree with value moments
// and extremes), bounded by square_bounds.h after Start and each read.
Status AnswerSquaresProgressive(BufferedArray& ba, const std::string& path, Stat stat, IndexRange range, bool approx,
                                bool json, const LineSink& sink) {
  Stopwatch timer;
  if (stat == Stat::kRms && range.size() == 0)
    return Status::InvalidArgument("rms", "the range is empty").WithContext(path);
  std::unique_ptr<ProgressiveSum> progressive;
  auto started = StartOrRebuild(ba, range, &TreePiecesOf, &progressive);
  if (!started.ok()) return started.status();
  auto as_stat = [&](const SumBound& s) { return stat == Stat::kRms ? BoundRms(s, range.size()) : s; };
  SumBound last = BoundSumOfSquares(progressive->whole(), progressive->ends());
  Print(stat, Line{as_stat(last), approx && last.exact, 0, timer.ElapsedMicros()}, json, sink);
  if (approx) return Status::OK();
  while (!progressive->done() && !Decided(last)) {
    auto step = progressive->Next();
    if (!step.ok()) return step.status();
    last = NarrowBound(last, BoundSumOfSquares(progressive->whole(), progressive->ends()));
    Print(stat, Line{as_stat(last), false, progressive->array_bytes_read(), timer.ElapsedMicros()}, json, sink);
  }
  return PrintFinal(ba, path, stat, range, as_stat(last), progressive->array_bytes_read(), timer, json, sink);
}

}  // namespace

bool ServedProgressively(Stat stat) {
  return stat == Stat::kSum || stat == Stat::kCount || stat == Stat::kMean || stat == Stat::kSumsq ||
         stat == Stat::kRms;
}

int AnswerProgressive(BufferedArray& ba, const std::string& path, Stat stat, IndexRange range, bool approx, bool json) {
  const Status s = StreamProgressive(ba, path, stat, range, approx, json, [](const std::string& line) {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  });
  return s.ok() ? kExitOk : Fail(s);
}

Status StreamProgressive(BufferedArray& ba, const std::string& path, Stat stat, IndexRange range, bool approx,
                         bool json, const LineSink& sink) {
  if (stat == Stat::kSumsq || stat == Stat::kRms)
    return AnswerSquaresProgressive(ba, path, stat, range, approx, json, sink);
  Stopwatch timer;
  if (stat == Stat::kMean && range.size() == 0)
    return Status::InvalidArgument("mean", "the range is empty").WithContext(path);
  if (stat == Stat::kCount) {
    Print(stat, Line{CountBound(range), true, 0, timer.ElapsedMicros()}, json, sink);
    return Status::OK();
  }
  auto as_stat = [&](const SumBound& sum) { return stat == Stat::kMean ? BoundMean(sum, range.size()) : sum; };
  // Kind ola: coarse to fine through the Ola levels (ola_progressive.h); hbb: the tree's partial leaves.
  std::unique_ptr<OlaProgressiveSum> progressive;
  auto bound = StartOrRebuild(ba, range, &ProgressiveSumOf, &progressive);
  if (!bound.ok()) return bound.status();
  if (approx) {
    Print(stat, Line{as_stat(*bound), bound->exact, progressive->array_bytes_read(), timer.ElapsedMicros()}, json,
          sink);
    return Status::OK();
  }
  Print(stat, Line{as_stat(*bound), false, 0, timer.ElapsedMicros()}, json, sink);
  SumBound last = *bound;
  while (!progressive->done() && !Decided(last)) {
    bound = progressive->Next();
    // A damaged Ola block found by a level's bound: the ordinary query below rebuilds it (a notice).
    if (!bound.ok() && bound.status().code() == Status::Code::kCorruption && progressive->through_levels()) break;
    if (!bound.ok()) return bound.status();
    last = *bound;
    Print(stat, Line{as_stat(last), false, progressive->array_bytes_read(), timer.ElapsedMicros()}, json, sink);
  }
  // The last line: the ordinary query, consistent with one log sequence.
  return PrintFinal(ba, path, stat, range, as_stat(last), progressive->array_bytes_read(), timer, json, sink);
}

}  // namespace momenta::cli
