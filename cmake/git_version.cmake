# Writes git_version.h with `git describe --always --dirty` at every build, rewriting it only when it changes,
# so rows name the commit that was actually built rather than the one at configure time.
# SCALING_GIT_VERSION, where set, wins: a copy of the tree on a GPU node may carry a .git that is not the commit
# being built (seen: a device copy whose .git stood at an older commit, so rows said "<older>-dirty").
if(DEFINED ENV{SCALING_GIT_VERSION} AND NOT "$ENV{SCALING_GIT_VERSION}" STREQUAL "")
  set(v "$ENV{SCALING_GIT_VERSION}")
else()
  execute_process(COMMAND git -C ${SRC} describe --always --dirty --abbrev=12
                  OUTPUT_VARIABLE v OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR v STREQUAL "")
    set(v "unknown")
  endif()
endif()
# v becomes a C string literal: anything but printable ASCII is '?', and backslashes, quotes and question marks (no
# trigraph) are escaped, so no value (a quote, a newline, "#include") can end the string or add code to the build.
string(REGEX REPLACE "[^ -~]" "?" v "${v}")
string(REPLACE "\\" "\\\\" v "${v}")
string(REPLACE "\"" "\\\"" v "${v}")
string(REPLACE "?" "\\?" v "${v}")
set(content "#define GIT_VERSION \"${v}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${content}")
  file(WRITE ${OUT} "${content}")
endif()
