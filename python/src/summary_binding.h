// momenta.Summary: the range summary of one run of an array (buffers/algebra/range_summary.h)
// as a small picklable value, placed at a start index, so that summaries
// taken apart (one per shard, on the machines that hold them) merge with the
// library's Merge into the summary of the whole run and answer every
// statistic exactly as the single array does (ComputeStat).
//
// Its bytes (pickle, to_bytes) are a 32-byte header then the node form of
// NodeCodec (order J: 2J + 20 doubles, the check unbound to any place):
//
//   offset  size  what
//   0       4     magic "MSUM"
//   4       2     version (2; 1 held nodes of 2J + 17 doubles, without the exact
//                 sum of squares, and is refused)
//   6       1     dtype (DType code)
//   7       1     order J (0..8)
//   8       8     start (u64 LE): the run's first index
//   16      8     count (u64 LE): its cells
//   24      4     flags (u32 LE): bit 0 set when the extremes were taken
//   28      4     zero
//   32      8·(2J+20)  the node (its check is verified on decode)
//
// A batch travels as rows: an (n, 2J+20) float64 array of nodes with their
// starts and stops beside it (SummaryRows, RowsStats).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "storage/npy/dtype.h"

namespace momenta::python {

namespace py = pybind11;

struct PlacedSummary {
  RangeSummary range;  // index moments about `start`
  uint64_t start = 0;  // the run is [start, start + range.count())
  DType dtype = DType::kF8;
  bool extremes = false;  // range.extremes holds the run's min and max
};

// The rows of `summaries` (one node each, in order), as RowsStats reads them.
// REQUIRES: every summary of order `order`
py::array_t<double> SummaryRows(const std::vector<RangeSummary>& summaries, int order);

void RegisterSummary(py::module_& m);

}  // namespace momenta::python
