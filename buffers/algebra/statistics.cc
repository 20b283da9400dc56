#include "buffers/algebra/statistics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace momenta {
namespace {

constexpr Stat kAllStats[] = {Stat::kSum,    Stat::kCount,   Stat::kMean,  Stat::kVar,    Stat::kStd,
                              Stat::kMoment, Stat::kMoments, Stat::kCom,   Stat::kSpread, Stat::kPolyfit,
                              Stat::kMin,    Stat::kMax,     Stat::kSumsq, Stat::kRms};
static_assert(sizeof(kAllStats) / sizeof(kAllStats[0]) == kStatCount);

StatAnswer One(Stat s, long double v) {
  StatAnswer a;
  a.stat = s;
  a.values = {v};
  return a;
}

}  // namespace

std::string_view StatName(Stat s) {
  switch (s) {
    case Stat::kSum:
      return "sum";
    case Stat::kCount:
      return "count";
    case Stat::kMean:
      return "mean";
    case Stat::kVar:
      return "var";
    case Stat::kStd:
      return "std";
    case Stat::kMoment:
      return "moment";
    case Stat::kMoments:
      return "moments";
    case Stat::kCom:
      return "com";
    case Stat::kSpread:
      return "spread";
    case Stat::kPolyfit:
      return "polyfit";
    case Stat::kMin:
      return "min";
    case Stat::kMax:
      return "max";
    case Stat::kSumsq:
      return "sumsq";
    case Stat::kRms:
      return "rms";
  }
  return "?";
}

Result<Stat> ParseStat(std::string_view name, const std::string& what) {
  for (Stat s : kAllStats)
    if (StatName(s) == name) return s;
  return Status::InvalidArgument(what, "unknown statistic '" + std::string(name) +
                                           "' (sum count mean var std moment moments com "
                                           "spread polyfit min max sumsq rms)");
}

bool NeedsExtremes(std::span<const Stat> stats) {
  return std::any_of(stats.begin(), stats.end(), [](Stat s) { return s == Stat::kMin || s == Stat::kMax; });
}

std::string Int128ToString(Int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  // Work with the magnitude as unsigned so that the most negative value works.
  UInt128 m = negative ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
  std::string digits;
  while (m != 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  }
  if (negative) digits.push_back('-');
  return std::string(digits.rbegin(), digits.rend());
}

