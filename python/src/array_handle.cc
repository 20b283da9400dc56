#include "python/src/array_handle.h"

#include <pybind11/stl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>

#include "buffers/algebra/square_bounds.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/create_array.h"
#include "buffers/ola/ola_progressive.h"
#include "buffers/summarize_as_of.h"
#include "python/src/interruptible.h"
#include "python/src/py_status.h"
#include "python/src/stat_answers.h"
#include "storage/array/array_file.h"
#include "storage/array/sidecar.h"

namespace momenta::python {
namespace {

// Ranges summarized per SummarizeBatch call: bounds the summaries held at
// once (a few hundred bytes each); the library batches reads 256 at a time.
constexpr size_t kBatchChunk = 4096;
// Updates past which Apply and Write run interruptibly (a thread of their own).
constexpr size_t kInterruptibleUpdates = size_t{1} << 16;

BufferedArrayOptions MakeOptions(const OpenArgs& args, bool fresh_array) {
  BufferedArrayOptions options;
  options.io.kind = ValueOrThrow(ParseIoKind(args.io, "io"));
  options.io.writable = args.writable;
  options.tree = args.tree;
  options.sync = ValueOrThrow(ParseLogSync(args.sync, "sync"));
  options.sidecar = args.sidecar;
  options.fresh_array = fresh_array;
  options.build_advice = "open it once as a user who may write there (or run 'momenta build " + args.path + "')";
  options.sidecar_advice = "sidecar=DIR";
  return options;
}

// Values to write: the array's numbers as Values of their kind (int64,
// uint64, float64; the Python layer converts to one of them). Whether each
// fits the dtype is the library's check.
std::vector<Value> ValuesOf(const py::array& values) {
  const py::dtype dt = values.dtype();
  const char kind = dt.kind();
  const auto n = static_cast<size_t>(values.size());
  std::vector<Value> out(n);
  if (values.ndim() != 1 || dt.itemsize() != 8 || !(values.flags() & py::array::c_style))
    ThrowIfError(Status::InvalidArgument("values", "expected a contiguous 1-d array of 8-byte numbers"));
  const void* data = values.data();
  if (kind == 'i') {
    const auto* v = static_cast<const int64_t*>(data);
    for (size_t k = 0; k < n; ++k) out[k] = Value::Int(v[k]);
  } else if (kind == 'u') {
    const auto* v = static_cast<const uint64_t*>(data);
    for (size_t k = 0; k < n; ++k) out[k] = Value::UInt(v[k]);
  } else if (kind == 'f') {
    const auto* v = static_cast<const double*>(data);
    for (size_t k = 0; k < n; ++k) out[k] = Value::Float(v[k]);
  } else {
    ThrowIfError(Status::InvalidArgument("values", "expected int64, uint64 or float64 numbers"));
  }
  return out;
}

}  // namespace

ArrayHandle::ArrayHandle(std::unique_ptr<BufferedArray> ba, std::string path)
    : ba_(std::move(ba)),
      path_(std::move(path)),
      writable_(ba_->writable()),
      dtype_(ba_->array().dtype()),
      order_(ba_->index_order()) {}

ArrayHandle::~ArrayHandle() {
  if (!ba_) return;
  // Dropped by the garbage collector (the GIL held): the writer's close does
  // I/O, so let other threads run meanwhile.
  py::gil_scoped_release unlocked;
  std::unique_lock hold(mu_);
  ba_.reset();
}

std::unique_ptr<ArrayHandle> ArrayHandle::Open(const OpenArgs& args) {
  const BufferedArrayOptions options = MakeOptions(args, /*fresh_array=*/false);
  std::vector<std::string> notices;
  auto opened = RunInterruptible([&] { return BufferedArray::Open(args.path, options, &notices); });
  WarnNotices(notices);
  return std::unique_ptr<ArrayHandle>(new ArrayHandle(ValueOrThrow(std::move(opened)), args.path));
}

std::unique_ptr<ArrayHandle> ArrayHandle::Create(const OpenArgs& args, const std::string& dtype_name,
                                                 const std::vector<uint64_t>& shape) {
  const DType dtype = ValueOrThrow(ParseDTypeName(dtype_name));
  const BufferedArrayOptions options = MakeOptions(args, /*fresh_array=*/true);  // a writer: CreateBufferedArray
  std::vector<std::string> notices;
  auto opened = RunInterruptible([&] { return CreateBufferedArray(args.path, dtype, shape, options, &notices); });
  WarnNotices(notices);
  return std::unique_ptr<ArrayHandle>(new ArrayHandle(ValueOrThrow(std::move(opened)), args.path));
}

BufferedArray& ArrayHandle::Live() {
  if (!ba_) ThrowIfError(Status::InvalidArgument(path_, "the array is closed"));
  return *ba_;
}

bool ArrayHandle::closed() const {
  std::shared_lock hold(mu_);
  return ba_ == nullptr;
}

py::dict ArrayHandle::Info() {
  std::shared_lock hold(mu_);
  BufferedArray& ba = Live();
  const NpyHeader& h = ba.array().header();
  py::dict d;
  d["path"] = path_;
  d["dtype"] = std::string(DTypeName(h.dtype));
  py::tuple shape(h.shape.size());
  for (size_t k = 0; k < h.shape.size(); ++k) shape[k] = py::int_(h.shape[k]);
  d["shape"] = shape;
  d["data_offset"] = h.data_offset;
  d["length"] = ba.length();
  d["order"] = order_.load();
  d["leaf_span"] = ba.leaf_span();
  d["writable"] = writable_;
  d["sidecar"] = ba.sidecar();
  d["io"] = ba.array().io().Name();
  return d;
}

py::object ArrayHandle::Stat(int code, int64_t p, int64_t q, bool skipna, int ddof, int order, double about,
                             int degree) {
  const momenta::Stat stat = StatOf(code);
  const StatParams params = MakeParams(skipna, ddof, order, about, degree);
  const momenta::Stat one[] = {stat};
  Result<std::vector<StatAnswer>> answer = Status::InvalidArgument(path_, "no answer");
  std::vector<std::string> notices;
  {
    py::gil_scoped_release unlocked;
    QueryLock hold(mu_, writable_);
    BufferedArray& ba = Live();
    const IndexRange r = Resolve(p, q, ba.length());
    answer = ba.Stat(r.begin, r.end, one, params);
    notices = ba.TakeNotices();
    if (!answer.ok()) throw StatusError{answer.status()};
  }
  if (!notices.empty()) WarnNotices(notices);
  return AnswerObject((*answer)[0]);
}

py::tuple ArrayHandle::Approx(int code, int64_t p, int64_t q) {
  const momenta::Stat stat = StatOf(code);
  const bool squares = stat == momenta::Stat::kSumsq || stat == momenta::Stat::kRms;
  if (stat != momenta::Stat::kSum && stat != momenta::Stat::kMean && !squares)
    ThrowIfError(Status::InvalidArgument(path_, "approx= answers sum, mean, sumsq and rms"));
  SumBound bound;
  std::vector<std::string> notices;
  {
    py::gil_scoped_release unlocked;
    QueryLock hold(mu_, writable_);
    BufferedArray& ba = Live();
    const IndexRange r = Resolve(p, q, ba.length());
    if ((stat == momenta::Stat::kMean || stat == momenta::Stat::kRms) && r.size() == 0)
      ThrowIfError(Status::InvalidArgument(StatName(stat), "the range is empty").WithContext(path_));
    // The first bound from the nodes alone: the sum's (through the Ola levels on kind ola), or
    // Σa²'s over the tree's pieces (square_bounds.h; both kinds keep the tree).
    auto take = [&]() -> Result<SumBound> {
      if (!squares) return ProgressiveSumOf(ba, r.begin, r.end)->Start();
      const auto pieces = TreePiecesOf(ba, r.begin, r.end);
      auto started = pieces->Start();
      if (!started.ok()) return started.status();
      return BoundSumOfSquares(pieces->whole(), pieces->ends());
    };
    auto first = take();
    if (!first.ok() && first.status().code() == Status::Code::kCorruption) {
      // A damaged node: the ordinary query rebuilds the buffer (a notice), then the bound is taken again.
      auto rebuilt = ba.Summarize(r.begin, r.end, false);
      notices = ba.TakeNotices();
      if (!rebuilt.ok()) throw StatusError{rebuilt.status()};
      first = take();
    }
    if (!first.ok()) throw StatusError{first.status()};
    bound = stat == momenta::Stat::kMean  ? BoundMean(*first, r.size())
            : stat == momenta::Stat::kRms ? BoundRms(*first, r.size())
                                          : *first;
  }
  if (!notices.empty()) WarnNotices(notices);
  const char* nan = bound.nan == NanState::kNo ? "no" : bound.nan == NanState::kMaybe ? "maybe" : "certain";
  if (bound.is_integer)
    return py::make_tuple(IntegerObject(bound.int_estimate), IntegerObject(bound.int_lower),
                          IntegerObject(bound.int_upper), bound.exact, nan);
  return py::make_tuple(bound.estimate, bound.lower, bound.upper, bound.exact, nan);
}

IndexRange ArrayHandle::Resolve(int64_t p, int64_t q, uint64_t length) const {
  // Negative sides count from the end, as `query --range` (tools/cli_parse.cc);
  // never clipped or emptied, and the message says why, in RangeProblem's
  // words (and _select.range_problem's).
  const auto n = static_cast<int64_t>(length);
  const int64_t b = p < 0 ? p + n : p, e = q < 0 ? q + n : q;
  const std::string why = RangeProblem(b, e, length);
  if (!why.empty())
    ThrowIfError(Status::OutOfRange(path_, "range " + std::to_string(p) + ":" + std::to_string(q) +
                                               " is not a range of the array (length " + std::to_string(n) +
                                               "): " + why));
  return {static_cast<uint64_t>(b), static_cast<uint64_t>(e)};
}

PlacedSummary ArrayHandle::Summary(int64_t p, int64_t q, bool extremes, const int64_t* as_of, uint64_t* array_bytes) {
  PlacedSummary out;
  out.dtype = dtype_;
  out.extremes = extremes;
  std::vector<std::string> notices;
  {
    py::gil_scoped_release unlocked;
    QueryLock hold(mu_, writable_);
    BufferedArray& ba = Live();
    const IndexRange r = Resolve(p, q, ba.length());
    out.start = r.begin;
    if (as_of) {
      std::vector<RangeSummary> one;
      const Status st = SummarizeAsOf(ba, std::span<const IndexRange>(&r, 1), *as_of, extremes, &one);
      notices = ba.TakeNotices();
      ThrowIfError(st);
      out.range = std::move(one[0]);
    } else {
      QueryCost cost;
      auto summary = ba.Summarize(r.begin, r.end, extremes, &cost);
      notices = ba.TakeNotices();
      if (!summary.ok()) throw StatusError{summary.status()};
      out.range = std::move(summary).value();
      if (array_bytes) *array_bytes = cost.array_bytes;
    }
  }
  if (!notices.empty()) WarnNotices(notices);
  return out;
}

py::array_t<double> ArrayHandle::SummaryRows(const py::array_t<int64_t>& starts, const py::array_t<int64_t>& stops,
                                             bool extremes, const py::object& as_of) {
  const bool past = !as_of.is_none();
  const int64_t time = past ? as_of.cast<int64_t>() : 0;
  if (starts.ndim() != 1 || stops.ndim() != 1 || starts.size() != stops.size())
    ThrowIfError(Status::InvalidArgument("summaries", "starts and stops must be 1-d arrays of one length"));
  const auto n = static_cast<size_t>(starts.size());
  std::vector<RangeSummary> all;
  std::vector<std::string> notices;
  int order = 0;
  {
    const int64_t* s = starts.data();
    const int64_t* e = stops.data();
    py::gil_scoped_release unlocked;
    QueryLock hold(mu_, writable_);
    BufferedArray& ba = Live();
    order = ba.tree_order();
    for (size_t k = 0; k < n; ++k)
      if (s[k] < 0 || e[k] < s[k] || static_cast<uint64_t>(e[k]) > ba.length())
        ThrowIfError(Status::OutOfRange(path_, "range #" + std::to_string(k) + " " + std::to_string(s[k]) + ":" +
                                                   std::to_string(e[k]) + " is outside the array (length " +
                                                   std::to_string(ba.length()) +
                                                   "): " + RangeProblem(s[k], e[k], ba.length())));
    std::vector<IndexRange> ranges;
    std::vector<RangeSummary> summaries;
    all.reserve(n);
    for (size_t first = 0; first < n; first += kBatchChunk) {
      const size_t count = std::min(kBatchChunk, n - first);
      ranges.resize(count);
      for (size_t k = 0; k < count; ++k)
        ranges[k] = {static_cast<uint64_t>(s[first + k]), static_cast<uint64_t>(e[first + k])};
      const Status st = past ? SummarizeAsOf(ba, ranges, time, extremes, &summaries)
                             : ba.SummarizeBatch(ranges, extremes, &summaries);
      for (auto& note : ba.TakeNotices()) notices.push_back(std::move(note));
      ThrowIfError(st);
      for (auto& one : summaries) all.push_back(std::move(one));
    }
  }
  if (!notices.empty()) WarnNotices(notices);
  return momenta::python::SummaryRows(all, order);
}

py::list ArrayHandle::Stats(const py::array_t<int64_t>& starts, const py::array_t<int64_t>& stops,
                            const std::vector<int>& codes, bool skipna, int ddof, int order, double about, int degree,
                            bool empty_nan) {
  if (starts.ndim() != 1 || stops.ndim() != 1 || starts.size() != stops.size())
    ThrowIfError(Status::InvalidArgument("stats", "starts and stops must be 1-d arrays of one length"));
  const auto n = static_cast<size_t>(starts.size());
  std::vector<momenta::Stat> stats;
  for (int c : codes) stats.push_back(StatOf(c));
  const StatParams params = MakeParams(skipna, ddof, order, about, degree);
  // The width of each list statistic: moments 0..K, polyfit c_0..c_D.
  const int moments_k = order >= 0 ? order : order_.load();
  StatColumns columns(n, stats, dtype_, moments_k, degree);
  std::vector<std::string> notices;
  {
    const int64_t* s = starts.data();
    const int64_t* e = stops.data();
    py::gil_scoped_release unlocked;
    QueryLock hold(mu_, writable_);
    BufferedArray& ba = Live();
    std::vector<IndexRange> ranges;
    RangeAnswers summaries;
    for (size_t k = 0; k < n; ++k)
      if (s[k] < 0 || e[k] < s[k] || static_cast<uint64_t>(e[k]) > ba.length())
        ThrowIfError(Status::OutOfRange(path_, "range #" + std::to_string(k) + " " + std::to_string(s[k]) + ":" +
                                                   std::to_string(e[k]) + " is outside the array (length " +
                                                   std::to_string(ba.length()) +
                                                   "): " + RangeProblem(s[k], e[k], ba.length())));
    for (size_t first = 0; first < n; first += kBatchChunk) {
      const size_t count = std::min(kBatchChunk, n - first);
      ranges.resize(count);
      for (size_t k = 0; k < count; ++k)
        ranges[k] = {static_cast<uint64_t>(s[first + k]), static_cast<uint64_t>(e[first + k])};
      const Status st = ba.StatBatch(ranges, stats, &summaries);
      for (auto& note : ba.TakeNotices()) notices.push_back(std::move(note));
      ThrowIfError(st);
      for (size_t k = 0; k < count; ++k) {
        const size_t row = first + k;
        for (size_t c = 0; c < stats.size(); ++c) {
          auto answer = summaries.AnswerOne(k, stats[c], params);
          if (!answer.ok()) {
            if (!(empty_nan && ranges[k].size() == 0))
              throw StatusError{answer.status().WithContext(path_ + ": range #" + std::to_string(row) + " " +
                                                            std::to_string(ranges[k].begin) + ":" +
                                                            std::to_string(ranges[k].end))};
            columns.PutNan(row, c);
            continue;
          }
          ThrowIfError(columns.Put(row, c, *answer, path_));
        }
      }
    }
  }
  if (!notices.empty()) WarnNotices(notices);
  return columns.Finish();
}

void ArrayHandle::Write(uint64_t first, const py::array& values, int64_t time) {
  std::vector<Value> v = ValuesOf(values);
  auto work = [&] {
    std::unique_lock hold(mu_);
    return ba_ ? ba_->Write(first, v, time) : Status::InvalidArgument(path_, "the array is closed");
  };
  ThrowIfError(v.size() >= kInterruptibleUpdates ? RunInterruptible(work) : RunUnlocked(work));
}

void ArrayHandle::Apply(const py::array_t<int64_t>& indices, const py::array& values, const py::object& times,
                        int64_t time) {
  const std::vector<Value> v = ValuesOf(values);
  const auto n = static_cast<size_t>(indices.size());
  if (indices.ndim() != 1 || v.size() != n)
    ThrowIfError(Status::InvalidArgument("update", "indices and values must be 1-d arrays of one length"));
  std::vector<IndexedValue> updates(n);
  const int64_t* idx = indices.data();
  const int64_t* t = nullptr;
  py::array_t<int64_t> times_array;
  if (!times.is_none()) {
    times_array = py::array_t<int64_t>::ensure(times);
    if (!times_array || times_array.ndim() != 1 || static_cast<size_t>(times_array.size()) != n)
      ThrowIfError(Status::InvalidArgument("update", "times must be a 1-d array as long as the indices"));
    t = times_array.data();
  }
  for (size_t k = 0; k < n; ++k) {
    if (idx[k] < 0)
      ThrowIfError(Status::OutOfRange(
          path_, "update #" + std::to_string(k) + ": index " + std::to_string(idx[k]) + " is before the start"));
    updates[k] = {static_cast<uint64_t>(idx[k]), v[k], t ? t[k] : time};
    if (t && t[k] == kLogTimeNow)
      ThrowIfError(Status::InvalidArgument("update", "time " + std::to_string(t[k]) + " is reserved"));
  }
  auto work = [&] {
    std::unique_lock hold(mu_);
    return ba_ ? ba_->Apply(updates) : Status::InvalidArgument(path_, "the array is closed");
  };
  ThrowIfError(n >= kInterruptibleUpdates ? RunInterruptible(work) : RunUnlocked(work));
}

void ArrayHandle::Commit() {
  ThrowIfError(RunUnlocked([&] {
    std::unique_lock hold(mu_);
    return Live().Commit();
  }));
}

uint64_t ArrayHandle::Rebuild(const TreeOptions& tree) {
  auto built = RunInterruptible([&]() -> Result<BuildStats> {
    std::unique_lock hold(mu_);
    if (!ba_) return Status::InvalidArgument(path_, "the array is closed");
    auto stats = ba_->Rebuild(tree);
    order_ = ba_->index_order();
    return stats;
  });
  return ValueOrThrow(std::move(built)).data_bytes_read;
}

void ArrayHandle::Close() {
  ThrowIfError(RunUnlocked([&] {
    std::unique_lock hold(mu_);
    if (!ba_) return Status::OK();  // idempotent
    Status s = ba_->Close();
    ba_.reset();
    return s;
  }));
}

double ArrayHandle::TimeStat(int code, const py::array_t<int64_t>& starts, const py::array_t<int64_t>& stops,
                             int rounds) {
  const momenta::Stat stat = StatOf(code);
  const momenta::Stat one[] = {stat};
  const int64_t* s = starts.data();
  const int64_t* e = stops.data();
  const auto n = static_cast<size_t>(std::min(starts.size(), stops.size()));
  py::gil_scoped_release unlocked;
  std::unique_lock hold(mu_);
  BufferedArray& ba = Live();
  long double sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < n; ++k) {
      auto summary = ba.Summarize(static_cast<uint64_t>(s[k]), static_cast<uint64_t>(e[k]), NeedsExtremes(one));
      if (!summary.ok()) throw StatusError{summary.status()};
      auto answer = ComputeStat(stat, {}, *summary, static_cast<uint64_t>(s[k]), dtype_);
      if (!answer.ok()) throw StatusError{answer.status()};
      sink += answer->values[0];
    }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  volatile long double keep = sink;  // the answers are used
  (void)keep;
  return took.count();
}

