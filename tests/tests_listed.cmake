# Run by ctest (tests/CMakeLists.txt): fails, naming them, when a *_test.cc
# under tests/ (fuzz/ aside) is missing from momenta_tests' source list, so a
# test file added without its line (or brought in by a merge) is not silently
# left out of the build.
#   TESTS_DIR  tests/
#   LISTED     momenta_tests' sources, relative to TESTS_DIR, joined by |
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" LISTED "${LISTED}")
file(GLOB_RECURSE found RELATIVE ${TESTS_DIR} ${TESTS_DIR}/*_test.cc)
list(FILTER found EXCLUDE REGEX "^fuzz/")
set(missing "")
foreach(f ${found})
  if(NOT f IN_LIST LISTED)
    list(APPEND missing ${f})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "not in momenta_tests' sources (tests/CMakeLists.txt): ${missing}")
endif()
list(LENGTH found n)
message(STATUS "${n} test files, all listed")