namespace {

constexpr long double kNaN = std::numeric_limits<long double>::quiet_NaN();
constexpr long double kInf = std::numeric_limits<long double>::infinity();

// An index tuple of the same order and count whose moments can fail no check
// that depends on the data (M_0 = 1, others 0): run on it, a statistic
// reports only the errors that do not depend on the values.
IndexMoments Benign(const IndexMoments& range) {
  std::array<double, kMaxMomentTerms> values{};
  values[0] = 1;
  return IndexMoments::Load(range.order(), range.count(), std::span<const double>(values.data(), range.order() + 1));
}

// The index statistics, from the finite cells' moments.
Result<StatAnswer> IndexStat(Stat stat, const StatParams& params, const IndexMoments& index, uint64_t p) {
  const long double center = params.about.value_or(static_cast<long double>(p));
  switch (stat) {
    case Stat::kMoment: {
      auto v = Moment(index, p, params.order.value_or(1), center);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    case Stat::kMoments: {
      const int k = params.order.value_or(index.order());
      auto v = Moments(index, p, k, center);
      if (!v.ok()) return v.status();
      StatAnswer a;
      a.stat = stat;
      a.values.assign(v->begin(), v->begin() + k + 1);
      return a;
    }
    case Stat::kCom: {
      auto v = CenterOfMass(index, p);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    case Stat::kSpread: {
      auto v = Spread(index);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    default: {  // kPolyfit
      auto v = PolyFit(index, params.degree);
      if (!v.ok()) return v.status();
      StatAnswer a;
      a.stat = stat;
      a.values.assign(v->begin(), v->begin() + params.degree + 1);
      return a;
    }
  }
}

// The value of a sum over cells whose finite part sums to `finite`, with
// `pos`/`neg` infinities (IEEE: inf − inf is NaN).
long double WithInfinities(long double finite, uint64_t pos, uint64_t neg) {
  if (pos > 0 && neg > 0) return kNaN;
  if (pos > 0) return kInf;
  if (neg > 0) return -kInf;
  return finite;
}

// Σ a² over the finite cells: Σ(a − mean)² + n·mean², both terms >= 0 (no
// cancellation). Integer dtypes keep it exactly (RangeSummary::exact_sumsq).
long double FiniteSumOfSquares(const RangeSummary& range, DType dtype) {
  if (DTypeIsInteger(dtype)) return range.exact_sumsq.ToLongDouble();
  const ValueMoments& v = range.values;
  if (v.count() == 0) return 0;
  const long double n = static_cast<long double>(v.count());
  const long double mean = v.mean();
  return v.central_sum_of_squares() + n * mean * mean;
}

// sumsq and rms (ComputeStat's contract): `kept` cells are averaged over.
// An integer sumsq that fits Int128 is answered as that integer.
Result<StatAnswer> SquaresStat(Stat stat, const RangeSummary& range, DType dtype, uint64_t kept, bool nan_in) {
  const bool has_inf = range.nonfinite.pos_inf + range.nonfinite.neg_inf > 0;
  if (stat == Stat::kRms && range.count() == 0) return Status::InvalidArgument("rms", "the range is empty");
  if (nan_in || (stat == Stat::kRms && kept == 0)) return One(stat, kNaN);
  if (has_inf) return One(stat, kInf);
  const long double sumsq = FiniteSumOfSquares(range, dtype);
  if (stat == Stat::kRms) return One(stat, std::sqrt(sumsq / static_cast<long double>(kept)));
  StatAnswer a = One(stat, sumsq);
  if (DTypeIsInteger(dtype)) {
    if (const std::optional<Int128> exact = range.exact_sumsq.ToInt128()) {
      a.is_integer = true;
      a.integer = *exact;
    }
  }
  return a;
}

}  // namespace

bool ServedByIndexMoments(Stat stat) {
  return stat != Stat::kVar && stat != Stat::kStd && stat != Stat::kMin && stat != Stat::kMax && stat != Stat::kSumsq &&
         stat != Stat::kRms;
}

Result<StatAnswer> ComputeIndexStat(Stat stat, const StatParams& params, const IndexMoments& index, uint64_t p) {
  const uint64_t n = index.count();
  switch (stat) {
    case Stat::kCount: {
      StatAnswer a = One(stat, static_cast<long double>(n));
      a.is_integer = true;
      a.integer = n;
      return a;
    }
    case Stat::kSum:
      return One(stat, Sum(index));
    case Stat::kMean:
      if (n == 0) return Status::InvalidArgument("mean", "the range is empty");
      return One(stat, Sum(index) / static_cast<long double>(n));
    case Stat::kMoment:
    case Stat::kMoments:
    case Stat::kCom:
    case Stat::kSpread:
    case Stat::kPolyfit:
      return IndexStat(stat, params, index, p);
    default:
      return Status::InvalidArgument(StatName(stat),
                                     "needs value moments or extremes, which index moments do not hold");
  }
}

Result<StatAnswer> ComputeStat(Stat stat, const StatParams& params, const RangeSummary& range, uint64_t p,
                               DType dtype) {
  const NonFiniteCounts& nf = range.nonfinite;
  const uint64_t n = range.count();
  // Cells the answer is over (count and divisor), and whether a NaN decides it.
  const uint64_t kept = params.skipna ? n - nf.nan : n;
  const bool nan_in = nf.nan > 0 && !params.skipna;
  const bool has_inf = nf.pos_inf + nf.neg_inf > 0;
  switch (stat) {
    case Stat::kCount: {
      StatAnswer a = One(stat, static_cast<long double>(kept));
      a.is_integer = true;
      a.integer = kept;
      return a;
    }
    case Stat::kSum: {
      if (DTypeIsInteger(dtype)) {
        StatAnswer a = One(stat, static_cast<long double>(range.exact_sum));
        a.is_integer = true;
        a.integer = range.exact_sum;
        return a;
      }
      if (nan_in) return One(stat, kNaN);
      return One(stat, WithInfinities(Sum(range.index), nf.pos_inf, nf.neg_inf));
    }
    case Stat::kMean: {
      if (n == 0) return Status::InvalidArgument("mean", "the range is empty");
      if (DTypeIsInteger(dtype))  // exact numerator
        return One(stat, static_cast<long double>(range.exact_sum) / n);
      if (nan_in || kept == 0) return One(stat, kNaN);
      if (has_inf) return One(stat, WithInfinities(0, nf.pos_inf, nf.neg_inf));
      auto v = Mean(range.values);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    case Stat::kVar:
    case Stat::kStd: {
      // Errors that do not depend on the values: on the count of every cell.
      ValueMoments shape = range.values;
      if (shape.count() != n) shape = ValueMoments::FromParts(n, 0, 0, 0);
      auto v = stat == Stat::kVar ? Variance(shape, params.ddof) : StdDev(shape, params.ddof);
      if (!v.ok()) return v.status();
      if (nan_in || has_inf || kept <= static_cast<uint64_t>(params.ddof)) return One(stat, kNaN);
      v = stat == Stat::kVar ? Variance(range.values, params.ddof) : StdDev(range.values, params.ddof);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    case Stat::kSumsq:
    case Stat::kRms:
      return SquaresStat(stat, range, dtype, kept, nan_in);
    case Stat::kMin:
    case Stat::kMax: {
      if (n == 0) return Status::InvalidArgument(StatName(stat), "the range is empty");
      if (nan_in || kept == 0) return One(stat, kNaN);
      auto v = stat == Stat::kMin ? Min(range.extremes) : Max(range.extremes);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    case Stat::kMoment:
    case Stat::kMoments:
    case Stat::kCom:
    case Stat::kSpread:
    case Stat::kPolyfit: {
      const bool poisoned = nan_in || has_inf || (stat == Stat::kPolyfit && nf.nan > 0);
      if (!poisoned) return IndexStat(stat, params, range.index, p);
      auto shape = IndexStat(stat, params, Benign(range.index), p);
      if (!shape.ok()) return shape.status();
      for (long double& v : shape->values) v = kNaN;
      return shape;
    }
  }
  return Status::InvalidArgument("statistic", "unknown statistic");  // unreachable: every Stat is handled above
}

}  // namespace momenta
