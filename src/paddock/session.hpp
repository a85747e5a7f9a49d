// Sessions: one sandbox that lives across the commands of one agent (docs/build-once.md, 3).
//
// Agents work in sequences: start a server in the background, query it in the next command,
// leave notes in /tmp. A session keeps its processes, its loopback, its private /tmp and its
// working state between commands, and a command in it costs about a plain spawn: the sandbox
// is set up once, when the session opens, and each command is handed to its paddock-init.
//
//   auto session = manager.open_session({.cwd = "/work/repo"});
//   ExecOptions o;
//   o.session = session;
//   manager.async_exec(Command::shell_string("python3 -m http.server 8000 &"), o, token);
//   manager.async_exec(Command::shell_string("curl -s localhost:8000"), o, token);
//   SessionSummary last = session->close();
//
// Every command is still decided before it runs (classifier, path guard, approval) under the
// session's policy, and its writes to the workspace still wait in the session's change set:
// applied, judged, when each command ends (ExecResult::changes), by copying (its layers stay
// mounted). What background processes write later is applied at the next command's end and
// at the session's end (SessionSummary). A command ends when its own process exits; what it
// started in the background runs on (until the session ends), and the command's result does
// not wait for output a background process still holds (Config::exit_drain).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "paddock/command.hpp"
#include "paddock/exec_result.hpp"

namespace paddock {

namespace manager {
struct SessionCore;
}

// A session on a fresh linked worktree of a repository, on a new branch (docs/build-once.md,
// 4). paddock, not the agent, runs `git worktree add -b` and, at the end, `git worktree
// remove` and `git branch -D`, on the host, outside any sandbox, with hooks and fsmonitor
// off. The session's cwd is the worktree; its commits reach the branch through the common git
// directory, writable to the session as a judged root of its own (config, hooks, replace refs
// and indexes held back, as in any repository). The agent only commits.
struct WorktreeOptions {
  std::string repository;     // the repository's top directory (or its git directory)
  std::string branch;         // made by paddock; must not exist yet
  std::string base = "HEAD";  // what the branch starts at
  std::string path;           // where the worktree goes (must not exist); empty: beside the
                              // repository's top, `<top>.worktrees/<branch, '/' as '-'>`
  // At the session's end: keep the worktree and the branch; remove the worktree and keep the
  // branch (hand it back; a worktree with uncommitted changes is kept, and said); or discard
  // both (uncommitted work and the branch's commits go).
  enum class OnClose { keep, remove, discard } on_close = OnClose::keep;
  // Non-empty (a daemon's --root directories, canonical): the repository's git directory must
  // lie in one of them.
  std::vector<std::string> within;
};

struct SessionOptions {
  std::optional<std::string> cwd;           // default: the supervisor's; every command runs there
  std::optional<WorktreeOptions> worktree;  // instead of cwd: a fresh worktree (above)
  CallPolicy policy;                        // on top of the Manager's, fixed for the session's life
  // Ends the session once no command has run for this long (zero: only close() ends it).
  std::chrono::milliseconds idle_timeout{0};
};

// What the session's end found: the last writes applied, and what the last audit saw.
struct SessionSummary {
  ChangeSummary changes;
  std::vector<Violation> violations;
  std::string failure;  // the host must not run git or a shell in the workspace until checked
  // A worktree session: its branch, the commit it ended at, and what became of it ("kept",
  // "removed", "discarded", or why not).
  std::string branch;
  std::string branch_head;
  std::string worktree;
};

class Session {
 public:
  explicit Session(std::shared_ptr<manager::SessionCore> core);
  ~Session();  // close(), if not closed yet
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Ends the session: everything in it is killed, then what it wrote since the last command
  // ended is judged and applied. A command still running ends as killed. Blocking (a kill, a
  // reap, an apply): not on an event loop's thread. Idempotent: later calls return the first
  // call's summary.
  SessionSummary close();
  // The same off the caller's thread (on a worker); `done` runs on the Manager's executor.
  // Nothing runs if that executor's context is shut down first (the session is closed all
  // the same).
  void async_close(std::function<void(SessionSummary)> done);
  // Ended: closed, timed out idle, or its sandbox died (then commands fail with spawn_failed).
  bool ended() const;
  // The session's paddock-init (PID 1 of its namespaces), in the caller's PID namespace.
  pid_t pid() const;
  const std::string& cwd() const;

  std::shared_ptr<manager::SessionCore> core() const noexcept { return core_; }

 private:
  std::shared_ptr<manager::SessionCore> core_;
};

}  // namespace paddock
