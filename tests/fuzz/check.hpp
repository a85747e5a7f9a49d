// Shared by the fuzz targets: an invariant that fails aborts with what failed, so libFuzzer
// reports a crash and saves the input (assert() would vanish under NDEBUG).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace fuzz {

// An error message goes into a one-line reply or log: it must stay one line.
inline bool one_line(std::string_view s) {
  return !s.empty() && s.find('\n') == std::string_view::npos &&
         s.find('\r') == std::string_view::npos;
}

}  // namespace fuzz
