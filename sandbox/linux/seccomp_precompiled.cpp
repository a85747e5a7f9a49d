// The seccomp programs compiled at build time (seccomp_precompile.cpp writes the table).
#include "sandbox/linux/seccomp_precompiled.hpp"

#include <iterator>

#include "seccomp_programs.inc"

namespace paddock::sandbox {

std::optional<SeccompProgram> precompiled_seccomp_program(const SeccompOptions& options) {
#if PADDOCK_SECCOMP_PRECOMPILED
  if (options.allow_unix_sockets) {
    return SeccompProgram({std::begin(kProgramUnixSockets), std::end(kProgramUnixSockets)});
  }
  return SeccompProgram({std::begin(kProgramPlain), std::end(kProgramPlain)});
#else
  (void)options;
  return std::nullopt;
#endif
}

}  // namespace paddock::sandbox
