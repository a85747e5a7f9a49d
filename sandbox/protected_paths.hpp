// Protected paths that did not exist when a command started (a `.git/hooks` or `.bashrc` not
// there yet). A mount can only cover a path that exists, and creating a stub on the host to
// mount over is what srt does and what we refuse to do: so the runtime checks them once the
// sandbox is gone (its PID namespace died with the command) and removes what it created.
#pragma once

#include <string>
#include <vector>

#include "paddock/exec_result.hpp"

namespace paddock::sandbox {

// For each path where something exists now: removes what the command created there — the
// first symlink on the way or the entry itself, recursively, never following a symlink (all
// relative to directory fds opened O_NOFOLLOW) — and returns a file-write Violation naming it
// and `program`. `*failed` (if given) is set when something could not be removed: the caller
// must then fail the run, since the host keeps what the command left.
std::vector<Violation> revert_created_protected_paths(const std::vector<std::string>& paths,
                                                      const std::string& program,
                                                      bool* failed = nullptr);

}  // namespace paddock::sandbox
