#include "python/src/stat_answers.h"

#include <cmath>
#include <limits>

#include "python/src/py_status.h"

namespace momenta::python {
namespace {

constexpr Stat kStats[] = {Stat::kSum,    Stat::kCount,   Stat::kMean,  Stat::kVar,    Stat::kStd,
                           Stat::kMoment, Stat::kMoments, Stat::kCom,   Stat::kSpread, Stat::kPolyfit,
                           Stat::kMin,    Stat::kMax,     Stat::kSumsq, Stat::kRms};
static_assert(sizeof(kStats) / sizeof(kStats[0]) == kStatCount);

}  // namespace

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

py::object IntegerObject(Int128 v) {
  if (v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max())
    return py::int_(static_cast<int64_t>(v));
  return py::reinterpret_steal<py::object>(PyLong_FromString(Int128ToString(v).c_str(), nullptr, 10));
}

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

StatColumns::StatColumns(size_t rows, std::vector<Stat> stats, DType dtype, int moments_k, int degree)
    : stats_(std::move(stats)) {
  const auto n = static_cast<py::ssize_t>(rows);
  for (Stat s : stats_) {
    py::array a;
    size_t width = 1;
    if (s == Stat::kCount || ((s == Stat::kSum || s == Stat::kSumsq) && DTypeIsInteger(dtype))) {
      a = py::array_t<int64_t>(n);
    } else if (IsList(s)) {
      width = static_cast<size_t>((s == Stat::kMoments ? moments_k : degree) + 1);
      a = py::array_t<double>({n, static_cast<py::ssize_t>(width)});
    } else {
      a = py::array_t<double>(n);
    }
    data_.push_back(a.mutable_data());
    width_.push_back(width);
    outs_.push_back(std::move(a));
  }
}

Status StatColumns::Put(size_t row, size_t c, const StatAnswer& a, const std::string& what) {
  const bool integer_column = outs_[c].dtype().kind() == 'i';
  if (a.is_integer || integer_column) {
    auto* out = static_cast<int64_t*>(data_[c]);
    if (!a.is_integer) {  // a sum of squares past Int128: its float
      wide_.push_back(Wide{row * stats_.size() + c, false, 0, static_cast<double>(a.values[0])});
      out[row] = 0;
    } else if (a.integer < std::numeric_limits<int64_t>::min() || a.integer > std::numeric_limits<int64_t>::max()) {
      wide_.push_back(Wide{row * stats_.size() + c, true, a.integer, 0});
      out[row] = 0;
    } else {
      out[row] = static_cast<int64_t>(a.integer);
    }
    return Status::OK();
  }
  if (a.values.size() != width_[c]) return Status::InvalidArgument(what, "the buffer's order changed during the call");
  double* out = static_cast<double*>(data_[c]) + row * width_[c];
  for (size_t j = 0; j < width_[c]; ++j) out[j] = static_cast<double>(a.values[j]);
  return Status::OK();
}

void StatColumns::PutNan(size_t row, size_t c) {
  double* out = static_cast<double*>(data_[c]) + row * width_[c];
  for (size_t j = 0; j < width_[c]; ++j) out[j] = std::numeric_limits<double>::quiet_NaN();
}

py::list StatColumns::Finish() {
  py::list result;
  for (size_t c = 0; c < stats_.size(); ++c) {
    bool has_wide = false;
    for (const Wide& w : wide_) has_wide |= w.slot % stats_.size() == c;
    if (!has_wide) {
      result.append(outs_[c]);
      continue;
    }
    // Exact Python ints for this column: NumPy has no integer wider than 64 bits.
    py::array objects = outs_[c].attr("astype")("object");
    for (const Wide& w : wide_)
      if (w.slot % stats_.size() == c)
        objects[py::int_(w.slot / stats_.size())] = w.is_integer ? IntegerObject(w.integer) : py::float_(w.value);
    result.append(objects);
  }
  return result;
}

}  // namespace momenta::python
