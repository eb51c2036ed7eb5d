# Installs the tandem build in TANDEM_BUILD_DIR into WORK_DIR/prefix, then builds
# and runs the separate project in CONSUMER_SOURCE_DIR against it through
# find_package(tandem): the check that the installed package is usable.
#
# With C_CONSUMER_SOURCE (a .c file) it also builds that C program through the
# installed pkg-config file alone and runs it.
#
#   cmake -DTANDEM_BUILD_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=... -P install_and_consume.cmake
foreach(var TANDEM_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install_and_consume.cmake: ${var} is not set")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/consumer-build")
# A fresh prefix and build each time, so nothing from an earlier run is found.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (${result}):\n${ARGN}\n--- stdout\n${out}\n--- stderr\n${err}")
  endif()
  message(STATUS "${what}: ok")
  if(ECHO_OUTPUT)
    message(STATUS "${out}")
  endif()
endfunction()

run_step("install" ${CMAKE_COMMAND} --install "${TANDEM_BUILD_DIR}" --prefix "${prefix}")

# The consumer uses the same generator and compilers as the tandem build.
set(generator_args)
if(EXISTS "${TANDEM_BUILD_DIR}/CMakeCache.txt")
  file(STRINGS "${TANDEM_BUILD_DIR}/CMakeCache.txt" generator_line REGEX "^CMAKE_GENERATOR:INTERNAL=")
  string(REGEX REPLACE "^CMAKE_GENERATOR:INTERNAL=" "" generator "${generator_line}")
  if(generator)
    list(APPEND generator_args -G "${generator}")
  endif()
  file(STRINGS "${TANDEM_BUILD_DIR}/CMakeCache.txt" cxx_line REGEX "^CMAKE_CXX_COMPILER:[A-Z]+=")
  string(REGEX REPLACE "^CMAKE_CXX_COMPILER:[A-Z]+=" "" cxx "${cxx_line}")
  if(cxx)
    list(APPEND generator_args "-DCMAKE_CXX_COMPILER=${cxx}")
  endif()
endif()

run_step("configure consumer" ${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${consumer_build}"
         ${generator_args} "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_BUILD_TYPE=Release)
run_step("build consumer" ${CMAKE_COMMAND} --build "${consumer_build}")

# The imported target gives the executable an RPATH to the installed library;
# LD_LIBRARY_PATH is only a fallback for platforms where it does not.
set(executable "${consumer_build}/tandem_consumer")
if(NOT EXISTS "${executable}")
  message(FATAL_ERROR "consumer executable not found at ${executable}")
endif()
set(ld_path "${prefix}/lib:${prefix}/lib64")
if(DEFINED ENV{LD_LIBRARY_PATH} AND NOT "$ENV{LD_LIBRARY_PATH}" STREQUAL "")
  string(APPEND ld_path ":$ENV{LD_LIBRARY_PATH}")
endif()
set(ECHO_OUTPUT ON)
run_step("run consumer" ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${ld_path}" "${executable}")

# A C program built without CMake, through the installed pkg-config file.
if(DEFINED C_CONSUMER_SOURCE)
  find_program(PKG_CONFIG pkg-config)
  find_program(C_COMPILER NAMES cc gcc)
  if(NOT PKG_CONFIG OR NOT C_COMPILER)
    message(FATAL_ERROR "pkg-config and a C compiler are needed (tools/setup.sh installs them)")
  endif()
  file(GLOB pc_files "${prefix}/lib*/pkgconfig/tandem.pc" "${prefix}/lib/*/pkgconfig/tandem.pc")
  if(NOT pc_files)
    message(FATAL_ERROR "tandem.pc was not installed under ${prefix}")
  endif()
  list(GET pc_files 0 pc_file)
  get_filename_component(pc_dir "${pc_file}" DIRECTORY)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${pc_dir}"
                          ${PKG_CONFIG} --cflags --libs tandem
                  RESULT_VARIABLE result OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs tandem failed")
  endif()
  message(STATUS "pkg-config: ${flags}")
  separate_arguments(flag_list UNIX_COMMAND "${flags}")
  set(c_executable "${WORK_DIR}/tandem_c_consumer")
  set(ECHO_OUTPUT OFF)
  run_step("build C consumer" ${C_COMPILER} -std=c99 "${C_CONSUMER_SOURCE}" ${flag_list} -lm
           -o "${c_executable}")
  # No LD_LIBRARY_PATH: the RUNPATH from the .pc file must find the library.
  set(ECHO_OUTPUT ON)
  run_step("run C consumer" "${c_executable}")
endif()
