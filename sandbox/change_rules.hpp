// What a change set may not bring into the workspace, and why: the judge change_apply.cpp
// asks about every entry of a set before anything is applied.
//
// The judgement is by effect on the host, not by a list of bad names where a list can be
// avoided: everything inside any git directory (found by what git itself looks for, HEAD
// beside objects and refs, so bare repositories and `.git/modules/*` count) is held back unless
// it is what git's porcelain writes; whatever the host's effective git configuration names (a
// hooks directory, an included file, a program) is held back wherever it lies; in a writable
// home every dot path and every PATH directory is held back, whatever tool it belongs to.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paddock::sandbox {

enum class ChangeKind { file, directory, symlink, whiteout, special };

struct ChangeRules {
  std::vector<std::string> homes;                // canonical: $HOME and the passwd entry's home
  std::vector<std::string> roots;                // the set's writable roots, canonical
  std::vector<std::string> deny_write;           // read-only paths in the sandbox, canonical
  std::vector<std::string> deny_write_patterns;  // the policy's denyWrite globs, absolute
  // What the host's git configuration names, absolute, with the key that names it.
  std::vector<std::pair<std::string, std::string>> git_named;
  // Where the links directly inside a home's start-up directories lead (`~/.config/fish ->
  // ~/dotfiles/fish`, as GNU stow makes them), with the link: the host reads those as its own.
  std::vector<std::pair<std::string, std::string>> startup_links;
  // Each entry's name directly inside a home's start-up directory, with that directory.
  std::multimap<std::string, std::string> startup_children;
  // Non-empty: the above could not be read whole (git's config listing failed, a start-up
  // directory unreadable); the judge then applies nothing.
  std::string failure;
};

// Adds to rules.startup_links the targets of the symlinks directly inside each home's
// start-up directories (default_paths.hpp's home_startup_paths(): ~/.config, ~/.vim, ...).
void add_startup_links(ChangeRules& rules);

// Why a change at `path` reaches a home's start-up file through a link (startup_links.cpp), or
// empty. `replaces_dir`: the change puts a link, a file or a deletion where a directory was.
std::string startup_link_reason(const ChangeRules& rules, const std::string& path,
                                bool replaces_dir);

// Adds to rules.git_named what the effective configuration (system, global, the repository's
// own, their includes) of the repository whose work tree or git dir is `top` names: core.hooksPath,
// include.path and includeIf.*.path, and every path-like word of a key that runs a program
// (core.fsmonitor, filters, diff and merge drivers, editors, pagers, aliases with `!`, ...).
// Runs the host's git (`git config --list --show-origin`), which reads but executes nothing.
// `top` empty: what the homes' global config names (with its includes), for any set.
void add_git_named_paths(ChangeRules& rules, const std::string& top);

// Why the git directory entry `inside` (components below the git dir, never empty) must not
// reach the host, or empty when git's porcelain writes such a thing. `config_text` is the new
// content when `inside` is a new `config` file (inert keys only may pass).
std::string git_dir_hold_reason(const std::vector<std::string_view>& inside, ChangeKind kind,
                                bool host_has_it, const std::string* config_text,
                                bool deletes_dir = false);

// Why an entry at `path` (absolute, under root `root`) must be held back by name, mode or kind
// (everything but the git directory rule and conflicts, which need the tree): empty if none.
std::string hold_reason(const ChangeRules& rules, const std::string& root, const std::string& path,
                        ChangeKind kind, mode_t mode, bool replaces_dir = false);

}  // namespace paddock::sandbox
