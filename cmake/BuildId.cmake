# Writes OUT = #define HETPLAN_BUILD_ID "<version> <git describe>", rewriting it
# only when it changes (so that only its includers recompile). Run at every
# build by the hetplan_build_id target: MPI ranks compare it to refuse a job
# whose nodes run different hetplan builds.
execute_process(
  COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE _describe OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR _describe STREQUAL "")
  set(_describe "no-git")
endif()
set(_text "#pragma once\n#define HETPLAN_BUILD_ID \"${VERSION} ${_describe}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" _old)
else()
  set(_old "")
endif()
if(NOT _old STREQUAL _text)
  file(WRITE "${OUT}" "${_text}")
endif()
