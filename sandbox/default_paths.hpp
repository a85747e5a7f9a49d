// The built-in path lists of the filesystem policy, in one place (default_paths.cpp, one
// commented group per reason). All of them apply only when FilesystemPolicy::default_denies is
// on. Entries may be globs; `~/` means every home the policy protects ($HOME and the passwd
// entry's home, when they differ).
#pragma once

#include <string>
#include <vector>

namespace paddock::sandbox {

// Unreadable: keys, tokens and history files. A missing one inside a writable root is watched
// (removed after the command if it appeared).
const std::vector<std::string>& default_credential_paths();

// Read-only inside every writable root, relative to the root: what runs on the host later
// (git hooks and config, shell rc files, editor and agent config). Lexically, a writable root
// inside any of them (`repo/.vscode`, `repo/.git/hooks`) is refused.
const std::vector<std::string>& mandatory_read_only_names();

// Read-only wherever a writable root contains them, and never a writable root themselves: a
// home's start-up files and the directories the host runs programs from (its PATH, XDG
// config, user units, language start-up hooks). Resolved through symlinks, so a dotfiles
// repository that ~/.bashrc links into is covered where it really is.
const std::vector<std::string>& home_startup_paths();

// Readable, read-only, inside a hidden home (FilesystemPolicy::hide_home): what tools need
// from a home to run at all. `~/` entries once per protected home; absolute ones as they are.
const std::vector<std::string>& home_readable_paths();

}  // namespace paddock::sandbox
