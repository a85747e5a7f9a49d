// What makes a directory a git dir to git, and the identities the audit compares.
//
// The audit's answer must be a superset of git's own (setup.c is_git_directory): a directory
// git accepts that the audit does not is a repository whose config the host's git runs
// unchecked. Split from git_state.cpp, which walks the writable roots with these.
#pragma once

#include <string>
#include <vector>

#include "sandbox/git_state.hpp"
#include "sandbox/tree_walk.hpp"

namespace paddock::sandbox {

// `dir` (listed as `entries`) is a git dir to git, or something git would block on there.
bool looks_like_git_dir(const std::string& dir, const std::vector<TreeEntry>& entries);

// Throws GitScanRefused if a protected regular file (or one directly inside a protected
// directory: hooks/, info/) has more than one link.
void refuse_other_names(const std::vector<std::string>& protect);

}  // namespace paddock::sandbox
