# The LAPACK drop-in on an unchanged program: PROGRAM (linked against the
# system LAPACK only) runs once as it is and once with DROPIN in LD_PRELOAD and
# TANDEM_VERBOSE=1. Both must pass their own checks; with the preload tandem's
# one-line log must show each routine, without it nothing of tandem may appear.
#
# LINKED, if given, is the same program linked with the drop-in ahead of the
# system LAPACK (link order instead of LD_PRELOAD): tandem must take its calls.
#
# ARGS, if given, are the program's arguments (e.g. a script for an interpreter),
# and ROUTINES the routines whose lines must appear (default sgesv sgetrf sgetrs).
#
#   cmake -DPROGRAM=... -DDROPIN=... [-DARGS=...] [-DLINKED=...] -P dropin_check.cmake
foreach(var PROGRAM DROPIN)
  if(NOT DEFINED ${var} OR NOT EXISTS "${${var}}")
    message(FATAL_ERROR "dropin_check.cmake: ${var} is not set or missing")
  endif()
endforeach()

if(NOT DEFINED ROUTINES)
  set(ROUTINES sgesv sgetrf sgetrs)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_PRELOAD TANDEM_VERBOSE=1 "${PROGRAM}" ${ARGS}
                RESULT_VARIABLE plain_result OUTPUT_VARIABLE plain_out ERROR_VARIABLE plain_err)
message(STATUS "as it is:\n${plain_out}${plain_err}")
if(NOT plain_result EQUAL 0)
  message(FATAL_ERROR "the program failed on the system LAPACK")
endif()
if(plain_err MATCHES "tandem: ")
  message(FATAL_ERROR "tandem was used without the preload")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_PRELOAD=${DROPIN}" TANDEM_VERBOSE=1 "${PROGRAM}" ${ARGS}
                RESULT_VARIABLE preload_result OUTPUT_VARIABLE preload_out ERROR_VARIABLE preload_err)
message(STATUS "with LD_PRELOAD=${DROPIN}:\n${preload_out}${preload_err}")
if(NOT preload_result EQUAL 0)
  message(FATAL_ERROR "the program failed with the drop-in")
endif()
foreach(routine ${ROUTINES})
  if(NOT preload_err MATCHES "tandem: ${routine} ")
    message(FATAL_ERROR "no '${routine}' line from tandem: the drop-in did not take the call")
  endif()
endforeach()
# The bad LDA goes to XERBLA before tandem sees it, as LAPACK's own routine does.
if(preload_err MATCHES "tandem: sgesv m=300 n=300 nrhs=1 info=-")
  message(FATAL_ERROR "the bad argument reached tandem instead of XERBLA")
endif()

if(DEFINED LINKED)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_PRELOAD TANDEM_VERBOSE=1 "${LINKED}"
                  RESULT_VARIABLE linked_result OUTPUT_VARIABLE linked_out ERROR_VARIABLE linked_err)
  message(STATUS "linked with the drop-in first:\n${linked_out}${linked_err}")
  if(NOT linked_result EQUAL 0 OR NOT linked_err MATCHES "tandem: sgesv ")
    message(FATAL_ERROR "the program linked with the drop-in first failed or did not use tandem")
  endif()
endif()
