// Statistics' answers as Python gives them back, shared by the array handle
// (one array's ranges) and the summary binding (summaries merged from shards):
// one answer as a Python object, or a batch as one NumPy column per statistic.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "buffers/algebra/statistics.h"

namespace momenta::python {

namespace py = pybind11;

// The Stat of a code (its index in kStatNames); else throws InvalidArgument.
Stat StatOf(int code);
// moments and polyfit answer a list of values.
bool IsList(Stat s);
// The parameters the Python layer passes: order < 0 and a NaN `about` mean
// their defaults.
StatParams MakeParams(bool skipna, int ddof, int order, double about, int degree);

// An exact integer as a Python int (past int64 too). REQUIRES: the GIL
py::object IntegerObject(Int128 v);
// One answer: a float, an int (count; an integer array's exact sum) or a
// float64 array (moments, polyfit). REQUIRES: the GIL
py::object AnswerObject(const StatAnswer& a);

// One column per statistic for `rows` answers: float64 of shape (rows,),
// (rows, K+1) for moments (K = moments_k) and (rows, D+1) for polyfit,
// int64 for count and an integer dtype's sum (an object array of exact ints
// when a sum is outside int64). Made and finished with the GIL held; Put and
// PutNan only write memory the columns own, so they may run without it.
class StatColumns {
 public:
  StatColumns(size_t rows, std::vector<Stat> stats, DType dtype, int moments_k, int degree);
  const std::vector<Stat>& stats() const { return stats_; }
  // Row `row` of column `c`. An answer of another width than the column's
  // (a buffer rebuilt with another J meanwhile) is an InvalidArgument naming `what`.
  [[nodiscard]] Status Put(size_t row, size_t c, const StatAnswer& a, const std::string& what);
  // NaN in every entry of row `row` of column `c` (a float column).
  void PutNan(size_t row, size_t c);
  // The columns, in the order of `stats`. REQUIRES: the GIL
  py::list Finish();

 private:
  std::vector<Stat> stats_;
  std::vector<py::array> outs_;
  std::vector<void*> data_;
  std::vector<size_t> width_;
  // Entries of integer columns that int64 cannot hold: an exact sum (or sum
  // of squares) outside int64, or a sum of squares past Int128 (a float).
  struct Wide {
    size_t slot = 0;  // row · stats + column
    bool is_integer = true;
    Int128 integer = 0;
    double value = 0;
  };
  std::vector<Wide> wide_;
};

}  // namespace momenta::python
