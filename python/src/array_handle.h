// ArrayHandle: what momenta.Array (python/momenta/_array.py) holds — one
// BufferedArray, opened as the CLI opens it (tools/buffer_options.cc), with
// the statistics of buffers/algebra/statistics.h answered as `momenta query` answers
// them. The Python layer resolves index expressions to flat ranges and checks
// argument types; this layer checks everything that depends on the array
// (ranges, values, orders) and reports it as the library's Status.
//
// Threads: every method releases the GIL while it reads, writes or waits. A
// reader (opened "r") may be queried from several threads at once; a
// writer's methods are serialized by the handle. Close waits for the calls in
// flight; a call after Close fails with "the array is closed".
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
#include "python/src/summary_binding.h"

namespace momenta::python {

namespace py = pybind11;

// How Open and Create open the array: the CLI's --io, --sidecar, --sync and
// the buffer flags of create and build.
struct OpenArgs {
  std::string path;
  bool writable = false;
  std::string io = "auto";
  std::string sidecar;  // empty: beside the array, or under MOMENTA_SIDECAR_DIR
  std::string sync = "batch";
  TreeOptions tree;  // used when the buffer is (re)built
};

class ArrayHandle {
 public:
  ArrayHandle(const ArrayHandle&) = delete;
  ArrayHandle& operator=(const ArrayHandle&) = delete;
  // Closes a writer (best effort, as BufferedArray's destructor).
  ~ArrayHandle();

  // BufferedArray::Open; notices become momenta.Notice warnings. Ctrl-C
  // during a build on open stops it (KeyboardInterrupt), leaving the old buffer.
  static std::unique_ptr<ArrayHandle> Open(const OpenArgs& args);
  // A new sparse array and its buffer, as `momenta create`: a create that
  // fails leaves nothing behind. Returns it open as a writer.
  static std::unique_ptr<ArrayHandle> Create(const OpenArgs& args, const std::string& dtype,
                                             const std::vector<uint64_t>& shape);

  // path, dtype (name), shape, data_offset, length, order, leaf_span,
  // writable, sidecar, io (the backend's name).
  py::dict Info();

  // One statistic (a Stat's index) over [p, q); p and q may be negative
  // (counted from the end, as `query --range`). order < 0 and a NaN `about`
  // mean their defaults. A float, an int (count; sum of an integer array,
  // exact) or a float64 array (moments, polyfit).
  py::object Stat(int stat, int64_t p, int64_t q, bool skipna, int ddof, int order, double about, int degree);
  // Each statistic of `stats` over every [starts[k], stops[k]) (0 <= start
  // <= stop <= length, else OutOfRange naming the range), through
  // SummarizeBatch: one array per statistic, float64 of shape (n,), (n, K+1)
  // for moments and polyfit, int64 for count and an integer array's sum (an
  // object array of exact ints when a sum is outside int64). With
  // `empty_nan`, a statistic an empty range cannot give is NaN there (an
  // overview's snapped bins), else the error names the range.
  // The first bound of a progressive query (buffers/algebra/range_bounds.h), from the
  // buffer's nodes alone (no array byte read): for sum or mean (a Stat's
  // index) over [p, q) (negative sides as Stat), the tuple (estimate, lower,
  // upper, exact, nan) with nan "no", "maybe" or "certain"; an integer
  // array's sum gives exact Python ints. exact: the nodes alone decide it.
  // A damaged node is rebuilt first, as Stat does (a Notice says so).
  py::tuple Approx(int stat, int64_t p, int64_t q);

  py::list Stats(const py::array_t<int64_t>& starts, const py::array_t<int64_t>& stops, const std::vector<int>& stats,
                 bool skipna, int ddof, int order, double about, int degree, bool empty_nan);

  // The summary of [p, q) placed at p (negative sides as Stat), with its
  // extremes when `extremes`; as of log time *as_of when given
  // (buffers/summarize_as_of.h). *array_bytes (optional, without as_of)
  // receives the bytes of elements the query read (0 for a run of whole
  // leaves, the whole array included).
  PlacedSummary Summary(int64_t p, int64_t q, bool extremes, const int64_t* as_of = nullptr,
                        uint64_t* array_bytes = nullptr);
  // The summaries of every [starts[k], stops[k]) (as Stats checks them) as
  // rows (summary_binding.h), in one batch; with `as_of` (not None) as of
  // that log time (buffers/summarize_as_of.h).
  py::array_t<double> SummaryRows(const py::array_t<int64_t>& starts, const py::array_t<int64_t>& stops, bool extremes,
                                  const py::object& as_of);

  // a[first + k] = values[k] (BufferedArray::Write); `values` is int64,
  // uint64 or float64, and each must fit the dtype.
  void Write(uint64_t first, const py::array& values, int64_t time);
  // a[indices[k]] = values[k] at times[k] (or `time` for all), one Apply.
  void Apply(const py::array_t<int64_t>& indices, const py::array& values, const py::object& times, int64_t time);
  void Commit();
  // BufferedArray::Rebuild with `tree` (a writer: `momenta build`); Ctrl-C
  // stops it, keeping the buffer it had. Returns the data bytes read.
  uint64_t Rebuild(const TreeOptions& tree);
  void Close();
  bool closed() const;

  // For bench/python_bench.py: what Stat and Stats cost without Python — the
  // same library calls (Summarize or SummarizeBatch, then ComputeStat) over
  // the same ranges, timed in C++ with the GIL released. TimeStat: each
  // range once per round, `rounds` rounds; returns seconds in all. TimeStats:
  // one Stats-like pass (the answers discarded); returns seconds.
  double TimeStat(int stat, const py::array_t<int64_t>& starts, const py::array_t<int64_t>& stops, int rounds);
  double TimeStats(const py::array_t<int64_t>& starts, const py::array_t<int64_t>& stops,
                   const std::vector<int>& stats);
  uint64_t applied_sequence();

 private:
  ArrayHandle(std::unique_ptr<BufferedArray> ba, std::string path);
  // [p, q) with negative sides counted from the end, or throws OutOfRange.
  IndexRange Resolve(int64_t p, int64_t q, uint64_t length) const;
  // The open array, or throws "the array is closed".
  BufferedArray& Live();

  // Guards ba_: shared by a reader's queries, exclusive for a writer's calls
  // and for Close. Taken with the GIL released.
  mutable std::shared_mutex mu_;
  // The lock a query holds: shared on a reader (threads query at once),
  // exclusive on a writer (its methods are for one thread at a time).
  struct QueryLock {
    explicit QueryLock(std::shared_mutex& mu, bool writable)
        : shared(mu, std::defer_lock), exclusive(mu, std::defer_lock) {
      if (writable)
        exclusive.lock();
      else
        shared.lock();
    }
    std::shared_lock<std::shared_mutex> shared;
    std::unique_lock<std::shared_mutex> exclusive;
  };
  std::unique_ptr<BufferedArray> ba_;  // null once closed
  const std::string path_;
  const bool writable_;
  const DType dtype_;
  std::atomic<int> order_;  // the buffer's J (a Rebuild may change it)
};

void RegisterArray(py::module_& m);

}  // namespace momenta::python
