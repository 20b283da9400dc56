// stream/window/key_count_sort.h, as every bucket's entries pass through it
// (SortEntriesByItem, misra_gries.h): against a comparison sort on every path
// (radix sort of narrow keys, sort of packed words, the comparison sort), with
// equal items and extreme keys. Seeds are printed; MOMENTA_SEED=<seed>
// reproduces a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "stream/window/misra_gries.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(KeyCountSortTest, MatchesAComparisonSortOnEveryPath) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> scratch;
  // (spread of ids, largest count): narrow ids take the radix sort (n >= 64),
  // wide ones a sort of words, ids and counts too wide for a word the
  // comparison sort.
  const std::pair<uint64_t, uint32_t> shapes[] = {{1, 1},
                                                  {300, 5},
                                                  {1 << 20, 300},
                                                  {uint64_t{1} << 32, 1u << 31},
                                                  {uint64_t{1} << 40, 1000},
                                                  {~uint64_t{0}, 3},
                                                  {~uint64_t{0}, 1u << 31}};
  for (int round = 0; round < 400; ++round) {
    const auto [spread, max_count] = shapes[round % std::size(shapes)];
    const size_t n = round < 40 ? static_cast<size_t>(round) : 1 + rng() % 700;
    const int64_t base = round % 3 == 0 ? INT64_MIN : static_cast<int64_t>(rng());
    std::vector<ItemEntry> e(n);
    for (ItemEntry& x : e) {
      const uint64_t off = spread == ~uint64_t{0} ? rng() : rng() % spread;
      x.item =
          spread == ~uint64_t{0} ? static_cast<int64_t>(off) : static_cast<int64_t>(static_cast<uint64_t>(base) + off);
      if (spread != ~uint64_t{0} && static_cast<uint64_t>(x.item) < static_cast<uint64_t>(base) && base != INT64_MIN)
        x.item = base;  // keep base + off from wrapping past INT64_MAX
      x.count = 1 + static_cast<uint32_t>(rng() % max_count);
    }
    if (n > 2) e[n / 2] = e[0];  // equal items
    std::vector<ItemEntry> want = e, got = e;
    std::stable_sort(want.begin(), want.end(), [](const ItemEntry& a, const ItemEntry& b) { return a.item < b.item; });
    SortEntriesByItem(got.data(), got.data() + got.size(), &scratch);
    // Equal items may come in any order: compare items, and each item's counts as a multiset.
    ASSERT_EQ(got.size(), want.size());
    auto by_item_count = [](const ItemEntry& a, const ItemEntry& b) {
      return a.item != b.item ? a.item < b.item : a.count < b.count;
    };
    std::sort(want.begin(), want.end(), by_item_count);
    for (size_t i = 0; i < got.size(); ++i)  // (packed entries: copied, not referenced; key_count_sort.h)
      ASSERT_EQ(LoadField(got[i], &ItemEntry::item), LoadField(want[i], &ItemEntry::item))
          << "round " << round << " at " << i;
    std::sort(got.begin(), got.end(), by_item_count);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(LoadField(got[i], &ItemEntry::count), LoadField(want[i], &ItemEntry::count)) << "round " << round;
  }
}

}  // namespace
}  // namespace momenta
