// The strand's state machine of one command once it runs: exit, output, stdin, deadline,
// termination, the post-run audit and the completion (exec_operation.hpp draws it). How it
// is launched is exec_launch.cpp.
#include "manager/exec_operation.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <asio/error.hpp>
#include <asio/execution/outstanding_work.hpp>
#include <asio/post.hpp>
#include <asio/prefer.hpp>
#include <asio/write.hpp>
#include <utility>

#include "manager/audit_workers.hpp"
#include "paddock/errors.hpp"
#include "sandbox/post_run_audit.hpp"

namespace paddock::manager {

ExecOperation::ExecOperation(std::shared_ptr<detail::ManagerState> manager, ExecOptions options,
                             detail::ExecHandler handler)
    : manager_(std::move(manager)),
      strand_(asio::make_strand(manager_->executor)),
      options_(std::move(options)),
      handler_(std::move(handler)),
      timer_(strand_) {}

void ExecOperation::supervise() {
  auto self = shared_from_this();
  supervising_ = true;
  // Attached first: the start callbacks may already signal through it.
  if (spawn_error_.empty() && options_.control) {
    // The caller's thread, under a ticket (see exec_decision.cpp's approval answer).
    options_.control->attach(
        [weak = std::weak_ptr<ExecOperation>(self), gate = manager_->off_loop](int sig) {
          base::OffLoopTicket ticket(gate);
          if (!ticket) return;
          auto op = weak.lock();
          if (!op) return;
          asio::post(op->strand_, [op, sig] {
            // Only while it runs: after the leader's exit its pid may be another process's soon.
            if ((op->child_ || op->session_) && op->phase_ != Phase::done &&
                op->phase_ != Phase::draining) {
              op->signal_leader(sig);
            }
          });
        });
  }

  if (spawn_error_.empty() && options_.on_started) options_.on_started(leader_pid());
  if (spawn_error_.empty() && options_.on_start) {
    options_.on_start({leader_pid(),
                       classified_  ? decision_
                       : sandboxed_ ? Decision::sandboxed
                                    : Decision::allow,
                       rule_, reason_, sandboxed_});
  }
  if (child_) child_->async_wait_exit([self] { self->on_leader_exit(); });
  if (init_.active()) {
    // A copy of the report pipe's read end for the wait: take() closes the original whenever
    // it runs, never under this wait (see OutputPipe::close).
    const int fd = ::fcntl(init_.read_end(), F_DUPFD_CLOEXEC, 0);
    if (fd >= 0) watch_init_report(std::make_shared<asio::posix::stream_descriptor>(strand_, fd));
  }
  // Raw `this` in the pipe callbacks: the pipes' pending handlers hold `self` (see OutputPipe).
  auto stream_to = [this](OutputStream which) -> process::OutputPipe::ChunkCallback {
    if (!options_.on_output) return nullptr;
    return [this, which](std::string_view chunk) { options_.on_output(which, chunk); };
  };
  stdout_->start(
      stream_to(OutputStream::stdout_stream), [this] { on_stream_eof(); }, self);
  stderr_->start(
      stream_to(OutputStream::stderr_stream), [this] { on_stream_eof(); }, self);
  if (stdin_) {
    stdin_writing_ = true;
    asio::async_write(*stdin_, asio::buffer(*options_.stdin_data),
                      [self](const std::error_code&, std::size_t) {
                        // EPIPE (the command did not read it all) is the command's business.
                        self->stdin_writing_ = false;
                        std::error_code ignored;
                        self->stdin_->close(ignored);
                      });
  }
  if (phase_ == Phase::running) arm_timer(timeout_, &ExecOperation::on_deadline);
  if (cancel_requested_) terminate(/*by_timeout=*/false);
}

void ExecOperation::signal_leader(int sig) {
  if (session_) {
    session_->signal(sig);
  } else if (child_) {
    child_->signal_tree(sig);
  }
}

pid_t ExecOperation::leader_pid() const { return child_ ? child_->pid() : session_pid_; }

void ExecOperation::release_session() noexcept {
  if (!session_busy_) return;
  session_busy_ = false;
  session_->end_command();
}

void ExecOperation::arm_timer(std::chrono::milliseconds after, void (ExecOperation::*step)()) {
  const auto generation = ++timer_generation_;
  timer_.expires_after(after);
  timer_.async_wait([self = shared_from_this(), generation, step](const std::error_code& ec) {
    if (ec || generation != self->timer_generation_) return;  // re-armed or cancelled
    ((*self).*step)();
  });
}

void ExecOperation::on_deadline() { terminate(/*by_timeout=*/true); }

void ExecOperation::cancel() {
  cancel_requested_ = true;  // seen by supervise() if it has not run yet
  asio::post(strand_, [self = shared_from_this()] { self->terminate(/*by_timeout=*/false); });
}

void ExecOperation::unregister() noexcept {
  std::lock_guard lock(manager_->mutex);
  manager_->in_flight.erase(id_);
}

// Closes the stdin pipe, or leaves it to the write still in flight on it, whose handler
// closes: never a close or cancel under an io_uring operation (see OutputPipe::close). The
// write ends by itself: the command read it all, or its readers are gone (EPIPE).
void ExecOperation::end_stdin() noexcept {
  if (!stdin_ || stdin_writing_) return;
  std::error_code ignored;
  stdin_->close(ignored);
}

void ExecOperation::abandon() noexcept {
  phase_ = Phase::done;
  ++timer_generation_;
  std::error_code ignored;
  timer_.cancel();
  end_stdin();
  if (stdout_) stdout_->close();
  if (stderr_) stderr_->close();
  child_.reset();  // ~PidfdWatch: SIGKILL to the tree, then reap
  if (session_busy_) session_->signal(SIGKILL);
  close_proxy_session();
  // Shutting down must not leave what the command made at a protected path on the host: no
  // loop runs any more, so the audit runs here.
  if (audit_state_ == Audit::pending) {
    audit_state_ = Audit::done;
    if (session_) {
      // As audit_off_loop does: one apply of the session's set at a time, none after its end.
      std::lock_guard apply(session_->apply_mutex);
      if (session_->final_applied) audit_plan_.change_set.reset();
      sandbox::audit_after_command(audit_plan_, program_);
    } else {
      sandbox::audit_after_command(audit_plan_, program_);
    }
  } else if (audit_state_ == Audit::running) {
    std::unique_lock lock(audit_mutex_);
    audit_abandoned_ = true;
    audit_cv_.wait(lock, [this] { return audit_worker_done_; });  // bounded: the audit's limits
  }
  unregister();
}

void ExecOperation::terminate(bool by_timeout) {
  if (awaiting_approval_ && !by_timeout) {
    awaiting_approval_ = false;
    return fail(asio::error::operation_aborted, -1, "cancelled while waiting for approval");
  }
  if (!supervising_ || phase_ != Phase::running) return;
  (by_timeout ? timed_out_ : cancelled_) = true;
  phase_ = Phase::terminating;
  signal_leader(SIGTERM);
  arm_timer(manager_->config.kill_grace, &ExecOperation::on_grace_expired);
}

void ExecOperation::on_session_unresponsive() {
  if (phase_ != Phase::killing || command_ended_) return;
  session_->kill_now();
}

void ExecOperation::on_grace_expired() {
  if (phase_ != Phase::terminating) return;
  phase_ = Phase::killing;
  signal_leader(SIGKILL);
  // A session's command gets its SIGKILL through the init, which a process of the session can
  // keep from reading it (the init held in a vfork by a stopped child): if the command has not
  // ended after another grace, the whole session goes, and the command with it.
  if (session_) arm_timer(manager_->config.kill_grace, &ExecOperation::on_session_unresponsive);
}

// paddock-init reports the command's status only once everything the command started is
// killed and reaped (init_main.cpp), so the command has ended when the report is in: it
// completes then, without waiting for the init's own exit and the kernel's teardown of its
// namespaces (~0.2 ms). The pidfd's exit still comes, and the init is reaped only then.
// Only the init writes this pipe (fd 3, close-on-exec for the command; the init is not
// dumpable), so the command cannot end its supervision early with a forged report.
void ExecOperation::watch_init_report(std::shared_ptr<asio::posix::stream_descriptor> report) {
  auto* watched = report.get();
  watched->async_wait(
      asio::posix::stream_descriptor::wait_read,
      [weak = weak_from_this(), report = std::move(report),
       // A session's command has no exit wait holding the operation: this wait does (it
       // always completes, at the latest when the session's init goes).
       keep = session_ ? shared_from_this() : nullptr](const std::error_code& ec) mutable {
        // The wait always completes: at the latest the init's exit closes the write end.
        auto self = weak.lock();
        if (!self || self->command_ended_ || !self->init_.active()) return;
        switch (self->init_.poll()) {
          case process::InitHandshake::Progress::reported:
            return self->on_leader_exit();
          case process::InitHandshake::Progress::closed:
            // Gone without a report: its exit (the pidfd) ends the command; a session's
            // init (killed, or the session closed) is not ours to wait for.
            if (self->session_) self->on_leader_exit();
            return;
          case process::InitHandshake::Progress::pending:
            if (ec) return;  // the pidfd's exit ends the command
            return self->watch_init_report(std::move(report));
        }
      });
}

void ExecOperation::on_leader_exit() {
  if (command_ended_) {
    // The init's exit after its report. Its zombie goes once the caller has the result (until
    // then the pid, a process-group id the caller may still signal, names nobody else);
    // before that, complete() and fail() reap it just ahead of the handler.
    if (delivered_ && child_ && child_->exited()) child_->reap();
    return;
  }
  command_ended_ = true;
  if (child_ && !child_->exited()) child_->exit_only_reaps();  // ended on the init's report
  if (phase_ == Phase::done) return;
  phase_ = Phase::draining;
  take_init_report();
  // The command's lifetime is its leader's (as in a PID namespace, where init's exit kills
  // the rest): whatever it left running in its group goes now. Not in a session, where what
  // a command starts in the background is meant to outlive it.
  if (child_) child_->signal_tree(SIGKILL);
  if (stdout_->done() && stderr_->done()) {
    maybe_finish();
  } else {
    arm_timer(manager_->config.exit_drain, &ExecOperation::on_drain_expired);
  }
}

void ExecOperation::on_drain_expired() {
  // Someone outside the group (setsid) still holds a write end: stop waiting for it.
  stdout_->close();
  stderr_->close();
  maybe_finish();
}

void ExecOperation::on_stream_eof() { maybe_finish(); }

void ExecOperation::maybe_finish() {
  if (phase_ != Phase::draining || !stdout_->done() || !stderr_->done()) return;
  if (audit_state_ == Audit::pending) return start_audit();
  if (audit_state_ == Audit::running) return;
  if (!spawn_error_.empty()) {
    fail(spawn_error_code_, spawn_error_exit_, spawn_error_);
    return;
  }
  if (cancelled_) return complete(asio::error::operation_aborted);
  if (timed_out_) return complete(errc::timeout);
  complete({});
}

void ExecOperation::start_audit() {
  // The command has ended: the leader exited (and the kernel killed and reaped its PID
  // namespace), or paddock-init reported, which it does only after killing and reaping every
  // other process in the namespace (init_main.cpp): nothing of this command can race the audit.
  // Other sandboxes on the same workspace can; the audit only renames, through O_NOFOLLOW fds, so
  // they can make it report more, never follow a link.
  ++timer_generation_;  // the drain timer must not close the pipes under us meanwhile
  timer_.cancel();
  audit_state_ = Audit::running;
  // File system walks and renames (bounded: kGitScanEntryLimit, kGitAuditTimeLimit) block:
  // never on the loop's threads, where they would stall every other command.
  // The loop counts the audit as its work (run() does not return while it runs or holds the
  // operation); the context's shutdown waits for its ticket (taken here, on the loop: never
  // refused, no shutdown runs while a loop thread does).
  auto job = [self = shared_from_this(),
              work = asio::prefer(manager_->executor, asio::execution::outstanding_work.tracked),
              ticket = base::OffLoopTicket(manager_->off_loop)]() mutable {
    self->audit_off_loop();
    // The caller may have its result already: this can be the last reference, and destroying
    // the operation touches its context (strand, timer). So the operation goes first, then the
    // loop's work (run() may return now), then the ticket (the context may shut down now).
    self.reset();
    work = asio::any_io_executor();
    ticket.release();
  };
  // Shared: a std::function is copyable, the ticket is not (the body empties it anyway).
  post_audit([shared = std::make_shared<decltype(job)>(std::move(job))] { (*shared)(); });
}

void ExecOperation::audit_off_loop() {
  sandbox::AuditReport report;
  const auto set = audit_plan_.change_set;  // its lock goes once it is applied or left
  if (audit_plan_.change_set && options_.control && options_.control->changes_left()) {
    // The client this ran for is gone (its connection dropped): as a paddock killed while its
    // command ran, nothing is applied; the set waits, abandoned (no owner), for `paddock
    // changes`.
    try {
      audit_plan_.change_set->pid = 0;
      audit_plan_.change_set->note = "its client went away before the command ended";
      sandbox::save_change_set(*audit_plan_.change_set);
    } catch (const std::exception&) {
      // Still "running" under the client's name; abandoned as soon as it is gone.
    }
    audit_plan_.change_set.reset();
  } else if (audit_plan_.change_set && options_.changes_owner) {
    // Applied by this process, under its own name: "applying" while it lives, whatever became
    // of the client (its pid names another process once reused).
    sandbox::set_change_set_owner(*audit_plan_.change_set, static_cast<int>(::getpid()),
                                  sandbox::process_start_time(static_cast<int>(::getpid())));
  }
  try {
    if (session_) {
      // One apply of the session's set at a time; none after the session's end applied it.
      std::lock_guard apply(session_->apply_mutex);
      if (session_->final_applied) audit_plan_.change_set.reset();
      report = sandbox::audit_after_command(audit_plan_, program_);
    } else {
      report = sandbox::audit_after_command(audit_plan_, program_);
    }
  } catch (const std::exception& e) {
    report.failure = std::string("the post-run audit failed: ") + e.what() +
                     "; the host must not run git or a shell in the workspace until it is "
                     "checked";
  }
  // `paddock changes` may have it now (a session's set stays the session's: its lock too).
  if (set && set->lock && !session_) set->lock->reset();
  std::lock_guard lock(audit_mutex_);
  audit_worker_done_ = true;
  audit_cv_.notify_all();
  if (audit_abandoned_) return;
  asio::post(strand_, [self = shared_from_this(), report = std::move(report)]() mutable {
    self->audit_report_ = std::move(report);
    self->audit_state_ = Audit::done;
    self->maybe_finish();
  });
}

void ExecOperation::fail(std::error_code ec, int exit_code, std::string message) {
  phase_ = Phase::done;
  given_fds_.clear();
  if (options_.control) options_.control->detach();  // signal() says false from now on
  ++timer_generation_;
  timer_.cancel();
  ExecResult r;
  r.exit_code = exit_code;
  r.error = std::move(message);
  r.decision = classified_ ? decision_ : Decision::allow;
  r.rule = rule_;
  r.reason = reason_;
  r.duration = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started_at_);
  if (child_) r.pid = child_->pid();
  close_proxy_session();
  release_session();
  unregister();
  // Never complete inside the initiating call (Asio's rule): always through the strand. The
  // zombie is released only there, just before the caller hears of it: until then its pid (a
  // process-group id a caller may signal) cannot be reused.
  asio::post(strand_, [self = shared_from_this(), ec, r = std::move(r)]() mutable {
    if (self->child_) self->child_->reap();
    auto handler = std::move(self->handler_);
    self->delivered_ = true;
    handler(ec, std::move(r));
  });
}

