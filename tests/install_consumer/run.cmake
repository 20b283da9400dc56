# Installs the already-built project into a scratch prefix, then builds a tiny
# consumer against it twice, each time with exactly the lines the "Embedding"
# section of the documents (README.md or docs/*.md) shows, read from them so the two cannot drift:
#   1. its ```cmake block (find_package + target_link_libraries of `app`);
#   2. its `c++ app.cc ... $(pkg-config --cflags --libs momenta)` line, run by
#      /bin/sh as written (no --static).
# app.cc is its "### Embedding the monitor" ```cpp block (a window and a site
# in ten lines each) followed by consumer.cc, which runs them.
# Either one failing to configure, compile, link or run fails the test, and
# so does an installed header that momenta.h does not reach (0. below).
# Run by ctest (see tests/CMakeLists.txt).
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

# The documents' Embedding section: README.md and docs/*.md are searched alike,
# so the lines keep being built wherever the section moves.
file(READ ${SOURCE_DIR}/README.md readme)
file(GLOB docs LIST_DIRECTORIES false ${SOURCE_DIR}/docs/*.md)
list(SORT docs)
foreach(doc ${docs})
  file(READ ${doc} text)
  string(APPEND readme "\n${text}")
endforeach()
string(FIND "${readme}" "\n## Embedding" at)
if(at LESS 0)
  message(FATAL_ERROR "README.md and docs/*.md have no '## Embedding' section")
endif()
string(SUBSTRING "${readme}" ${at} -1 embedding)
string(SUBSTRING "${embedding}" 1 -1 embedding)
string(FIND "${embedding}" "\n## " end)  # the next section
if(end GREATER 0)
  string(SUBSTRING "${embedding}" 0 ${end} embedding)
endif()
if(NOT embedding MATCHES "```cmake\n([^`]*)```")
  message(FATAL_ERROR "the documents' Embedding section has no ```cmake block")
endif()
set(cmake_lines "${CMAKE_MATCH_1}")
if(NOT embedding MATCHES "`(c\\+\\+ app\\.cc [^`]*pkg-config --cflags --libs momenta[^`]*)`")
  message(FATAL_ERROR "the documents' Embedding section has no `c++ app.cc ... $(pkg-config --cflags --libs momenta)` line")
endif()
set(pc_line "${CMAKE_MATCH_1}")
string(FIND "${embedding}" "\n### Embedding the monitor" at)
if(at LESS 0)
  message(FATAL_ERROR "the documents' Embedding section has no '### Embedding the monitor' part")
endif()
string(SUBSTRING "${embedding}" ${at} -1 monitor)
if(NOT monitor MATCHES "```cpp\n([^`]*)```")
  message(FATAL_ERROR "the documents' 'Embedding the monitor' has no ```cpp block")
endif()
file(READ ${SOURCE_DIR}/tests/install_consumer/consumer.cc consumer)
set(app_cc "// docs: Embedding the monitor\n#include <cstdio>\n#include <string>\n${CMAKE_MATCH_1}\n${consumer}")
if(pc_line MATCHES "--static")
  message(FATAL_ERROR "the documents' pkg-config line uses --static: ${pc_line}")
endif()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# 0. The installed headers are exactly momenta.h and what it includes
#    (cmake/installed_headers.cmake): the compiler lists what it reads.
find_program(CXX_COMPILER c++ REQUIRED)
set(include_dir ${prefix}/include/momenta)
file(WRITE ${WORK_DIR}/umbrella.cc "#include \"momenta.h\"\n")
execute_process(COMMAND ${CXX_COMPILER} -std=c++20 -M -I${include_dir} ${WORK_DIR}/umbrella.cc
                RESULT_VARIABLE rc OUTPUT_VARIABLE deps ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "momenta.h does not compile from the installed headers alone "
                      "(a header it needs is not in cmake/installed_headers.cmake?):\n${err}")
endif()
string(REGEX MATCHALL "${include_dir}/[^ \\\n]+\\.h" reached "${deps}")
list(REMOVE_DUPLICATES reached)
file(GLOB_RECURSE installed ${include_dir}/*.h)
list(SORT reached)
list(SORT installed)
if(NOT reached STREQUAL installed)
  set(extra ${installed})
  list(REMOVE_ITEM extra ${reached})
  message(FATAL_ERROR "installed but not reached from momenta.h (internal? then leave it out of "
                      "cmake/installed_headers.cmake): ${extra}")
endif()

# 1. CMake package: the documents' block, after an `app` target.
set(cmake_src ${WORK_DIR}/cmake-src)
file(MAKE_DIRECTORY ${cmake_src})
file(WRITE ${cmake_src}/app.cc "${app_cc}")
file(WRITE ${cmake_src}/CMakeLists.txt
  "cmake_minimum_required(VERSION 3.25)\n"
  "project(momenta_consumer LANGUAGES CXX)\n"
  "set(CMAKE_CXX_STANDARD 20)\n"
  "add_executable(app app.cc)\n"
  "${cmake_lines}")
run(${CMAKE_COMMAND} -S ${cmake_src} -B ${WORK_DIR}/cmake-build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
run(${WORK_DIR}/cmake-build/app ${WORK_DIR}/a.npy)

# 2. pkg-config: the documents' command line, as written, in a folder holding app.cc.
find_program(PKG_CONFIG pkg-config REQUIRED)
set(pc_dir ${WORK_DIR}/pc-build)
file(MAKE_DIRECTORY ${pc_dir})
file(WRITE ${pc_dir}/app.cc "${app_cc}")
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig:${prefix}/lib64/pkgconfig)
execute_process(COMMAND ${PKG_CONFIG} --exists momenta RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config cannot find momenta.pc under ${prefix}")
endif()
execute_process(COMMAND /bin/sh -c "${pc_line}" WORKING_DIRECTORY ${pc_dir}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the documents' line failed (${rc}): ${pc_line}\n${out}\n${err}")
endif()
run(${pc_dir}/app ${WORK_DIR}/b.npy)
file(REMOVE_RECURSE ${WORK_DIR})
