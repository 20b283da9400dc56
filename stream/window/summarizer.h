// Summarizer: the local answers of one stream over its sliding window, at
// eps: the count (WindowCount at eps), the count of any item and the top
// items (ItemCounts at eps/3, frequent items correct at eps), and quantiles
// (WindowQuantiles at eps). What `momenta window` prints.
//
// Memory: O((1/eps) log(eps N)) + O((1/eps)^2 log(eps N)) words for N items in
// the window plus the timestamps of the last tau+1 time units; measured at
// eps = 0.01 and N = 10^8 in bench/stream_bench.cc (under 64 MiB).
// Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "stream/window/item_counts.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"

namespace momenta {

struct WindowReport {
  int64_t time = 0;
  double count = 0;
  uint64_t count_low = 0, count_high = 0;
  uint64_t dropped = 0;                                              // late items refused since the start
  std::vector<ItemEstimate> top;                                     // largest estimates first
  std::vector<std::pair<double, std::optional<int64_t>>> quantiles;  // (phi, value)
};

class Summarizer {
 public:
  // InvalidArgument for a bad spec or eps outside (0, 1).
  static Result<Summarizer> Create(const WindowSpec& spec, double eps);

  // REQUIRES: t >= now()
  void AdvanceTo(int64_t t);
  // A timestamp after the clock moves it there; false (and dropped) when too late.
  bool Add(int64_t ts, int64_t item);

  // REQUIRES: every phi in [0, 1]
  WindowReport Report(size_t top, const std::vector<double>& phis) const;

  int64_t now() const { return count_.now(); }
  double eps() const { return eps_; }
  uint64_t dropped() const { return count_.dropped(); }
  size_t MemoryBytes() const;
  const WindowCount& count() const { return count_; }
  const ItemCounts& items() const { return items_; }
  const WindowQuantiles& quantiles() const { return quantiles_; }

 private:
  Summarizer(double eps, WindowCount c, ItemCounts i, WindowQuantiles q)
      : eps_(eps), count_(std::move(c)), items_(std::move(i)), quantiles_(std::move(q)) {}
  double eps_;
  WindowCount count_;
  ItemCounts items_;
  WindowQuantiles quantiles_;
};

}  // namespace momenta
