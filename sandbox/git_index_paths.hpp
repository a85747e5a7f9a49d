// The paths a git index names, checked as git's own verify_path would check them before it
// writes a file there. git 2.39 does not check an index it reads: an index the command wrote
// with an entry `../home/.bashrc` or `.git/hooks/pre-commit` has the host's `git restore .`
// or `git checkout -- .` write that file (the third hostile review). The change set's judge
// reads every new or changed index whole and holds it back when one entry is such a path.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace paddock::sandbox {

// "" when every entry's path is one git may write inside a work tree; else why not (the
// first bad path, or "unreadable" when the file is no index of version 2, 3 or 4). `oid`:
// the repository's object name length, 20 (SHA-1) or 32 (SHA-256), as its config says
// (repository_object_format): read with the other, an index can be made to look harmless.
// A shared index (`sharedindex.*`, split index) is checked the same way.
std::string index_path_problem(std::string_view index, std::size_t oid);

// What an index says, without when its files were last looked at: every entry's mode, object
// name, flags and path, the stat data left out (nullopt: no such index, a problem above, or a
// split index). Two indexes with the same key differ only by a refresh (`git status`).
std::optional<std::string> index_content_key(std::string_view index, std::size_t oid);

}  // namespace paddock::sandbox
