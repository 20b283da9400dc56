// stream/protocol/rank_steps.h: the step function and the interval rule of
// AnswerQuantile, on duplicates, on an empty site and on two sites.
#include <gtest/gtest.h>

#include "stream/protocol/rank_steps.h"

namespace momenta {
namespace {

// stream/REFERENCE.md §4.2: one site, window {1, 2, 2, 2}, phi = 0.6. The value 2 holds
// ranks 2..4; "minimize |R(x) - T|" picks 1, the interval rule picks 2.
TEST(RankStepsTest, IntervalRuleHandlesDuplicates) {
  RankSteps s;
  s.values = {1, 2};
  s.levels = {1, 4};
  s.count = 4;
  EXPECT_EQ(AnswerQuantile({&s}, 0.6), 2);
  EXPECT_EQ(AnswerQuantile({&s}, 0.0), 1);
  EXPECT_EQ(AnswerQuantile({&s}, 1.0), 2);
  EXPECT_EQ(s.At(0), 0);
  EXPECT_EQ(s.At(1), 1);
  EXPECT_EQ(s.At(5), 4);
  RankSteps empty;
  EXPECT_FALSE(AnswerQuantile({&empty}, 0.5).has_value());
  // Two sites interleave.
  RankSteps a, b;
  a.values = {10, 30};
  a.levels = {1, 2};
  a.count = 2;
  b.values = {20, 40};
  b.levels = {1, 2};
  b.count = 2;
  EXPECT_EQ(AnswerQuantile({&a, &b}, 0.5), 20);
  EXPECT_EQ(AnswerQuantile({&a, &b}, 1.0), 40);
}

}  // namespace
}  // namespace momenta
