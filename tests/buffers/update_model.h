// The update model the concurrency tests race a reader against: update u
// (1, 2, ...) is log record u and sets a[(u * 40503) % kUpdateModelLength] = u,
// so the exact state after any log sequence s is known without replaying.
// Shared by concurrent_reader_test.cc and shared_reader_stress.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "buffers/buffered_array.h"

namespace momenta::testing {

inline constexpr uint64_t kUpdateModelLength = 1 << 14;

// The index update u sets.
inline uint64_t UpdateIndex(uint64_t u) { return (u * 40503) % kUpdateModelLength; }

// The exact sum of a[p, q) after the first s updates: the last update u <= s
// of each index, found walking back over at most kUpdateModelLength updates.
inline long double SumAfter(uint64_t s, uint64_t p, uint64_t q) {
  std::vector<uint64_t> last(kUpdateModelLength, 0);
  for (uint64_t u = s; u >= 1 && u + kUpdateModelLength > s; --u)
    if (last[UpdateIndex(u)] == 0) last[UpdateIndex(u)] = u;
  long double sum = 0;
  for (uint64_t i = p; i < q; ++i) sum += last[i];
  return sum;
}

// Updates u .. u + count - 1, as one batch.
inline std::vector<IndexedValue> UpdateBatch(uint64_t u, uint64_t count) {
  std::vector<IndexedValue> batch;
  batch.reserve(count);
  for (uint64_t k = 0; k < count; ++k) batch.push_back({UpdateIndex(u + k), Value::Float(static_cast<double>(u + k))});
  return batch;
}

// A writer of the model's array: no sync, small leaves (128) and fan-out (8)
// so that updates reach every level quickly.
inline BufferedArrayOptions UpdateModelWriterOptions() {
  BufferedArrayOptions w;
  w.io.writable = true;
  w.sync = LogSync::kNone;
  w.tree.leaf_span = 128;
  w.tree.fanout = 8;
  return w;
}

}  // namespace momenta::testing
