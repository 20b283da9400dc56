#include "python/src/summary_binding.h"

#include <pybind11/stl.h>

#include <cstring>
#include <limits>

#include "python/src/py_status.h"
#include "python/src/stat_answers.h"

namespace momenta::python {
namespace {

constexpr char kMagic[4] = {'M', 'S', 'U', 'M'};
constexpr uint16_t kVersion = 2;  // 2: nodes with the exact sum of squares (1: without)
constexpr size_t kHeaderBytes = 32;
constexpr uint32_t kFlagExtremes = 1;

void PutU64(char* at, uint64_t v) { std::memcpy(at, &v, 8); }
uint64_t GetU64(const char* at) {
  uint64_t v;
  std::memcpy(&v, at, 8);
  return v;
}

std::string Where(const PlacedSummary& s) {
  return "summary " + std::to_string(s.start) + ":" + std::to_string(s.start + s.range.count());
}

// Checks a node read from outside (bytes, a row) and decodes it.
RangeSummary DecodeNode(const double* node, int order, uint64_t count, const std::string& what) {
  const NodeCodec codec(order, /*bind_slot=*/false);
  if (codec.Classify(0, node) != NodeCodec::NodeState::kWritten)
    ThrowIfError(Status::Corruption(what, "its check does not match (damaged or not a summary)"));
  RangeSummary s = codec.Decode(node, count);
  return s;
}

// Decode trusts the non-finite counts (slots 2J+12..2J+14) to fit the run;
// checks that first.
void CheckCounts(const double* node, int order, uint64_t count, const std::string& what) {
  uint64_t c[3];
  std::memcpy(c, node + 2 * order + 12, sizeof c);
  if (c[0] > count || c[1] > count || c[2] > count || c[0] + c[1] + c[2] > count)
    ThrowIfError(Status::Corruption(what, "more non-finite cells than cells"));
}

py::bytes ToBytes(const PlacedSummary& s) {
  const NodeCodec codec(s.range.index.order(), false);
  std::string out(kHeaderBytes + codec.bytes(), '\0');
  std::memcpy(out.data(), kMagic, 4);
  std::memcpy(out.data() + 4, &kVersion, 2);
  out[6] = static_cast<char>(s.dtype);
  out[7] = static_cast<char>(s.range.index.order());
  PutU64(out.data() + 8, s.start);
  PutU64(out.data() + 16, s.range.count());
  const uint32_t flags = s.extremes ? kFlagExtremes : 0;
  std::memcpy(out.data() + 24, &flags, 4);
  std::vector<double> node(codec.doubles());
  codec.Encode(s.range, 0, node.data());
  std::memcpy(out.data() + kHeaderBytes, node.data(), codec.bytes());
  return py::bytes(out);
}

PlacedSummary FromBytes(const py::bytes& b) {
  const std::string in = b;
  const std::string what = "summary bytes";
  if (in.size() < kHeaderBytes || std::memcmp(in.data(), kMagic, 4) != 0)
    ThrowIfError(Status::Corruption(what, "not a momenta summary (" + std::to_string(in.size()) + " bytes)"));
  uint16_t version;
  std::memcpy(&version, in.data() + 4, 2);
  if (version != kVersion)
    ThrowIfError(Status::NotSupported(
        what, "version " + std::to_string(version) + " (this build reads " + std::to_string(kVersion) + ")"));
  const auto code = static_cast<uint8_t>(in[6]);
  const int order = static_cast<uint8_t>(in[7]);
  if (code > static_cast<uint8_t>(DType::kU1)) ThrowIfError(Status::Corruption(what, "unknown dtype code"));
  if (order > kMaxMomentOrder) ThrowIfError(Status::Corruption(what, "order above 8"));
  const NodeCodec codec(order, false);
  if (in.size() != kHeaderBytes + codec.bytes())
    ThrowIfError(Status::Corruption(what, std::to_string(in.size()) + " bytes where order " + std::to_string(order) +
                                              " needs " + std::to_string(kHeaderBytes + codec.bytes())));
  PlacedSummary s;
  s.dtype = static_cast<DType>(code);
  s.start = GetU64(in.data() + 8);
  const uint64_t count = GetU64(in.data() + 16);
  if (s.start + count < s.start) ThrowIfError(Status::Corruption(what, "start + count overflows"));
  uint32_t flags;
  std::memcpy(&flags, in.data() + 24, 4);
  s.extremes = (flags & kFlagExtremes) != 0;
  std::vector<double> node(codec.doubles());
  std::memcpy(node.data(), in.data() + kHeaderBytes, codec.bytes());
  CheckCounts(node.data(), order, count, what);
  s.range = DecodeNode(node.data(), order, count, what);
  return s;
}

// `parts` merged left to right with the library's Merge. Every part must
// start where the one before stops and have the first one's dtype; orders
// may differ (the result has the smallest, higher moments being dropped).
PlacedSummary MergeAll(const std::vector<const PlacedSummary*>& parts) {
  if (parts.empty()) ThrowIfError(Status::InvalidArgument("merge_summaries", "no summaries to merge"));
  int order = kMaxMomentOrder;
  for (const auto* p : parts) order = std::min(order, p->range.index.order());
  PlacedSummary out = *parts[0];
  if (out.range.index.order() != order) out.range.index = out.range.index.Truncated(order);
  for (size_t k = 1; k < parts.size(); ++k) {
    const PlacedSummary& next = *parts[k];
    const uint64_t stop = out.start + out.range.count();
    if (next.dtype != out.dtype)
      ThrowIfError(Status::InvalidArgument("merge_summaries", "summary #" + std::to_string(k) + " is of dtype " +
                                                                  std::string(DTypeName(next.dtype)) + ", #0 of " +
                                                                  std::string(DTypeName(out.dtype))));
    if (next.start != stop)
      ThrowIfError(Status::InvalidArgument(
          "merge_summaries", "summary #" + std::to_string(k) + " (" + Where(next).substr(8) + ") does not start at " +
                                 std::to_string(stop) + ", where the ones before it stop"));
    RangeSummary right = next.range;
    if (right.index.order() != order) right.index = right.index.Truncated(order);
    out.range = Merge(out.range, right);
    out.extremes = out.extremes && next.extremes;
  }
  if (!out.extremes) out.range.extremes = Extremes{};
  return out;
}

Result<StatAnswer> Answer(const PlacedSummary& s, Stat stat, const StatParams& params) {
  const Stat one[] = {stat};
  if (NeedsExtremes(one) && !s.extremes)
    return Status::InvalidArgument(Where(s),
                                   std::string(StatName(stat)) + " needs the extremes, and it was taken without them");
  auto a = ComputeStat(stat, params, s.range, s.start, s.dtype);
  if (!a.ok()) return a.status().WithContext(Where(s));
  return a;
}

// The statistics of ranges from rows: range r merges rows
// [ends[r-1], ends[r]) (adjacent, in index order), starting at range_starts[r].
py::list RowsStats(const py::array_t<double, py::array::c_style>& rows, const py::array_t<int64_t>& row_starts,
                   const py::array_t<int64_t>& row_stops, const py::array_t<int64_t>& range_starts,
                   const py::array_t<int64_t>& ends, const std::string& dtype_name, int order, bool extremes,
                   const std::vector<int>& codes, bool skipna, int ddof, int k, double about, int degree,
                   bool empty_nan, const std::string& what) {
  const DType dtype = ValueOrThrow(ParseDTypeName(dtype_name));
  if (order < 0 || order > kMaxMomentOrder) ThrowIfError(Status::InvalidArgument(what, "order outside 0..8"));
  const NodeCodec codec(order, false);
  const auto m = static_cast<size_t>(row_starts.size());
  const auto r = static_cast<size_t>(ends.size());
  if (rows.ndim() != 2 || static_cast<size_t>(rows.shape(0)) != m ||
      static_cast<size_t>(rows.shape(1)) != codec.doubles() || static_cast<size_t>(row_stops.size()) != m ||
      static_cast<size_t>(range_starts.size()) != r)
    ThrowIfError(Status::InvalidArgument(what, "rows, their starts and stops, and the ranges do not agree in shape"));
  std::vector<Stat> stats;
  for (int c : codes) stats.push_back(StatOf(c));
  if (NeedsExtremes(stats) && !extremes)
    ThrowIfError(Status::InvalidArgument(what, "min and max need summaries taken with their extremes"));
  const StatParams params = MakeParams(skipna, ddof, k, about, degree);
  StatColumns columns(r, stats, dtype, k >= 0 ? k : order, degree);
  const double* data = rows.data();
  const int64_t* rs = row_starts.data();
  const int64_t* re = row_stops.data();
  const int64_t* ps = range_starts.data();
  const int64_t* e = ends.data();
  {
    py::gil_scoped_release unlocked;
    size_t row = 0;
    for (size_t g = 0; g < r; ++g) {
      const auto end = static_cast<size_t>(e[g]);
      if (end < row || end > m) ThrowIfError(Status::InvalidArgument(what, "range ends out of order"));
      RangeSummary total(order);
      uint64_t at = static_cast<uint64_t>(ps[g]);
      for (; row < end; ++row) {
        const std::string piece = what + ": piece " + std::to_string(rs[row]) + ":" + std::to_string(re[row]);
        if (rs[row] < 0 || re[row] < rs[row] || static_cast<uint64_t>(rs[row]) != at)
          ThrowIfError(Status::InvalidArgument(
              piece, "does not start where the range's pieces before it stop (" + std::to_string(at) + ")"));
        const double* node = data + row * codec.doubles();
        const auto count = static_cast<uint64_t>(re[row] - rs[row]);
        CheckCounts(node, order, count, piece);
        RangeSummary s = DecodeNode(node, order, count, piece);
        if (!extremes) s.extremes = Extremes{};
        total = total.count() == 0 ? s : Merge(total, s);
        at += count;
      }
      for (size_t c = 0; c < stats.size(); ++c) {
        auto answer = ComputeStat(stats[c], params, total, static_cast<uint64_t>(ps[g]), dtype);
        if (!answer.ok()) {
          if (!(empty_nan && total.count() == 0))
            ThrowIfError(answer.status().WithContext(what + ": range #" + std::to_string(g) + " " +
                                                     std::to_string(ps[g]) + ":" + std::to_string(at)));
          columns.PutNan(g, c);
          continue;
        }
        ThrowIfError(columns.Put(g, c, *answer, what));
      }
    }
  }
  return columns.Finish();
}

}  // namespace

py::array_t<double> SummaryRows(const std::vector<RangeSummary>& summaries, int order) {
  const NodeCodec codec(order, false);
  py::array_t<double> out({static_cast<py::ssize_t>(summaries.size()), static_cast<py::ssize_t>(codec.doubles())});
  double* d = out.mutable_data();
  for (size_t k = 0; k < summaries.size(); ++k) codec.Encode(summaries[k], 0, d + k * codec.doubles());
  return out;
}

void RegisterSummary(py::module_& m) {
  py::class_<PlacedSummary>(m, "Summary",
                            "The range summary of one run [start, stop) of an array: index and value moments, "
                            "extremes, non-finite counts, the exact integer sum. Small and picklable; merge "
                            "adjacent ones with momenta.merge_summaries, answer with momenta.summary_stat.")
      .def_property_readonly("start", [](const PlacedSummary& s) { return s.start; })
      .def_property_readonly("stop", [](const PlacedSummary& s) { return s.start + s.range.count(); })
      .def_property_readonly("count", [](const PlacedSummary& s) { return s.range.count(); })
      .def_property_readonly("order", [](const PlacedSummary& s) { return s.range.index.order(); })
      .def_property_readonly("dtype", [](const PlacedSummary& s) { return std::string(DTypeName(s.dtype)); })
      .def_property_readonly("has_extremes", [](const PlacedSummary& s) { return s.extremes; })
      .def(
          "moved",
          [](const PlacedSummary& s, uint64_t start) {
            PlacedSummary out = s;
            out.start = start;
            return out;
          },
          py::arg("start"), "The same cells placed at another start (a shard's summary in the global index).")
      .def("to_bytes", &ToBytes)
      .def_static("from_bytes", &FromBytes)
      .def("__repr__",
           [](const PlacedSummary& s) {
             return "<momenta.Summary " + std::to_string(s.start) + ":" + std::to_string(s.start + s.range.count()) +
                    " " + std::string(DTypeName(s.dtype)) + " J=" + std::to_string(s.range.index.order()) +
                    (s.extremes ? "" : " no extremes") + ">";
           })
      .def(py::pickle([](const PlacedSummary& s) { return ToBytes(s); },
                      [](const py::bytes& b) { return FromBytes(b); }));
  m.def("_merge_summaries", [](const std::vector<const PlacedSummary*>& parts) { return MergeAll(parts); });
  m.def("_summary_stat",
        [](const PlacedSummary& s, int code, bool skipna, int ddof, int order, double about, int degree) {
          auto a = Answer(s, StatOf(code), MakeParams(skipna, ddof, order, about, degree));
          return AnswerObject(ValueOrThrow(std::move(a)));
        });
  m.def("_summary_from_row", [](const py::array_t<double, py::array::c_style>& row, uint64_t start, uint64_t stop,
                                const std::string& dtype, int order, bool extremes) {
    if (order < 0 || order > kMaxMomentOrder || stop < start ||
        row.size() != static_cast<py::ssize_t>(NodeCodec(order, false).doubles()))
      ThrowIfError(Status::InvalidArgument("summary row", "does not match its order or range"));
    PlacedSummary s;
    s.dtype = ValueOrThrow(ParseDTypeName(dtype));
    s.start = start;
    s.extremes = extremes;
    const std::string what = "summary row " + std::to_string(start) + ":" + std::to_string(stop);
    CheckCounts(row.data(), order, stop - start, what);
    s.range = DecodeNode(row.data(), order, stop - start, what);
    if (!extremes) s.range.extremes = Extremes{};
    return s;
  });
  m.def("_rows_stats", &RowsStats);
  m.def("_empty_summary", [](uint64_t start, const std::string& dtype, int order) {
    if (order < 0 || order > kMaxMomentOrder) ThrowIfError(Status::InvalidArgument("summary", "order outside 0..8"));
    PlacedSummary s;
    s.range = RangeSummary(order);
    s.start = start;
    s.dtype = ValueOrThrow(ParseDTypeName(dtype));
    s.extremes = true;  // an empty run's extremes are the (empty) identity
    return s;
  });
}

}  // namespace momenta::python