double ArrayHandle::TimeStats(const py::array_t<int64_t>& starts, const py::array_t<int64_t>& stops,
                              const std::vector<int>& codes) {
  std::vector<momenta::Stat> stats;
  for (int c : codes) stats.push_back(StatOf(c));
  const int64_t* s = starts.data();
  const int64_t* e = stops.data();
  const auto n = static_cast<size_t>(std::min(starts.size(), stops.size()));
  py::gil_scoped_release unlocked;
  std::unique_lock hold(mu_);
  BufferedArray& ba = Live();
  std::vector<IndexRange> ranges;
  std::vector<RangeSummary> summaries;
  long double sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t first = 0; first < n; first += kBatchChunk) {
    const size_t count = std::min(kBatchChunk, n - first);
    ranges.resize(count);
    for (size_t k = 0; k < count; ++k)
      ranges[k] = {static_cast<uint64_t>(s[first + k]), static_cast<uint64_t>(e[first + k])};
    ThrowIfError(ba.SummarizeBatch(ranges, NeedsExtremes(stats), &summaries));
    for (size_t k = 0; k < count; ++k)
      for (momenta::Stat st : stats) {
        auto answer = ComputeStat(st, {}, summaries[k], ranges[k].begin, dtype_);
        if (!answer.ok()) throw StatusError{answer.status()};
        sink += answer->values[0];
      }
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  volatile long double keep = sink;
  (void)keep;
  return took.count();
}

