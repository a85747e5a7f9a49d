// A session's worktree (SessionOptions::worktree): made before its sandbox, finished after
// its last apply, by the host's git outside any sandbox. Internal to manager/.
#pragma once

#include <string>

#include "paddock/session.hpp"

namespace paddock::manager {

struct MadeWorktree {
  std::string path;        // the new worktree (the session's cwd), canonical
  std::string common_dir;  // the repository's common git directory, canonical
  std::string admin_dir;   // the worktree's own git directory (<common_dir>/worktrees/<name>)
  std::string top;         // the repository's main work tree (or its git dir, when bare)
  std::string branch;
  WorktreeOptions::OnClose on_close = WorktreeOptions::OnClose::keep;
};

// Checks the request and runs `git worktree add -b`. Throws config_invalid saying why not
// (not a repository, a bad or existing branch, the path taken, git's own refusal).
MadeWorktree make_worktree(const WorktreeOptions& options);

// After the session's last apply: on_close done; the summary's branch, branch_head and
// worktree ("kept", "removed", "discarded", or why not) filled in.
void finish_worktree(const MadeWorktree& made, SessionSummary& summary);

}  // namespace paddock::manager
