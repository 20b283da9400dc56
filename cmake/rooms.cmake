# The house's rooms: each folder of storage/, buffers/ and stream/ is one static
# library that may include only the rooms below it. A room's CMakeLists.txt
# says in one line what it holds and what it may include; the build checks it:
# an #include reaching a project folder not in MAY_INCLUDE fails the build
# (cmake/check_includes.cmake), at configure time and again whenever a file of
# the room changes.

# momenta_check_includes(<target> <folder> <allowed prefixes...>): the files
# directly in <folder> (not its subfolders) include project headers only from
# <folder> itself and the allowed prefixes ("storage/" allows every storage room).
function(momenta_check_includes target folder)
  file(GLOB files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.h ${PROJECT_SOURCE_DIR}/${folder}/*.cc)
  set(allowed ${folder}/ ${ARGN})
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${target}.includes_checked)
  # Lists travel joined by | (a ; would split the argument).
  string(REPLACE ";" "|" allowed_arg "${allowed}")
  string(REPLACE ";" "|" files_arg "${files}")
  set(args -DFOLDER=${folder} -DALLOWED=${allowed_arg} -DFILES=${files_arg})
  execute_process(COMMAND ${CMAKE_COMMAND} ${args} -P ${PROJECT_SOURCE_DIR}/cmake/check_includes.cmake
                  RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${folder}: an #include reaches a room it may not (above)")
  endif()
  add_custom_command(OUTPUT ${stamp}
                     COMMAND ${CMAKE_COMMAND} ${args} -P ${PROJECT_SOURCE_DIR}/cmake/check_includes.cmake
                     COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
                     DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/check_includes.cmake
                     COMMENT "Checking what ${folder}/ includes" VERBATIM)
  add_custom_target(${target}_includes DEPENDS ${stamp})
  add_dependencies(${target} ${target}_includes)
endfunction()

# momenta_room(<target> FOLDER <folder> BELOW <libraries> MAY_INCLUDE <prefixes> SOURCES <files>):
# the room's static library, linking the rooms below it, installed with the others.
function(momenta_room target)
  cmake_parse_arguments(R "" "FOLDER" "BELOW;MAY_INCLUDE;SOURCES" ${ARGN})
  add_library(${target} STATIC ${R_SOURCES})
  target_compile_options(${target} PRIVATE ${MOMENTA_WARNINGS})
  target_link_libraries(${target} PUBLIC ${R_BELOW})
  momenta_check_includes(${target} ${R_FOLDER} ${R_MAY_INCLUDE})
  set_property(GLOBAL APPEND PROPERTY MOMENTA_ROOM_LIBRARIES ${target})
endfunction()
