# Run by ctest (tests/CMakeLists.txt): fails, naming them, when a GoogleTest
# suite is not named after its file: every suite in tests/**/x_y_test.cc must
# be XY...Test (its name starts with the file's name without underscores and
# ends in Test, letters compared without case), so a test named on a failure
# line says which file holds it.
#   TESTS_DIR  tests/
cmake_minimum_required(VERSION 3.25)
file(GLOB_RECURSE found RELATIVE ${TESTS_DIR} ${TESTS_DIR}/*_test.cc)
set(wrong "")
foreach(f ${found})
  get_filename_component(base ${f} NAME)
  string(REGEX REPLACE "_test\\.cc$" "" base "${base}")
  string(REPLACE "_" "" base "${base}")
  string(TOLOWER "${base}" base)
  file(STRINGS ${TESTS_DIR}/${f} lines REGEX "^(TEST|TEST_F|TEST_P|TYPED_TEST)\\( *[A-Za-z0-9_]+")
  foreach(line ${lines})
    string(REGEX REPLACE "^[A-Z_]+\\( *([A-Za-z0-9_]+).*" "\\1" suite "${line}")
    string(TOLOWER "${suite}" lower)
    if(NOT lower MATCHES "^${base}.*test$")
      list(APPEND wrong "${f}: ${suite}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES wrong)
if(wrong)
  string(REPLACE ";" "\n  " wrong "${wrong}")
  message(FATAL_ERROR "suites not named after their files:\n  ${wrong}")
endif()
message(STATUS "every suite is named after its file")
