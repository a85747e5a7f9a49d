// A repository a command created (`git init`, `git clone`): kept if git would run nothing from
// it, quarantined otherwise.
//
// Quarantining every new `.git` would break the most common thing an agent does with git
// (clone a repository into its workspace). What makes a new repository dangerous to the host
// is what git executes from it: config (core.fsmonitor, core.hooksPath, core.pager, aliases,
// filters, include.path, ...), hooks, and pointers to other git dirs. So a new git dir is
// kept only if its config holds nothing but keys from a short allow-list of inert ones, its
// hooks are only git's own `*.sample` files (git runs a hook by its exact name), and it has
// no commondir, config.worktree, modules/ or worktrees/. Anything else, or anything that
// cannot be read and checked, is unsafe.
#pragma once

#include <string>
#include <string_view>

namespace paddock::sandbox {

// Empty if `git_dir` (a directory) is safe to leave for the host's git; else why not.
std::string unsafe_new_git_dir(const std::string& git_dir);

// Empty if a git config file with this text holds only inert keys (the ones `git init` and
// `git clone` write) in the plain syntax git writes; else the first thing that is not.
std::string unsafe_git_config(std::string_view text);

}  // namespace paddock::sandbox
