// The supervisor's half of a session (paddock/session.hpp; the init's half is
// process/init_session.cpp): the sandbox made once with a waiting paddock-init, its proxy
// session, its change set, and the one-command-at-a-time rule. The commands themselves are
// ExecOperations (exec_launch.cpp hands each to the init instead of spawning).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "manager/manager_state.hpp"
#include "manager/session_worktree.hpp"
#include "manager/warm_sandboxes.hpp"
#include "paddock/session.hpp"
#include "proxy/session.hpp"
#include "sandbox/post_run_audit.hpp"

namespace paddock::manager {

struct SessionCore : std::enable_shared_from_this<SessionCore> {
  ~SessionCore();

  std::shared_ptr<detail::ManagerState> manager;
  std::string cwd;
  CallPolicy call;      // the session's additions to the Manager's policy
  WarmSandbox sandbox;  // its init, control socket, network namespace, mount table, layers
  // The session plan's audit: every command's audit starts from it (and applies the set by
  // copying, keep_layer), the session's end from it too (applying by moving).
  sandbox::AuditPlan audit;
  bool filtered = false;
  std::string proxy_credential;  // in every command's proxy URL
  std::shared_ptr<proxy::Session> proxy;
  std::chrono::milliseconds idle_timeout{0};
  std::optional<MadeWorktree> worktree;  // a worktree session's: finished at close()

  // A command may start: empty, and the session is busy until end_command(); else why not.
  std::string begin_command();
  void end_command();
  // A signal for the running command's process group (through the init: never the init).
  bool signal(int sig);
  // Kills the session's init now (and with it everything in the session): for a command that
  // does not end when its SIGKILL is passed on (the init cannot be reached). Never waits.
  void kill_now();
  SessionSummary close();
  bool ended() const;

  // One apply of the change set at a time: a command's audit, or the session's end (after
  // which no command's audit touches the set: `final_applied`).
  std::mutex apply_mutex;
  bool final_applied = false;  // under apply_mutex

  // Closes the session once it has been idle for idle_timeout (on the warm thread).
  void arm_idle();

 private:
  std::mutex close_mutex_;  // one close at a time; a second waits for the first's summary
  mutable std::mutex mutex_;
  bool busy_ = false;
  bool ended_ = false;
  std::uint64_t generation_ = 0;  // commands begun: an idle check armed before one is stale
  std::optional<SessionSummary> summary_;
};

// Runs `work` on an audit worker, then what it returns on the Manager's executor (unless that
// executor's context is shutting down: see base/off_loop_work.hpp).
void off_loop_then_post(const std::shared_ptr<detail::ManagerState>& manager,
                        std::function<std::function<void()>()> work);

// Makes the session's sandbox (on the warm thread, which outlives it) and its proxy session.
// Throws Error saying why it cannot.
std::shared_ptr<SessionCore> open_session_core(std::shared_ptr<detail::ManagerState> manager,
                                               SessionOptions options);

}  // namespace paddock::manager
