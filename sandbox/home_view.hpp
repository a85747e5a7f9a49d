// The hidden home (FilesystemPolicy::hide_home): which host directories a sandboxed command
// does not see at all, what stays readable in them, and the git identity it gets instead of
// the home's whole git config. Internal to sandbox/: path_policy.cpp turns these into rules,
// linux/mount_plan.cpp writes the identity file.
//
// Why hide rather than list: a list of credentials always misses one (git's second credential
// store, pip's config, terraform's, every new CLI's token file). The home is where a user's
// secrets live, so it is unreadable as a whole, and what tools need from it to run is the
// list instead: toolchain managers and package caches (default_paths.hpp), read-only. The
// credential list stays, deeper, so an allow-listed directory never shows a token.
#pragma once

#include <string>
#include <vector>

#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {

// The directories hidden for `homes` (the protected homes, canonical): each of them, and
// every other user's (/root and /home as a whole). Existing real directories only; never `/`.
std::vector<paths::Resolved> hidden_home_dirs(const std::vector<std::string>& homes);

// The built-in readable paths (home_readable_paths()) as they exist in `homes`: only real
// directories and files reached without a symlink (a link in the home would point the rule at
// wherever it leads; the name itself stays hidden).
std::vector<paths::Resolved> readable_home_paths(const std::vector<std::string>& homes);

// The repository around the writable root `root` that lies strictly below the hidden
// directory `hidden` (a checkout at ~/proj, run from ~/proj/src): its top, or "" when there is
// none below `hidden`, or when it is a protected home or above one (a dotfiles repository at
// ~ would show the whole home). Shown read-only, git run from `root` finds its .git as on the
// host, and a write above the root fails (EROFS) instead of vanishing in a private tree.
std::string repository_top_between(const std::string& root, const std::string& hidden,
                                   const std::vector<std::string>& homes);

// The contents of the git config file a hidden home gets in the sandbox: the user's name and
// e-mail from the host's global config of `home` (~/.gitconfig and ~/.config/git/config),
// nothing else (the whole file can hold credential helpers' tokens and URLs with passwords).
// "" when neither is set.
std::string git_identity_config(const std::string& home);

}  // namespace paddock::sandbox
