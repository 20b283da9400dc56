// ASSERT_OK(expr) / EXPECT_OK(expr): expr is a Status or a Result<T>; on
// failure the test prints the expression and the Status's one-line message,
// e.g.
//   ba: Not found: data.npy: no such file
// Further context streams on as with any gtest assertion:
//   ASSERT_OK(ba) << "seed " << seed;
#pragma once

#include <gtest/gtest.h>

#include "storage/util/status.h"

namespace momenta::testing {

inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const Result<T>& r) {
  return r.status();
}

// gtest predicate-formatter: success when the Status is OK.
template <typename T>
::testing::AssertionResult IsOk(const char* expression, const T& status_or_result) {
  const Status& s = StatusOf(status_or_result);
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expression << ": " << s.ToString();
}

}  // namespace momenta::testing

#define ASSERT_OK(expr) ASSERT_PRED_FORMAT1(::momenta::testing::IsOk, expr)
#define EXPECT_OK(expr) EXPECT_PRED_FORMAT1(::momenta::testing::IsOk, expr)
