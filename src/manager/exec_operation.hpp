// One command from spawn to completion: the state machine that ties a child's pidfd, its
// output pipes, its stdin and its deadline together on one strand.
//
//   running ──timeout/cancel──> terminating (SIGTERM) ──grace──> killing (SIGKILL)
//      │                                                             │
//      └──── the command ends (any phase) ──> draining <─────────────┘
//   The command ends when the leader exits or, sandboxed, when paddock-init reports its status
//   (sent only once everything in the sandbox but the init is killed and reaped; the init's
//   own exit, reaped later, is then off the critical path).
//   draining: the leader's process group is SIGKILLed; we read what is still in the pipes
//   until EOF on both or Config::exit_drain, then complete.
#pragma once

#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/unique_fd.hpp"
#include "manager/launch_steps.hpp"
#include "manager/manager_state.hpp"
#include "manager/session.hpp"
#include "manager/warm_sandboxes.hpp"
#include "paddock/command.hpp"
#include "paddock/errors.hpp"
#include "paddock/manager.hpp"
#include "process/init_handshake.hpp"
#include "process/output_pipe.hpp"
#include "process/pidfd_watch.hpp"
#include "process/spawn.hpp"
#include "proxy/session.hpp"
#include "sandbox/post_run_audit.hpp"

namespace paddock::manager {

class ExecOperation : public std::enable_shared_from_this<ExecOperation> {
 public:
  ExecOperation(std::shared_ptr<detail::ManagerState> manager, ExecOptions options,
                detail::ExecHandler handler);

  // Prepares and spawns on the calling thread, then supervises on a strand of the manager's
  // executor. Completes the handler exactly once, never from inside this call.
  void start(Command command);

  // Thread-safe, any time (before, during or after start): ends the command like a timeout
  // does, completing with operation_aborted.
  void cancel();

  // Only while no loop thread runs (the io_context is being destroyed): kills and reaps the
  // child now and closes every fd, breaking the references that would keep it alive.
  void abandon() noexcept;

 private:
  using clock = std::chrono::steady_clock;
  enum class Phase { running, terminating, killing, draining, done };

  // Deciding before running (exec_decision.cpp): the classification, and for an escalated
  // command the approval, on the strand, with a deadline.
  bool decide(Command& command);
  std::optional<std::string> path_guard_refusal(const Command& command) const;
  // `key`: what approve_session remembers; `shown`: the command as the one asked sees it.
  void ask_approval(Command command, std::string key, std::string shown,
                    CommandApprovalCallback ask);
  void on_approval(Approval answer);
  void on_approval_timeout();
  void launch_or_fail(Command command);
  // The launch, in steps (exec_launch.cpp); Launch is what they hand each other.
  struct Launch;
  void launch(Command command);
  void resolve_call(Launch& l);
  void attach_proxy(Launch& l, std::vector<std::string>& env);
  void plan_sandbox(Launch& l, process::SpawnPlan& plan);
  void attach_sandbox_plan(Launch& l, process::SpawnPlan& plan);
  void take_plan_parts(Launch& l);
  process::SpawnResult start_child(Launch& l, process::SpawnPlan& plan,
                                   const process::ChildStdio& stdio);
  void adopt_warm_change_set(sandbox::ChangeSetInfo& set, const sandbox::ChangeSetInfo* planned);
  void take_child(Launch& l, const process::SpawnPlan& plan, const process::SpawnResult& spawned,
                  CommandStreams& streams);
  void register_in_flight();
  // Filtered network: the listener the child handed over becomes this command's proxy
  // session; if it did not arrive, spawn_error_ says so and the command is killed.
  void start_proxy_session(int handoff_fd);
  void close_proxy_session();
  process::SpawnResult spawn_sandbox_or_host(process::SpawnPlan& plan,
                                             const process::ChildStdio& stdio, bool sandboxing);
  process::SpawnResult start_warm(WarmSandbox& warm, const process::SpawnPlan& plan,
                                  const process::ChildStdio& stdio, UniqueFd& handoff_read);
  // ExecOptions::changes_owner: the set is that process's while the command runs.
  void own_change_set(sandbox::ChangeSetInfo& set);
  // A session's command (session.hpp): checked against the session, then handed to its init.
  bool adopt_session();
  process::SpawnResult start_in_session(const process::SpawnPlan& plan,
                                        const process::ChildStdio& stdio);
  // The command's leader: its own (signalled as a tree), or in a session, the command the
  // session's init runs (signalled through the init).
  void signal_leader(int sig);
  pid_t leader_pid() const;
  void release_session() noexcept;  // the session may take its next command
  void supervise();
  // Sandboxed: paddock-init's report ends the command before the init's own exit does.
  void watch_init_report(std::shared_ptr<asio::posix::stream_descriptor> report);
  void on_leader_exit();
  void take_init_report();
  void on_stream_eof();
  void terminate(bool by_timeout);
  void arm_timer(std::chrono::milliseconds after, void (ExecOperation::*step)());
  void on_grace_expired();
  void on_session_unresponsive();
  void on_drain_expired();
  void on_deadline();
  void maybe_finish();
  // Sandboxed: the post-run audit (sandbox/post_run_audit.hpp) on a worker thread, then
  // maybe_finish() again on the strand.
  void start_audit();
  void audit_off_loop();       // on the worker: the audit, its report posted back unless abandoned
  void unregister() noexcept;  // off the manager's in-flight list
  void end_stdin() noexcept;
  void fail(std::error_code ec, int exit_code, std::string message);
  void complete(std::error_code ec);

