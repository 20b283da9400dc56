// FUZZ_CHECK(condition, message): a fuzz target's assertion of a property the
// code under test must keep on every input (an answer equal to its reference,
// a parse that round-trips). It holds in every build, with or without NDEBUG:
// on failure it prints the message and aborts, which libFuzzer reports as a
// crash and saves the input, and which fails the replay test.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, message)                                                                       \
  do {                                                                                                       \
    if (!(condition)) {                                                                                      \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, __LINE__, #condition, (message)); \
      std::abort();                                                                                          \
    }                                                                                                        \
  } while (0)
