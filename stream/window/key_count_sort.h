// Sorting (key, count) entries by key: every item-count bucket (ItemEntry,
// misra_gries.h) and every quantile bucket (ValueEntry, value_sample.h) is
// sorted when it is sealed or merged, so this is on the hot path of one item
// per tick.
//
// When the keys' spread and the counts fit one 64-bit word together (ids or
// values from a dense range, small counts: the usual case) the entries are
// sorted as words, (key - lowest) above count, and by radix in 8-bit passes
// when the spread fits 32 bits: a comparison sort of random keys
// mispredicts about half its comparisons. Otherwise a comparison sort.
// Equal keys end in no set order. *scratch is reused (2n words).
// CombineEqualKeys then adds up the counts of equal keys.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace momenta {

// Entries are packed to 4 bytes (misra_gries.h, value_sample.h), so an
// entry's int64 key may sit at an address that is not a multiple of 8. A
// reference to it, or a load through a pointer to member, assumes 8: undefined
// behavior (UndefinedBehaviorSanitizer reports it). Fields are copied bytewise.
template <class Entry, class T>
T LoadField(const Entry& e, T Entry::*field) {
  T v;
  std::memcpy(&v, &(e.*field), sizeof v);
  return v;
}
template <class Entry, class T>
void StoreField(Entry& e, T Entry::*field, T v) {
  std::memcpy(&(e.*field), &v, sizeof v);
}

// Sorts the n words at w by bits [low, low + bits) (the bits above are zero;
// REQUIRES bits <= 32) through tmp (n words); returns where the sorted words
// are (w or tmp).
uint64_t* RadixSortWords(uint64_t* w, uint64_t* tmp, size_t n, unsigned low, unsigned bits);

template <class Entry, int64_t Entry::*kKey, uint32_t Entry::*kCount>
void SortByKey(Entry* begin, Entry* end, std::vector<uint64_t>* scratch) {
  const size_t n = static_cast<size_t>(end - begin);
  if (n < 2) return;
  int64_t lo = LoadField(*begin, kKey), hi = lo;
  uint32_t max_count = 0;
  for (const Entry* x = begin; x != end; ++x) {
    const int64_t key = LoadField(*x, kKey);
    lo = std::min(lo, key);
    hi = std::max(hi, key);
    max_count = std::max(max_count, LoadField(*x, kCount));
  }
  auto width = [](uint64_t v) { return v == 0 ? 0u : 64u - static_cast<unsigned>(__builtin_clzll(v)); };
  const unsigned count_bits = width(max_count);  // <= 32
  const unsigned key_bits = width(static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo));
  if (key_bits + count_bits > 64) {
    std::sort(begin, end, [](const Entry& a, const Entry& b) { return LoadField(a, kKey) < LoadField(b, kKey); });
    return;
  }
  scratch->resize(2 * n);  // the words, then the radix sort's second buffer
  uint64_t* w = scratch->data();
  for (size_t i = 0; i < n; ++i)
    w[i] = (static_cast<uint64_t>(LoadField(begin[i], kKey)) - static_cast<uint64_t>(lo)) << count_bits |
           LoadField(begin[i], kCount);
  if (n >= 64 && key_bits <= 32) {
    w = RadixSortWords(w, w + n, n, count_bits, key_bits);
  } else {
    std::sort(w, w + n);
  }
  const uint64_t count_mask = (uint64_t{1} << count_bits) - 1;
  for (size_t i = 0; i < n; ++i) {
    StoreField(begin[i], kKey, static_cast<int64_t>(static_cast<uint64_t>(lo) + (w[i] >> count_bits)));
    StoreField(begin[i], kCount, static_cast<uint32_t>(w[i] & count_mask));
  }
}

// Sorted entries -> one entry per key, counts summed. (Counts must not
// overflow: a bucket holds < 2^31 items.)
template <class Entry, int64_t Entry::*kKey, uint32_t Entry::*kCount>
void CombineEqualKeys(std::vector<Entry>* entries) {
  std::vector<Entry>& e = *entries;
  size_t out = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    if (out > 0 && LoadField(e[out - 1], kKey) == LoadField(e[i], kKey)) {
      StoreField(e[out - 1], kCount, LoadField(e[out - 1], kCount) + LoadField(e[i], kCount));
    } else {
      e[out++] = e[i];
    }
  }
  e.resize(out);
}

}  // namespace momenta
