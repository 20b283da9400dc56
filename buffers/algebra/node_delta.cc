#include "buffers/algebra/node_delta.h"

#include <algorithm>
#include <cmath>

namespace momenta {

void NodeDelta::Add(int order, uint64_t offset, const CellChange& c) {
  // index[t] += Δ · r^t
  const long double delta = static_cast<long double>(c.new_value) - c.old_value;
  const long double x = static_cast<long double>(offset);
  long double term = delta;
  index[0] += term;
  for (int t = 1; t <= order; ++t) {
    term *= x;
    index[t] += term;
  }
  // (n − K)² − (o − K)² = (n_dev − o_dev)(n_dev + o_dev); a − K is exact in
  // long double when a and K are within ~2^10 of each other (as ValueMoments).
  const long double new_dev = static_cast<long double>(c.new_value) - shift;
  const long double old_dev = static_cast<long double>(c.old_value) - shift;
  const long double d1 = new_dev - old_dev, d2 = d1 * (new_dev + old_dev);
  s1 += d1;
  s2 += d2;
  s2_magnitude += std::fabs(d2);
  delta_magnitude += std::fabs(d1);
  ++changes;
  exact += c.exact;
  new_min = std::min(new_min, c.new_value);
  new_max = std::max(new_max, c.new_value);
  old_min = std::min(old_min, c.old_value);
  old_max = std::max(old_max, c.old_value);
}

void NodeDelta::RebaseTo(double k) {
  if (k == shift) return;
  // Σ (n − k)² − (o − k)² = Σ Δ (n + o − 2K) + 2 (K − k) Σ Δ
  const long double d = static_cast<long double>(shift) - k;
  s2 += 2 * d * s1;
  s2_magnitude += 2 * std::fabs(d) * delta_magnitude;
  shift = k;
}

void NodeDelta::AddChild(int order, uint64_t offset, const NodeDelta& child) {
  NodeDelta moved = child;
  moved.RebaseTo(shift);
  const MomentTerms shifted = ShiftedTerms(child.index, order, static_cast<long double>(offset));
  for (int t = 0; t <= order; ++t) index[t] += shifted[t];
  s1 += moved.s1;
  s2 += moved.s2;
  s2_magnitude += moved.s2_magnitude;
  delta_magnitude += moved.delta_magnitude;
  changes += moved.changes;
  exact += moved.exact;
  new_min = std::min(new_min, moved.new_min);
  new_max = std::max(new_max, moved.new_max);
  old_min = std::min(old_min, moved.old_min);
  old_max = std::max(old_max, moved.old_max);
}

}  // namespace momenta
