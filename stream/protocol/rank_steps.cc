#include "stream/protocol/rank_steps.h"

#include <algorithm>
#include <limits>
#include <queue>

namespace momenta {

double RankSteps::At(int64_t x) const {
  auto it = std::upper_bound(values.begin(), values.end(), x);
  return it == values.begin() ? 0 : levels[static_cast<size_t>(it - values.begin()) - 1];
}

std::optional<int64_t> AnswerQuantile(const std::vector<const RankSteps*>& sites, double phi) {
  double total = 0;
  for (const RankSteps* s : sites) total += s->count;
  if (total <= 0) return std::nullopt;
  const double T = phi * total;
  // k-way merge over the sites' boundaries; R is kept as the sum of each
  // site's current level.
  using Head = std::pair<int64_t, size_t>;  // (value, site)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
  std::vector<size_t> pos(sites.size(), 0);
  std::vector<double> level(sites.size(), 0);
  for (size_t s = 0; s < sites.size(); ++s)
    if (!sites[s]->values.empty()) heap.push({sites[s]->values[0], s});
  double R = 0, best_distance = std::numeric_limits<double>::infinity();
  std::optional<int64_t> best;
  while (!heap.empty()) {
    const int64_t x = heap.top().first;
    const double before = R;
    while (!heap.empty() && heap.top().first == x) {
      const size_t s = heap.top().second;
      heap.pop();
      R += sites[s]->levels[pos[s]] - level[s];
      level[s] = sites[s]->levels[pos[s]];
      if (++pos[s] < sites[s]->values.size()) heap.push({sites[s]->values[pos[s]], s});
    }
    const double distance = std::max({0.0, before - T, T - R});
    if (distance < best_distance) {
      best_distance = distance;
      best = x;
      if (distance == 0) break;
    }
  }
  return best;
}

}  // namespace momenta
