#include "buffers/summarize_as_of.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "buffers/tree/moment_tree.h"
#include "storage/array/array_file.h"
#include "storage/log/log_reader.h"

namespace momenta {
namespace {

constexpr int kAttempts = 5;

// index -> its raw value at T, for every element updated after T by records
// up to `last` (the sequence the current state reflects).
Result<std::map<uint64_t, uint64_t>> ChangedSince(const std::string& log_dir, int64_t time, uint64_t last) {
  std::map<uint64_t, uint64_t> before;
  auto reader = LogReader::Open(log_dir);
  if (!reader.ok()) {
    if (reader.status().code() == Status::Code::kNotFound) return before;  // never updated
    return reader.status();
  }
  LogRecord r;
  bool first = true, after = false;
  uint64_t first_after = 0;
  int64_t first_after_time = 0;
  for (;;) {
    auto more = (*reader)->Next(&r);
    if (!more.ok()) return more.status();
    if (!*more || r.sequence > last) break;
    if (first) {
      first = false;
      if (r.sequence > 1 && r.time > time)
        return Status::InvalidArgument(log_dir, "the log now starts at sequence " + std::to_string(r.sequence) +
                                                    " (time " + std::to_string(r.time) + "); as of " +
                                                    std::to_string(time) +
                                                    " is before it (older segments were removed)");
    }
    if (r.time > time) {
      if (!after) {
        after = true;
        first_after = r.sequence;
        first_after_time = r.time;
      }
      before.emplace(r.index, r.old_raw);  // only the first record after T of each index counts
    } else if (after) {
      return Status::InvalidArgument(
          log_dir, "record " + std::to_string(r.sequence) + " is stamped " + std::to_string(r.time) +
                       ", at or before " + std::to_string(time) + ", after record " + std::to_string(first_after) +
                       " stamped " + std::to_string(first_after_time) +
                       ": the log's times go back, so no state is as of " + std::to_string(time));
    }
  }
  for (const LogDamage& d : (*reader)->damage())
    if (d.kind != LogDamage::Kind::kTornTail && d.kind != LogDamage::Kind::kOutOfPlace)
      return Status::InvalidArgument(log_dir, "records lost (" + d.ToString() + "): the state as of " +
                                                  std::to_string(time) + " cannot be rebuilt");
  return before;
}

}  // namespace

Status SummarizeAsOf(BufferedArray& array, std::span<const IndexRange> ranges, int64_t time, bool need_extremes,
                     std::vector<RangeSummary>* out) {
  const DType dtype = array.array().dtype();
  const int order = array.index_order();  // the order the summaries come in
  const std::string log_dir = array.sidecar() + "/log";
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    // The sequence the current state reflects, then what changed after T up to it.
    std::vector<uint64_t> as_of;
    MOMENTA_RETURN_IF_ERROR(array.SummarizeBatch(ranges, need_extremes, out, nullptr, &as_of));
    const uint64_t last = as_of.empty() ? array.applied_sequence() : as_of.front();
    if (std::any_of(as_of.begin(), as_of.end(), [&](uint64_t s) { return s != last; })) continue;
    auto changed = ChangedSince(log_dir, time, last);
    if (!changed.ok()) return changed.status();
    if (changed->empty()) return Status::OK();  // nothing after T: the current state is the one

    // Each range: the runs between its changed elements, read as they are, and each
    // changed element at its value at T.
    struct Piece {
      bool cell;
      uint64_t raw;  // the cell's value at T (cell pieces)
      size_t run;    // its index in `runs` (run pieces)
    };
    std::vector<IndexRange> runs;
    std::vector<std::vector<Piece>> pieces(ranges.size());
    for (size_t k = 0; k < ranges.size(); ++k) {
      uint64_t at = ranges[k].begin;
      for (auto it = changed->lower_bound(ranges[k].begin); it != changed->end() && it->first < ranges[k].end; ++it) {
        if (it->first > at) {
          pieces[k].push_back({false, 0, runs.size()});
          runs.push_back({at, it->first});
        }
        pieces[k].push_back({true, it->second, 0});
        at = it->first + 1;
      }
      if (at < ranges[k].end || pieces[k].empty()) {
        pieces[k].push_back({false, 0, runs.size()});
        runs.push_back({at, ranges[k].end});
      }
    }
    std::vector<RangeSummary> run_summaries;
    as_of.clear();
    MOMENTA_RETURN_IF_ERROR(array.SummarizeBatch(runs, need_extremes, &run_summaries, nullptr, &as_of));
    if (std::any_of(as_of.begin(), as_of.end(), [&](uint64_t s) { return s != last; })) continue;
    for (size_t k = 0; k < ranges.size(); ++k) {
      RangeSummary total(order);
      bool empty = true;
      for (const Piece& piece : pieces[k]) {
        RangeSummary part(order);
        if (piece.cell) {
          char bytes[8];
          std::memcpy(bytes, &piece.raw, sizeof bytes);  // little-endian: the element's bytes first
          double scratch[1];
          part = RangeSummary::OfElements(order, dtype, bytes, 1, scratch, need_extremes);
        } else {
          part = run_summaries[piece.run];
        }
        total = empty ? part : Merge(total, part);
        empty = false;
      }
      (*out)[k] = total;
    }
    return Status::OK();
  }
  return Status::Interrupted(array.array().path(), "a writer kept updating the array; the state as of " +
                                                       std::to_string(time) + " was not rebuilt (try again)");
}

}  // namespace momenta
