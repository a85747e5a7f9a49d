// The path guard (opt-in: Config::commands.path_guard, settings commands.pathGuard), after
// Acolyte's: before a command runs, every path-like argument is resolved as the kernel would
// (symlinks followed, `..` applied, the nearest existing parent for a path not there yet) and
// refused when it lands outside the workspace (the working directory and the writable roots).
// A bare word counts when it names a symlink in the working directory. The sandbox confines
// the command either way; the guard stops it before it starts, naming the argument.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "paddock/classifier.hpp"

namespace paddock::sandbox {

// Why the first offending argument is refused ("argument '../x' resolves to /home/u/x,
// outside the workspace (/w)"), or nothing. `roots` are canonical.
std::optional<std::string> path_guard_refusal(const std::vector<PathToken>& tokens,
                                              const std::string& cwd,
                                              const std::vector<std::string>& roots,
                                              const std::string& home);

}  // namespace paddock::sandbox
