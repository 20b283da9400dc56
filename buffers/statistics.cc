#include "buffers/statistics.h"

#include <algorithm>

namespace momenta {
namespace {

constexpr Stat kAllStats[] = {Stat::kSum,    Stat::kCount,  Stat::kMean,    Stat::kVar,
                              Stat::kStd,    Stat::kMoment, Stat::kMoments, Stat::kCom,
                              Stat::kSpread, Stat::kPolyfit, Stat::kMin,    Stat::kMax};

StatAnswer One(Stat s, long double v) {
  StatAnswer a;
  a.stat = s;
  a.values = {v};
  return a;
}

}  // namespace

std::string_view StatName(Stat s) {
  switch (s) {
    case Stat::kSum: return "sum";
    case Stat::kCount: return "count";
    case Stat::kMean: return "mean";
    case Stat::kVar: return "var";
    case Stat::kStd: return "std";
    case Stat::kMoment: return "moment";
    case Stat::kMoments: return "moments";
    case Stat::kCom: return "com";
    case Stat::kSpread: return "spread";
    case Stat::kPolyfit: return "polyfit";
    case Stat::kMin: return "min";
    case Stat::kMax: return "max";
  }
  return "?";
}

Result<Stat> ParseStat(std::string_view name) {
  for (Stat s : kAllStats)
    if (StatName(s) == name) return s;
  return Status::InvalidArgument("--stat", "unknown statistic '" + std::string(name) +
                                               "' (sum count mean var std moment moments com "
                                               "spread polyfit min max)");
}

bool NeedsExtremes(std::span<const Stat> stats) {
  return std::any_of(stats.begin(), stats.end(),
                     [](Stat s) { return s == Stat::kMin || s == Stat::kMax; });
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

Result<StatAnswer> ComputeStat(Stat stat, const StatParams& params, const RangeSummary& range,
                               uint64_t p, DType dtype) {
  const long double centre = params.about.value_or(static_cast<long double>(p));
  switch (stat) {
    case Stat::kCount: {
      StatAnswer a = One(stat, static_cast<long double>(range.count()));
      a.is_integer = true;
      a.integer = range.count();
      return a;
    }
    case Stat::kSum: {
      StatAnswer a = One(stat, Sum(range.index));
      if (DTypeIsInteger(dtype)) {
        a.is_integer = true;
        a.integer = range.exact_sum;
        a.values[0] = static_cast<long double>(range.exact_sum);
      }
      return a;
    }
    case Stat::kMean: {
      if (DTypeIsInteger(dtype) && range.count() > 0)  // exact numerator
        return One(stat, static_cast<long double>(range.exact_sum) / range.count());
      auto v = Mean(range.values);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    case Stat::kVar:
    case Stat::kStd: {
      auto v = stat == Stat::kVar ? Variance(range.values, params.ddof) : StdDev(range.values, params.ddof);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    case Stat::kMoment: {
      auto v = Moment(range.index, p, params.order.value_or(1), centre);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    case Stat::kMoments: {
      const int k = params.order.value_or(range.index.order());
      auto v = Moments(range.index, p, k, centre);
      if (!v.ok()) return v.status();
      StatAnswer a;
      a.stat = stat;
      a.values.assign(v->begin(), v->begin() + k + 1);
      return a;
    }
    case Stat::kCom: {
      auto v = CenterOfMass(range.index, p);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    case Stat::kSpread: {
      auto v = Spread(range.index);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
    case Stat::kPolyfit: {
      auto v = PolyFit(range.index, params.degree);
      if (!v.ok()) return v.status();
      StatAnswer a;
      a.stat = stat;
      a.values.assign(v->begin(), v->begin() + params.degree + 1);
      return a;
    }
    case Stat::kMin:
    case Stat::kMax: {
      auto v = stat == Stat::kMin ? Min(range.extremes) : Max(range.extremes);
      if (!v.ok()) return v.status();
      return One(stat, *v);
    }
  }
  return Status::InvalidArgument("--stat", "unknown statistic");
}

}  // namespace momenta
