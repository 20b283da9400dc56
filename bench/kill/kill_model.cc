// The update stream and its exact model; see kill_model.h.
#include "bench/kill/kill_model.h"

#include <cassert>

#include "bench/kill/kill_util.h"

namespace momenta::kill {

UpdateStream::UpdateStream(uint64_t seed)
    : seed_(Mix(seed ^ 0x5eed)), hot_first_(Mix(seed_) % (kLength - kHotLength)) {}

uint64_t UpdateStream::Index(uint64_t u) const {
  const uint64_t h = Mix(seed_ ^ (u * 0x2545f4914f6cdd1dull));
  return (h & 1) ? hot_first_ + (h >> 1) % kHotLength : (h >> 1) % kLength;
}

Model::Model(const UpdateStream& stream) : stream_(stream), values_(kLength, 0), fenwick_(kLength + 1, 0) {}

void Model::AdvanceTo(uint64_t u) {
  assert(u >= prefix_);
  for (uint64_t v = prefix_ + 1; v <= u; ++v) {
    const uint64_t i = stream_.Index(v);
    Add(i, static_cast<int64_t>(v) - values_[i]);
    values_[i] = static_cast<int64_t>(v);
  }
  prefix_ = u;
}

void Model::Add(uint64_t i, int64_t delta) {
  for (uint64_t k = i + 1; k <= kLength; k += k & (~k + 1)) fenwick_[k] += delta;
}

int64_t Model::PrefixSum(uint64_t n) const {
  int64_t s = 0;
  for (uint64_t k = n; k > 0; k -= k & (~k + 1)) s += fenwick_[k];
  return s;
}

int64_t Model::Sum(uint64_t p, uint64_t q) const {
  assert(p <= q && q <= kLength);
  return PrefixSum(q) - PrefixSum(p);
}

}  // namespace momenta::kill
