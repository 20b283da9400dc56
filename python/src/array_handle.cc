#include "python/src/array_handle.h"

#include <pybind11/stl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <mutex>

#include "buffers/moment_tree.h"
#include "buffers/progressive_sum.h"
#include "python/src/interruptible.h"
#include "python/src/py_status.h"
#include "storage/array_file.h"
#include "storage/sidecar.h"

namespace momenta::python {
namespace {

constexpr Stat kStats[] = {Stat::kSum,    Stat::kCount,  Stat::kMean,    Stat::kVar,
                           Stat::kStd,    Stat::kMoment, Stat::kMoments, Stat::kCom,
                           Stat::kSpread, Stat::kPolyfit, Stat::kMin,    Stat::kMax};
constexpr int kStatCount = sizeof(kStats) / sizeof(kStats[0]);
// Ranges summarised per SummarizeBatch call: bounds the summaries held at
// once (a few hundred bytes each); the library batches reads 256 at a time.
constexpr size_t kBatchChunk = 4096;
// Updates past which Apply and Write run interruptibly (a thread of their own).
constexpr size_t kInterruptibleUpdates = size_t{1} << 16;

Stat StatOf(int code) {
  if (code < 0 || code >= kStatCount) ThrowIfError(Status::InvalidArgument("statistic", "unknown statistic"));
  return kStats[code];
}

bool IsList(Stat s) { return s == Stat::kMoments || s == Stat::kPolyfit; }

StatParams MakeParams(bool skipna, int ddof, int order, double about, int degree) {
  StatParams params;
  params.skipna = skipna;
  params.ddof = ddof;
  if (order >= 0) params.order = order;
  if (!std::isnan(about)) params.about = about;
  params.degree = degree;
  return params;
}

LogSync ParseSync(const std::string& sync) {
  if (sync == "always") return LogSync::kAlways;
  if (sync == "batch") return LogSync::kBatch;
  if (sync == "none") return LogSync::kNone;
  throw StatusError{Status::InvalidArgument("sync", "'" + sync + "' is none of always, batch, none")};
}

BufferedArrayOptions MakeOptions(const OpenArgs& args, bool fresh_array) {
  BufferedArrayOptions options;
  options.io.kind = ValueOrThrow(ParseIoKind(args.io, "io"));
  options.io.writable = args.writable;
  options.tree = args.tree;
  options.sync = ParseSync(args.sync);
  options.sidecar = args.sidecar;
  options.fresh_array = fresh_array;
  options.build_advice = "open it once as a user who may write there (or run 'momenta build " + args.path + "')";
  options.sidecar_advice = "sidecar=DIR";
  return options;
}

py::object IntegerObject(Int128 v) {
  if (v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max())
    return py::int_(static_cast<int64_t>(v));
  return py::reinterpret_steal<py::object>(PyLong_FromString(Int128ToString(v).c_str(), nullptr, 10));
}

// One answer as Python gives it back.
py::object AnswerObject(const StatAnswer& a) {
  if (a.is_integer) return IntegerObject(a.integer);
  if (IsList(a.stat)) {
    py::array_t<double> out(static_cast<py::ssize_t>(a.values.size()));
    double* d = out.mutable_data();
    for (size_t k = 0; k < a.values.size(); ++k) d[k] = static_cast<double>(a.values[k]);
    return out;
  }
  return py::float_(static_cast<double>(a.values[0]));
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
      order_(ba_->tree().order()) {}

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
  OpenArgs writer = args;
  writer.writable = true;
  const BufferedArrayOptions options = MakeOptions(writer, /*fresh_array=*/true);
  std::vector<std::string> notices;
  auto opened = RunInterruptible([&]() -> Result<std::unique_ptr<BufferedArray>> {
    // As `momenta create` (tools/array_commands.cc): the file, then its
    // buffer (all zero nodes: instant); a failure removes what it made.
    std::error_code ec;
    const std::string sidecar = SidecarPath(args.path, args.sidecar);
    const bool had_sidecar = std::filesystem::exists(std::filesystem::symlink_status(sidecar, ec));
    std::string notice;
    auto array = ArrayFile::Create(args.path, dtype, shape, options.io, &notice);
    if (!notice.empty()) notices.push_back(notice);
    if (!array.ok()) return array.status();
    array->reset();
    auto ba = BufferedArray::Open(args.path, options, &notices);
    if (!ba.ok()) {
      ::unlink(args.path.c_str());
      if (!had_sidecar) std::filesystem::remove_all(sidecar, ec);
    }
    return ba;
  });
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
  d["leaf_span"] = ba.tree().layout().leaf_span();
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
  Result<StatAnswer> answer = Status::InvalidArgument(path_, "no answer");
  std::vector<std::string> notices;
  {
    py::gil_scoped_release unlocked;
    QueryLock hold(mu_, writable_);
    BufferedArray& ba = Live();
    // Negative sides count from the end, as `query --range` (tools/cli_parse.cc).
    const auto n = static_cast<int64_t>(ba.length());
    const int64_t b = p < 0 ? p + n : p, e = q < 0 ? q + n : q;
    if (b < 0 || e < 0 || b > n || e > n || b > e)
      ThrowIfError(Status::OutOfRange(path_, "range " + std::to_string(p) + ":" + std::to_string(q) +
                                                 " is not a range of the array (length " + std::to_string(n) + ")"));
    auto summary = ba.Summarize(static_cast<uint64_t>(b), static_cast<uint64_t>(e), NeedsExtremes(one));
    notices = ba.TakeNotices();
    if (!summary.ok()) throw StatusError{summary.status()};
    answer = ComputeStat(stat, params, *summary, static_cast<uint64_t>(b), dtype_);
    if (!answer.ok()) throw StatusError{answer.status().WithContext(path_)};
  }
  if (!notices.empty()) WarnNotices(notices);
  return AnswerObject(*answer);
}

py::tuple ArrayHandle::Approx(int code, int64_t p, int64_t q) {
  const momenta::Stat stat = StatOf(code);
  if (stat != momenta::Stat::kSum && stat != momenta::Stat::kMean)
    ThrowIfError(Status::InvalidArgument(path_, "approx= answers sum and mean"));
  SumBound bound;
  uint64_t count = 0;
  std::vector<std::string> notices;
  {
    py::gil_scoped_release unlocked;
    QueryLock hold(mu_, writable_);
    BufferedArray& ba = Live();
    const auto n = static_cast<int64_t>(ba.length());
    const int64_t b = p < 0 ? p + n : p, e = q < 0 ? q + n : q;
    if (b < 0 || e < 0 || b > n || e > n || b > e)
      ThrowIfError(Status::OutOfRange(path_, "range " + std::to_string(p) + ":" + std::to_string(q) +
                                                 " is not a range of the array (length " + std::to_string(n) + ")"));
    count = static_cast<uint64_t>(e - b);
    if (stat == momenta::Stat::kMean && count == 0)
      ThrowIfError(Status::InvalidArgument("mean", "the range is empty").WithContext(path_));
    auto first = ProgressiveSum(ba.tree(), ba.array(), static_cast<uint64_t>(b), static_cast<uint64_t>(e)).Start();
    if (!first.ok() && first.status().code() == Status::Code::kCorruption) {
      // A damaged node: the ordinary query rebuilds the buffer (a notice), then the bound is taken again.
      auto rebuilt = ba.Summarize(static_cast<uint64_t>(b), static_cast<uint64_t>(e), false);
      notices = ba.TakeNotices();
      if (!rebuilt.ok()) throw StatusError{rebuilt.status()};
      first = ProgressiveSum(ba.tree(), ba.array(), static_cast<uint64_t>(b), static_cast<uint64_t>(e)).Start();
    }
    if (!first.ok()) throw StatusError{first.status()};
    bound = stat == momenta::Stat::kMean ? BoundMean(*first, count) : *first;
  }
  if (!notices.empty()) WarnNotices(notices);
  const char* nan = bound.nan == NanState::kNo ? "no" : bound.nan == NanState::kMaybe ? "maybe" : "certain";
  if (bound.is_integer)
    return py::make_tuple(IntegerObject(bound.int_estimate), IntegerObject(bound.int_lower),
                          IntegerObject(bound.int_upper), bound.exact, nan);
  return py::make_tuple(bound.estimate, bound.lower, bound.upper, bound.exact, nan);
}

py::list ArrayHandle::Stats(const py::array_t<int64_t>& starts, const py::array_t<int64_t>& stops,
                            const std::vector<int>& codes, bool skipna, int ddof, int order, double about,
                            int degree, bool empty_nan) {
  if (starts.ndim() != 1 || stops.ndim() != 1 || starts.size() != stops.size())
    ThrowIfError(Status::InvalidArgument("stats", "starts and stops must be 1-d arrays of one length"));
  const auto n = static_cast<size_t>(starts.size());
  std::vector<momenta::Stat> stats;
  for (int c : codes) stats.push_back(StatOf(c));
  const StatParams params = MakeParams(skipna, ddof, order, about, degree);
  const bool integer_sum_exact = DTypeIsInteger(dtype_);
  // The width of each list statistic: moments 0..K, polyfit c_0..c_D.
  const int moments_k = order >= 0 ? order : order_.load();
  std::vector<py::array> outs;
  std::vector<void*> data;
  for (momenta::Stat s : stats) {
    py::array a;
    if (s == momenta::Stat::kCount || (s == momenta::Stat::kSum && integer_sum_exact))
      a = py::array_t<int64_t>(static_cast<py::ssize_t>(n));
    else if (IsList(s))
      a = py::array_t<double>({static_cast<py::ssize_t>(n),
                               static_cast<py::ssize_t>((s == momenta::Stat::kMoments ? moments_k : degree) + 1)});
    else
      a = py::array_t<double>(static_cast<py::ssize_t>(n));
    data.push_back(a.mutable_data());
    outs.push_back(std::move(a));
  }
  // Exact sums outside int64, by range (integer arrays only; rare).
  std::vector<std::pair<size_t, Int128>> wide;
  std::vector<size_t> sum_columns_wide;
  std::vector<std::string> notices;
  {
    const int64_t* s = starts.data();
    const int64_t* e = stops.data();
    py::gil_scoped_release unlocked;
    QueryLock hold(mu_, writable_);
    BufferedArray& ba = Live();
    std::vector<IndexRange> ranges;
    std::vector<RangeSummary> summaries;
    for (size_t k = 0; k < n; ++k)
      if (s[k] < 0 || e[k] < s[k] || static_cast<uint64_t>(e[k]) > ba.length())
        ThrowIfError(Status::OutOfRange(path_, "range #" + std::to_string(k) + " " + std::to_string(s[k]) + ":" +
                                                   std::to_string(e[k]) + " is outside the array (length " +
                                                   std::to_string(ba.length()) + ")"));
    for (size_t first = 0; first < n; first += kBatchChunk) {
      const size_t count = std::min(kBatchChunk, n - first);
      ranges.resize(count);
      for (size_t k = 0; k < count; ++k)
        ranges[k] = {static_cast<uint64_t>(s[first + k]), static_cast<uint64_t>(e[first + k])};
      const Status st = ba.SummarizeBatch(ranges, NeedsExtremes(stats), &summaries);
      for (auto& note : ba.TakeNotices()) notices.push_back(std::move(note));
      ThrowIfError(st);
      for (size_t k = 0; k < count; ++k) {
        const size_t row = first + k;
        for (size_t c = 0; c < stats.size(); ++c) {
          auto answer = ComputeStat(stats[c], params, summaries[k], ranges[k].begin, dtype_);
          if (!answer.ok()) {
            if (!(empty_nan && ranges[k].size() == 0))
              throw StatusError{answer.status().WithContext(
                  path_ + ": range #" + std::to_string(row) + " " + std::to_string(ranges[k].begin) + ":" +
                  std::to_string(ranges[k].end))};
            StatAnswer nan{stats[c], {}, false, 0};
            const size_t width = IsList(stats[c]) ? static_cast<size_t>(outs[c].shape(1)) : 1;
            nan.values.assign(width, std::numeric_limits<long double>::quiet_NaN());
            answer = std::move(nan);
          }
          const StatAnswer& a = *answer;
          if (a.is_integer) {
            auto* out = static_cast<int64_t*>(data[c]);
            if (a.integer < std::numeric_limits<int64_t>::min() || a.integer > std::numeric_limits<int64_t>::max()) {
              wide.emplace_back(row * stats.size() + c, a.integer);
              out[row] = 0;
            } else {
              out[row] = static_cast<int64_t>(a.integer);
            }
          } else if (IsList(a.stat)) {
            const auto width = static_cast<size_t>(outs[c].shape(1));
            if (a.values.size() != width)  // a buffer rebuilt with another J under us
              throw StatusError{Status::InvalidArgument(path_, "the buffer's order changed during the call")};
            double* out = static_cast<double*>(data[c]) + row * width;
            for (size_t j = 0; j < width; ++j) out[j] = static_cast<double>(a.values[j]);
          } else {
            static_cast<double*>(data[c])[row] = static_cast<double>(a.values[0]);
          }
        }
      }
    }
  }
  if (!notices.empty()) WarnNotices(notices);
  py::list result;
  for (size_t c = 0; c < stats.size(); ++c) {
    bool has_wide = false;
    for (const auto& w : wide) has_wide |= w.first % stats.size() == c;
    if (!has_wide) {
      result.append(outs[c]);
      continue;
    }
    // Exact Python ints for this column: NumPy has no integer wider than 64 bits.
    py::array objects = outs[c].attr("astype")("object");
    for (const auto& [slot, v] : wide)
      if (slot % stats.size() == c) objects[py::int_(slot / stats.size())] = IntegerObject(v);
    result.append(objects);
  }
  return result;
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
      ThrowIfError(Status::OutOfRange(path_, "update #" + std::to_string(k) + ": index " + std::to_string(idx[k]) +
                                                 " is before the start"));
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
    order_ = ba_->tree().order();
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
             const std::string& sidecar, const std::string& sync) {
            OpenArgs a{path, true, io, sidecar, sync, {}};
            a.tree.order = order;
            a.tree.ram_budget = ram_budget;
            a.tree.leaf_span = leaf;
            a.tree.fanout = fanout;
            a.tree.disk_tier = disk_tier;
            return ArrayHandle::Create(a, dtype, shape);
          },
          py::arg("path"), py::arg("dtype"), py::arg("shape"), py::arg("order"), py::arg("ram_budget"),
          py::arg("leaf"), py::arg("fanout"), py::arg("disk_tier"), py::arg("io"), py::arg("sidecar"),
          py::arg("sync"))
      .def("info", &ArrayHandle::Info)
      .def("stat", &ArrayHandle::Stat)
      .def("stats", &ArrayHandle::Stats)
      .def("approx", &ArrayHandle::Approx)
      .def("write", &ArrayHandle::Write)
      .def("apply", &ArrayHandle::Apply)
      .def("commit", &ArrayHandle::Commit)
      .def(
          "rebuild",
          [](ArrayHandle& h, int order, uint64_t ram_budget, uint64_t leaf, uint32_t fanout, bool disk_tier) {
            TreeOptions t;
            t.order = order;
            t.ram_budget = ram_budget;
            t.leaf_span = leaf;
            t.fanout = fanout;
            t.disk_tier = disk_tier;
            return h.Rebuild(t);
          })
      .def("close", &ArrayHandle::Close)
      .def("_time_stat", &ArrayHandle::TimeStat)
      .def("_time_stats", &ArrayHandle::TimeStats)
      .def_property_readonly("closed", &ArrayHandle::closed)
      .def_property_readonly("applied_sequence", &ArrayHandle::applied_sequence);
  m.attr("kStatNames") = [] {
    py::list names;
    for (momenta::Stat s : kStats) names.append(std::string(StatName(s)));
    return names;
  }();
  m.attr("kLogTimeNow") = kLogTimeNow;
}

}  // namespace momenta::python