  std::shared_ptr<detail::ManagerState> manager_;
  asio::strand<asio::any_io_executor> strand_;
  ExecOptions options_;
  detail::ExecHandler handler_;
  std::uint64_t id_ = 0;

  std::chrono::milliseconds timeout_{0};
  std::size_t max_output_ = 0;
  clock::time_point started_at_;

  std::optional<process::PidfdWatch> child_;
  // Sandboxed: the leader is paddock-init, which reports the command's own status here.
  process::InitHandshake init_;
  std::optional<process::ExitStatus> command_status_;
  bool command_ended_ = false;  // on_leader_exit() ran (on the init's report or its exit)
  // The plan's fingerprint and inputs when a sandbox like this one may be made ahead.
  std::optional<std::pair<std::string, WarmRequest>> make_next_;
  bool delivered_ = false;     // the handler has the result
  std::string command_error_;  // the init could not exec the command: why
  std::optional<process::OutputPipe> stdout_, stderr_;
  std::optional<asio::posix::stream_descriptor> stdin_;
  asio::steady_timer timer_;
  std::uint64_t timer_generation_ = 0;

  // The classifier's verdict (Config::commands.classify), reported in the result.
  bool classified_ = false;
  Decision decision_ = Decision::sandboxed;
  std::string rule_;
  std::string reason_;
  bool awaiting_approval_ = false;  // strand-only after start()
  std::chrono::milliseconds approval_timeout_{0};
  std::optional<Command> pending_command_;
  std::string approval_key_;

  std::atomic<bool> cancel_requested_{false};
  bool stdin_writing_ = false;  // strand-only: the stdin write is in flight
  bool supervising_ = false;    // strand-only: launch() is done, child_ & co. are ours to read
  Phase phase_ = Phase::running;
  bool timed_out_ = false;
  bool cancelled_ = false;
  std::string spawn_error_;  // the child failed before execve: why
  int spawn_error_exit_ = 0;
  errc spawn_error_code_ = errc::spawn_failed;
  // Copies of the caller's stdin/stdout/stderr descriptors, taken in start().
  std::vector<UniqueFd> given_fds_;
  // The Manager's sandbox policy when this call started (update_config may change it later).
  SandboxPolicy policy_;
  bool sandboxed_ = false;
  std::string unsandboxed_reason_;  // warn fallback: why this command ran on the host
  // What the post-run audit checks (protected paths missing at start, git state) and its
  // outcome; none when the command did not run sandboxed.
  enum class Audit { none, pending, running, done } audit_state_ = Audit::none;
  sandbox::AuditPlan audit_plan_;
  DiscardedWrites discarded_;  // what paddock-init counted in the private /tmp (take_init_report)
  sandbox::AuditReport audit_report_;
  // The worker posts the audit's result back under this lock unless abandon() came first,
  // which waits for a running audit: after abandon() nothing is posted to a dying context.
  std::mutex audit_mutex_;
  std::condition_variable audit_cv_;
  bool audit_abandoned_ = false;
  bool audit_worker_done_ = false;
  std::string program_;
  // ExecOptions::session's: the command runs in the session's sandbox, whose init reports on
  // this command's own pipe (init_); child_ stays empty (the init is the session's).
  std::shared_ptr<SessionCore> session_;
  bool session_busy_ = false;  // begin_command() said yes: end_command() is ours to call
  pid_t session_pid_ = -1;
  // A reused network namespace, returned to the pool when this operation is destroyed (its
  // PID namespace, and every process and socket in it, is gone by then).
  sandbox::NetnsLease netns_lease_;
  // Filtered network: this command's proxy (its listener is in the command's namespace) and
  // the credential in the proxy URL the command was given.
  std::shared_ptr<proxy::Session> proxy_session_;
  std::string proxy_credential_;
  bool proxy_closed_ = false;  // complete() waits for the listener to be closed once
};

// The classification of a command as Manager::check and async_exec see it.
Classification classify_command(const Command& command, const CommandRules& rules,
                                const ClassifyContext& context);

}  // namespace paddock::manager
