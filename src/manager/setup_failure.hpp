// What a failed sandbox set-up means for the caller. Only a kernel feature or a host setting
// this platform lacks is "unsupported platform" (E_UNSUPPORTED_PLATFORM), the one failure the
// policy's fallback may answer by running the command unsandboxed (warn). Anything else, a
// port in use, out of descriptors or memory, a namespace limit reached under load, a path
// step, is this moment's or this command's failure: E_SPAWN_FAILED, and never the host.
// Under load the first kind was taken for the second: a transient EADDRINUSE ran commands
// unsandboxed under warn.
#pragma once

#include <optional>
#include <string>

#include "process/spawn.hpp"

namespace paddock::manager {

struct SetupFailure {
  bool platform = false;  // a missing feature: the same on every try on this host
  std::string reason;     // one line: the step, its path, the errno's text, any hint
};

// For a sandboxed spawn: nullopt unless it failed in the sandbox's own steps (clone with the
// namespace flags, entering the pooled network namespace, a child step before execve).
// `namespace_flags` are the clone flags the spawn asked for.
std::optional<SetupFailure> classify_setup_failure(const process::SpawnResult& spawned,
                                                   int namespace_flags);

}  // namespace paddock::manager
