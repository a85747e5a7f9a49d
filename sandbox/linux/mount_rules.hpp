// The policy's rules as the mount layer needs them, beyond what path_policy resolves: the
// directories to pin above protected paths, and the working directory and program shown again
// where a cover of ours would hide them.
#pragma once

#include <string>
#include <vector>

#include "sandbox/linux/own_mounts.hpp"
#include "sandbox/path_policy.hpp"

namespace paddock::sandbox {

// Existing directories strictly between a protected path (read-only or hidden rule, missing
// path watched after the command, symlink on the way) and the writable root it lies in, minus
// those a rule already mounts on; and the protected symlinks themselves.
std::vector<std::string> directories_to_pin(const ResolvedFilesystem& fs);

// A working directory or program (`program` may be empty) that a cover of ours hides is shown
// again, read-only: an allow_read rule is inserted into fs.rules in depth order. A working
// directory inside a denied directory is refused (Error config_invalid); a program there stays
// hidden.
void show_start_points(ResolvedFilesystem& fs, const OwnMounts& own, const std::string& cwd,
                       const std::string& program);

}  // namespace paddock::sandbox