void ExecOperation::complete(std::error_code ec) {
  if (proxy_session_ && !proxy_closed_) {
    // The command is gone; its proxy listener is closed before the caller hears of it, so a
    // completed command holds no descriptor of ours.
    proxy_closed_ = true;
    phase_ = Phase::done;  // nothing else may complete us meanwhile
    ++timer_generation_;
    proxy_session_->close([self = shared_from_this(), ec] {
      asio::post(self->strand_, [self, ec] { self->complete(ec); });
    });
    return;
  }
  phase_ = Phase::done;
  if (options_.control) options_.control->detach();  // signal() says false from now on
  ++timer_generation_;
  timer_.cancel();
  end_stdin();
  if (child_) child_->reap();

  ExecResult r;
  // A session's command whose init went without a report: killed with the session.
  static const process::ExitStatus kKilled{128 + SIGKILL, SIGKILL};
  const process::ExitStatus& status = command_status_ ? *command_status_
                                      : child_        ? child_->status()
                                                      : kKilled;
  r.exit_code = status.exit_code;
  r.signal = status.signal;
  r.timed_out = timed_out_;
  r.stdout_data = stdout_->take();
  r.stderr_data = stderr_->take();
  r.truncated = stdout_->truncated() || stderr_->truncated();
  r.stdout_bytes_total = stdout_->total_bytes();
  r.stderr_bytes_total = stderr_->total_bytes();
  r.duration = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started_at_);
  r.sandboxed = sandboxed_;
  r.decision = classified_ ? decision_ : sandboxed_ ? Decision::sandboxed : Decision::allow;
  r.rule = rule_;
  r.reason = reason_;
  r.pid = leader_pid();
  if (!sandboxed_) r.unsandboxed_reason = unsandboxed_reason_;
  // What the audit found (start_audit) and quarantined, each entry with where it went.
  r.violations = std::move(audit_report_.violations);
  r.changes = std::move(audit_report_.changes);
  r.discarded = discarded_;
  // Every denied request of the command (the proxy recorded each before answering it; the
  // session is closed by now, see the top of this function).
  if (proxy_session_) {
    for (auto& v : proxy_session_->take_violations()) r.violations.push_back(std::move(v));
  }
  if (session_ && session_->proxy) {
    // The session's proxy, shared by its commands: what it denied since the last command.
    for (auto& v : session_->proxy->take_violations()) r.violations.push_back(std::move(v));
  }
  if (session_ && !command_status_ && command_error_.empty() && !timed_out_ && !cancelled_) {
    ec = errc::spawn_failed;
    r.error = "the session ended while the command ran (its sandbox was killed)";
  }
  if (!command_error_.empty() && !timed_out_ && !cancelled_) {
    ec = errc::spawn_failed;
    r.error = command_error_;
  }
  if (timed_out_) r.error = "timed out after " + std::to_string(timeout_.count()) + " ms";
  if (!audit_report_.failure.empty()) {
    // The host keeps something live the command created where it executes later: not a
    // normal result, whatever the command's own status.
    ec = errc::sandbox_violation;
    r.error = audit_report_.failure;
  }
  if (r.exit_code == -1) {
    r.error =
        "exit status lost: another part of this process reaped the command (SIGCHLD "
        "set to SIG_IGN, or waitpid(-1))";
  }
  release_session();
  unregister();
  // The next command with this plan finds a sandbox waiting (exec_launch.cpp): made on the
  // warm thread once the caller has this result, in the pause before its next command. Not
  // before: its plan and its ~60 mount steps (~1.6 ms of CPU) took a core from the result's
  // way out (`paddock run` through the helper: ~6% of its time, 2 cores).
  auto next = std::move(make_next_);
  auto warm = manager_->warm;
  auto handler = std::move(handler_);
  delivered_ = true;
  handler(ec, std::move(r));
  if (next && warm->claim(next->first)) warm->make_ahead(std::move(next->second));
}

}  // namespace paddock::manager