uint64_t ArrayHandle::applied_sequence() {
  std::shared_lock hold(mu_);
  return Live().applied_sequence();
}

void RegisterArray(py::module_& m) {
  py::class_<ArrayHandle>(m, "_Array", "An open array (momenta.Array holds one)")
      .def_static(
          "open",
          [](const std::string& path, bool writable, const std::string& io, const std::string& sidecar,
             const std::string& sync) {
            OpenArgs a{path, writable, io, sidecar, sync, {}};
            return ArrayHandle::Open(a);
          },
          py::arg("path"), py::arg("writable"), py::arg("io"), py::arg("sidecar"), py::arg("sync"))
      .def_static(
          "create",
          [](const std::string& path, const std::string& dtype, const std::vector<uint64_t>& shape, int order,
             uint64_t ram_budget, uint64_t leaf, uint32_t fanout, bool disk_tier, const std::string& io,
             const std::string& sidecar, const std::string& sync, bool ola, uint64_t bin) {
            OpenArgs a{path, true, io, sidecar, sync, {}};
            a.tree.order = order;
            a.tree.ram_budget = ram_budget;
            a.tree.leaf_span = leaf;
            a.tree.fanout = fanout;
            a.tree.disk_tier = disk_tier;
            if (ola) a.tree = WithOlaBuffer(a.tree, order, bin);  // the Python side checked order <= 7, bin >= 2
            return ArrayHandle::Create(a, dtype, shape);
          },
          py::arg("path"), py::arg("dtype"), py::arg("shape"), py::arg("order"), py::arg("ram_budget"), py::arg("leaf"),
          py::arg("fanout"), py::arg("disk_tier"), py::arg("io"), py::arg("sidecar"), py::arg("sync"), py::arg("ola"),
          py::arg("bin"))
      .def("info", &ArrayHandle::Info)
      .def("stat", &ArrayHandle::Stat)
      .def("stats", &ArrayHandle::Stats)
      .def("approx", &ArrayHandle::Approx)
      .def("summary", [](ArrayHandle& h, int64_t p, int64_t q, bool extremes) { return h.Summary(p, q, extremes); })
      .def("summary_rows", &ArrayHandle::SummaryRows)
      .def("summary_as_of", [](ArrayHandle& h, int64_t p, int64_t q, bool extremes,
                               int64_t time) { return h.Summary(p, q, extremes, &time); })
      .def("_summary_read_bytes",
           [](ArrayHandle& h, int64_t p, int64_t q, bool extremes) {
             uint64_t bytes = 0;
             h.Summary(p, q, extremes, nullptr, &bytes);
             return bytes;
           })
      .def("write", &ArrayHandle::Write)
      .def("apply", &ArrayHandle::Apply)
      .def("commit", &ArrayHandle::Commit)
      .def("rebuild",
           [](ArrayHandle& h, int order, uint64_t ram_budget, uint64_t leaf, uint32_t fanout, bool disk_tier, bool ola,
              uint64_t bin) {
             TreeOptions t;
             t.order = order;
             t.ram_budget = ram_budget;
             t.leaf_span = leaf;
             t.fanout = fanout;
             t.disk_tier = disk_tier;
             if (ola) t = WithOlaBuffer(t, order, bin);
             return h.Rebuild(t);
           })
      .def("close", &ArrayHandle::Close)
      .def("_time_stat", &ArrayHandle::TimeStat)
      .def("_time_stats", &ArrayHandle::TimeStats)
      .def_property_readonly("closed", &ArrayHandle::closed)
      .def_property_readonly("applied_sequence", &ArrayHandle::applied_sequence);
  m.attr("kStatNames") = [] {
    py::list names;
    for (int code = 0; code < momenta::kStatCount; ++code) names.append(std::string(StatName(StatOf(code))));
    return names;
  }();
  m.attr("kLogTimeNow") = kLogTimeNow;
}

}  // namespace momenta::python
