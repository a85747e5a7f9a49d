# Writes paddock_commit.hpp (PADDOCK_COMMIT: the checkout's commit, "-dirty" with local
# changes, "unknown" outside git) for `paddock --version`. Run at every build; the header is
# rewritten only when the text changes, so an unchanged commit rebuilds nothing.
execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SRC}" diff --quiet HEAD -- RESULT_VARIABLE dirty ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND commit "-dirty")
  endif()
endif()
file(WRITE "${OUT}.tmp" "#define PADDOCK_COMMIT \"${commit}\"\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
