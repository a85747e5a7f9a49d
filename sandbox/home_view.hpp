// The hidden home (FilesystemPolicy::hide_home): which host directories a sandboxed command
// does not see at all, what stays readable in them, and whose homes are protected. Internal
// to sandbox/: path_policy.cpp turns these into rules (the git config the home gets instead
// of its own is git_home_config.hpp's).
//
// Why hide rather than list: a list of credentials always misses one (git's second credential
// store, pip's config, terraform's, every new CLI's token file). The home is where a user's
// secrets live, so it is unreadable as a whole, and what tools need from it to run is the
// list instead: toolchain managers and package caches (default_paths.hpp), read-only. The
// credential list stays, deeper, so an allow-listed directory never shows a token.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {

// An account's home as /etc/passwd names it, canonical; homes that are the system's own
// tree (/, /bin, /usr/..., /dev, /tmp, ...) and homes that do not exist are left out. Read
// with fgetpwent_r: accounts only NSS knows (LDAP, sssd) are not enumerated.
struct PasswdHome {
  uid_t uid;
  std::string path;
};
std::vector<PasswdHome> passwd_homes(const char* passwd_file = "/etc/passwd");
// People's accounts, as Debian's login.defs numbers them (UID_MIN .. nobody).
constexpr uid_t kFirstPersonUid = 1000;
constexpr uid_t kNobodyUid = 65534;

// The directories hidden for `homes` (the protected homes, canonical): each of them, and
// every other person's (/root, /home as a whole, and people's homes elsewhere in
// `passwd_file`). Existing real directories only; never `/`.
std::vector<paths::Resolved> hidden_home_dirs(const std::vector<std::string>& homes,
                                              const char* passwd_file = "/etc/passwd");

// Another user's home that `path` lies in: /home/<name> (with /home resolved) when `path`
// is at or below it, else the innermost home `passwd_file` names around it, else "". A run
// from /home/bob/proj or /var/lib/postgresql/x by root (or by a user the owner lets in)
// protects that home as the user's own: credentials, start-up files, no repository at its top.
std::string user_home_around(const std::string& path, const char* passwd_file = "/etc/passwd");

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

}  // namespace paddock::sandbox
