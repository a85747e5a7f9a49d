// Which directories may become writable roots (internal to sandbox/). Protections are rules
// *inside* a writable root, so a root placed at or inside a protected path escapes them: a
// working directory reached as `tools -> .git` would make the repository's hooks and config
// writable, `--allow-write ~/.ssh` the keys, a cwd of $HOME every start-up file the list does
// not name. Such a root is refused (config_invalid), whatever spelling reached it: the check
// runs on canonical paths.
#pragma once

#include <string>
#include <vector>

#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox::paths {

class RootGuard {
 public:
  // `homes` canonical. `default_denies`: the built-in protections are on (git directories,
  // mandatory names, and whatever add() is given); the home rule holds regardless.
  RootGuard(std::vector<std::string> homes, bool allow_write_home, bool default_denies)
      : homes_(std::move(homes)), allow_write_home_(allow_write_home), protect_(default_denies) {}

  // A canonical path no writable root may be or lie in; `why` says what it is ("a default
  // credential"). Missing paths need not be added: no existing root lies in them.
  void add(std::string path, const char* why);

  // Throws config_invalid naming `w` when `root` (canonical, existing) may not be writable:
  //   - it is a home, unless allow_write_home; it contains a home (always: other users'
  //     homes, and /root's when it is `/`);
  //   - with default_denies: it is or lies in a `.git` directory, a git directory (HEAD plus
  //     objects and refs, or commondir: a bare repository, --separate-git-dir, a worktree's
  //     gitdir), a mandatory read-only name of any ancestor (`repo/.vscode/x`), or an added
  //     path.
  // `own_git_dir`: the root is the git directory of a worktree paddock made
  // (FilesystemPolicy::git_dir_roots): the git directory rules are skipped for it alone.
  void check(const std::string& root, const Where& w, bool own_git_dir = false) const;

 private:
  struct Protected {
    std::string path;
    const char* why;
  };
  std::vector<std::string> homes_;
  std::vector<Protected> protected_;
  bool allow_write_home_;
  bool protect_;
};

// A directory git treats as a git directory: it runs hooks and reads config from there.
bool is_git_directory(const std::string& dir);

}  // namespace paddock::sandbox::paths
