// stream/window/hashed_names.h: the rules the three name tables share — the
// first name of a hash keeps it and the others are counted, the latest stamp
// is kept, and pruning is due at the floor and then each time the table has
// doubled since it last ran.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "stream/window/hashed_names.h"

namespace momenta {
namespace {

TEST(HashedNamesTest, FirstNameKeepsTheHashAndOthersAreCounted) {
  HashedNames names;
  names.Note(7, "alpha", 10);
  names.Note(7, "alpha", 5);
  EXPECT_EQ(names.collisions(), 0u);
  names.Note(7, "beta", 30);
  names.Note(7, "gamma", 20);
  EXPECT_EQ(names.collisions(), 2u);
  ASSERT_NE(names.Find(7), nullptr);
  EXPECT_EQ(names.Find(7)->name, "alpha");
  EXPECT_EQ(names.Find(7)->last_ts, 30);  // the latest stamp, whichever name came with it
  EXPECT_EQ(names.Find(8), nullptr);
  EXPECT_EQ(names.size(), 1u);
}

TEST(HashedNamesTest, PruneIsDueAtTheFloorThenAtEachDoubling) {
  HashedNames names(/*floor=*/4);
  for (int64_t i = 0; i < 3; ++i) names.Note(i, std::to_string(i));
  EXPECT_FALSE(names.PruneDue());
  names.Note(3, "3");
  EXPECT_TRUE(names.PruneDue());
  // Keeps the even items: 2 left, so the next prune is due at the floor (4).
  names.PruneIf([](int64_t item, const HashedNames::Entry&) { return item % 2 != 0; });
  EXPECT_EQ(names.size(), 2u);
  ASSERT_NE(names.Find(2), nullptr);
  EXPECT_EQ(names.Find(1), nullptr);
  EXPECT_FALSE(names.PruneDue());
  for (int64_t i = 10; i < 13; ++i) names.Note(i, std::to_string(i));
  ASSERT_EQ(names.size(), 5u);
  names.PruneIf([](int64_t, const HashedNames::Entry&) { return false; });  // keeps all 5: due at 10
  for (int64_t i = 20; i < 24; ++i) names.Note(i, std::to_string(i));
  EXPECT_EQ(names.size(), 9u);
  EXPECT_FALSE(names.PruneDue());
  names.Note(24, "24");
  EXPECT_TRUE(names.PruneDue());
}

}  // namespace
}  // namespace momenta
