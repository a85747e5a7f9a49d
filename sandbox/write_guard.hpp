// The write guard for an agent's own file tools (a `write_file` running in the supervisor, on
// the host): whether a write to a path is allowed under the same filesystem policy the sandbox
// enforces for a command in the same working directory, so file tools and commands share one
// boundary. Writable roots, denyWrite, protected paths (mandatory names such as `.bashrc` and
// `.git/hooks`, credentials, home start-up files), existing or not, and symlinks on the way
// (resolved: the answer is about the file the write would reach).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "paddock/sandbox_policy.hpp"
#include "paddock/write_check.hpp"

namespace paddock::sandbox {

// `path` may be relative (to `cwd`) and may not exist yet (its nearest existing parent is
// resolved). Advisory: between this answer and the write a symlink could be swapped in, so
// the caller writes to WriteCheck::path with O_NOFOLLOW, not to the name it was given. Throws
// Error(config_invalid) for a policy that does not resolve (as a command would fail).
WriteCheck check_write(const FilesystemPolicy& policy, const std::string& cwd,
                       const std::string& home, const std::string& path);

// A call's extra writable roots (ExecOptions::policy.allow_write) may not reach what the
// Manager's policy hides: a root at, above or inside one of its denyRead entries would make
// it readable (writable implies readable). The conflict, or nothing.
std::optional<std::string> call_root_conflict(const FilesystemPolicy& base,
                                              const std::vector<std::string>& call_roots,
                                              const std::string& cwd, const std::string& home);

}  // namespace paddock::sandbox
