# Checks the layers' include rights (see the top CMakeLists.txt): for each
# layer, a header of a layer it may not see must not compile in its view, and
# one it may see must; and no source of a layer includes "../" anything.
# Arguments: COMPILER, SOURCE_DIR, VIEWS (the build's layer views), WORK_DIR.

# layer directory, its view (the object library), headers it may not include.
set(cases
  "scheduler|tandem_scheduler|cpu/panel_kernels.hpp|gpu/device_buffer.hpp|src/solver.hpp"
  "cpu|tandem_cpu|gpu/device_buffer.hpp|src/solver.hpp"
  "gpu|tandem_gpu|cpu/panel_kernels.hpp|src/solver.hpp"
  "src|tandem_api|cpu/panel_kernels.hpp|gpu/device_buffer.hpp")

file(MAKE_DIRECTORY ${WORK_DIR})
set(failures "")

function(try_include view header result_var output_var)
  set(probe ${WORK_DIR}/probe.cpp)
  file(WRITE ${probe} "#include \"${header}\"\n")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C
            ${COMPILER} -std=c++17 -fsyntax-only -I${SOURCE_DIR}/include -I${VIEWS}/${view} ${probe}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(${result_var} ${result} PARENT_SCOPE)
  set(${output_var} "${out}" PARENT_SCOPE)
endfunction()

foreach(case ${cases})
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 layer)
  list(GET parts 1 view)
  list(SUBLIST parts 2 -1 forbidden)
  if(NOT EXISTS ${VIEWS}/${view})
    list(APPEND failures "no view ${VIEWS}/${view}")
    continue()
  endif()
  # What every layer may include compiles (a view that lost its links fails here).
  try_include(${view} scheduler/device.hpp result out)
  if(NOT result EQUAL 0)
    list(APPEND failures "${layer}: scheduler/device.hpp does not compile in its view:\n${out}")
  endif()
  foreach(header ${forbidden})
    if(NOT EXISTS ${SOURCE_DIR}/${header})
      list(APPEND failures "${header} is gone: name another header of its layer here")
      continue()
    endif()
    try_include(${view} ${header} result out)
    # GCC: "<header>: No such file or directory"; Clang: "'<header>' file not found".
    if(result EQUAL 0 OR NOT (out MATCHES "${header}: No such file" OR
                              out MATCHES "'${header}' file not found"))
      list(APPEND failures "${layer} can include ${header}:\n${out}")
    endif()
  endforeach()
  file(GLOB sources ${SOURCE_DIR}/${layer}/*.cpp ${SOURCE_DIR}/${layer}/*.hpp
                    ${SOURCE_DIR}/${layer}/*.cu ${SOURCE_DIR}/${layer}/*.cuh)
  foreach(source ${sources})
    file(STRINGS ${source} relative REGEX "^[ \t]*#[ \t]*include[ \t]*\"\\.\\.")
    if(relative)
      list(APPEND failures "${source}: includes through ../ (${relative})")
    endif()
  endforeach()
endforeach()

if(failures)
  string(REPLACE ";" "\n" text "${failures}")
  message(FATAL_ERROR "layer rules broken:\n${text}")
endif()
message(STATUS "layers include only downward")
