// The glob syntax of policy paths (srt's): which components are patterns, their escapes,
// and what a pattern covers. Pure string work, no file system: the classifier uses it too.
#pragma once

#include <string>
#include <string_view>

namespace paddock::sandbox::paths {

// Glob characters are `*`, `?` and `[`; a backslash before one of them (or before a
// backslash) makes it a plain character: `app/\[id\]` names the directory `[id]` only (how
// srt's `{"path": ..., "literal": true}` entries are carried). Any other backslash is itself.
bool is_glob(std::string_view component);
// `text` with those escaping backslashes removed: the name it spells.
std::string unescape_glob(std::string_view text);
// Every glob character and backslash of a literal name escaped (unescape_glob's inverse).
std::string escape_glob(std::string_view name);
// A component as fnmatch(3) reads it with the same escapes: a backslash before anything else
// is doubled, so it stays a plain backslash there too.
std::string fnmatch_pattern(std::string_view component);

// Whether `path` (absolute, canonical) is, or lies below, a path the absolute pattern
// `pattern` names: its components matched as GlobWalk matches them, `**` standing for any
// number of components (none included). What a denyWrite glob covers among paths that did not
// exist when it was expanded (the change set's judge).
bool glob_covers(std::string_view pattern, std::string_view path);
// Whether something strictly below `path` could be matched by `pattern`: the path is on the
// way to a match (`/w/conf` for `/w/conf/*.key`; any directory below `/w/a` for `/w/a/**/x`).
// Replacing such a directory (a link, a file) would move what the pattern protects.
bool glob_passes_through(std::string_view pattern, std::string_view path);

}  // namespace paddock::sandbox::paths
