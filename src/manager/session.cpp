#include "manager/session.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <exception>
#include <future>
#include <utility>

#include "base/off_loop_work.hpp"
#include "config/call_domains.hpp"
#include "manager/audit_workers.hpp"
#include "manager/filtered_network.hpp"
#include "paddock/config.hpp"
#include "paddock/errors.hpp"
#include "process/init_handshake.hpp"
#include "sandbox/linux/mount_table.hpp"
#include "sandbox/working_directory.hpp"
#include "sandbox/write_guard.hpp"

namespace paddock {

Session::Session(std::shared_ptr<manager::SessionCore> core) : core_(std::move(core)) {}

Session::~Session() {
  try {
    core_->close();
  } catch (const std::exception&) {
  }
}

SessionSummary Session::close() { return core_->close(); }

void Session::async_close(std::function<void(SessionSummary)> done) {
  manager::off_loop_then_post(core_->manager, [core = core_, done = std::move(done)]() mutable {
    return std::function<void()>(
        [done = std::move(done), summary = core->close()] { done(summary); });
  });
}
bool Session::ended() const { return core_->ended(); }
pid_t Session::pid() const { return core_->sandbox.pid; }
const std::string& Session::cwd() const { return core_->cwd; }

}  // namespace paddock

namespace paddock::manager {
namespace {

bool init_gone(int pidfd) {
  struct pollfd p {
    pidfd, POLLIN, 0
  };
  return pidfd < 0 || ::poll(&p, 1, 0) != 0;
}

}  // namespace

void off_loop_then_post(const std::shared_ptr<detail::ManagerState>& manager,
                        std::function<std::function<void()>()> work) {
  // Taken here, on the caller's thread; on a loop thread it is never refused.
  base::OffLoopTicket ticket(manager->off_loop);
  auto job = [manager = manager, work = std::move(work), ticket = std::move(ticket)]() mutable {
    auto then = work();
    work = nullptr;
    if (ticket) asio::post(manager->executor, std::move(then));
    then = nullptr;
    manager.reset();
    ticket.release();  // last: nothing of the context is held any more
  };
  post_audit([shared = std::make_shared<decltype(job)>(std::move(job))] { (*shared)(); });
}

SessionCore::~SessionCore() {
  if (proxy) proxy->close();
}

std::string SessionCore::begin_command() {
  std::lock_guard lock(mutex_);
  if (ended_) return "the session has ended";
  if (busy_) return "the session is running another command (a session runs one at a time)";
  if (init_gone(sandbox.pidfd.get())) {
    return "the session's sandbox is gone (its paddock-init was killed)";
  }
  busy_ = true;
  ++generation_;
  return {};
}

void SessionCore::end_command() {
  {
    std::lock_guard lock(mutex_);
    busy_ = false;
  }
  arm_idle();
}

bool SessionCore::signal(int sig) {
  std::lock_guard lock(mutex_);
  return !ended_ && process::send_init_signal(sandbox.control.get(), sig);
}

void SessionCore::kill_now() {
  std::lock_guard lock(mutex_);
  ended_ = true;
  if (sandbox.pidfd.get() >= 0) {
    ::syscall(SYS_pidfd_send_signal, sandbox.pidfd.get(), SIGKILL, nullptr, 0);
  }
}

bool SessionCore::ended() const {
  std::lock_guard lock(mutex_);
  return ended_ || init_gone(sandbox.pidfd.get());
}

// Idle for idle_timeout with no command begun since: closed on the warm thread.
void SessionCore::arm_idle() {
  std::uint64_t generation;
  {
    std::lock_guard lock(mutex_);
    if (idle_timeout.count() <= 0 || ended_ || busy_) return;
    generation = generation_;
  }
  run_on_warm_thread(
      [weak = weak_from_this(), generation] {
        auto self = weak.lock();
        if (!self) return;
        {
          std::lock_guard lock(self->mutex_);
          if (self->busy_ || self->ended_ || self->generation_ != generation) return;
        }
        self->close();
      },
      std::chrono::steady_clock::now() + idle_timeout);
}

SessionSummary SessionCore::close() {
  std::lock_guard closing(close_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (summary_) return *summary_;
    ended_ = true;
  }
  // Whether every planned mount held until now (a drop is permanent): read before the kill,
  // since the table goes with the namespace. What background processes wrote after it is
  // judged by the apply; the read-only covers outside the layers are compared in full only
  // if one went.
  const bool intact = sandbox::mounts_intact(sandbox.mount_table.get(), sandbox.mount_points);
  // The kill first, outside the apply's lock: a command's apply still copying what a process
  // writes ends with that process.
  sandbox.kill_and_reap();  // the init and, with its PID namespace, everything in the session
  std::lock_guard apply(apply_mutex);
  sandbox::AuditPlan last = audit;
  last.keep_layer = false;
  last.mounts_unverified = last.mounts_unverified || !intact;
  sandbox::AuditReport report;
  try {
    report = sandbox::audit_after_command(last, "(session end)");
  } catch (const std::exception& e) {
    report.failure = std::string("the audit at the session's end failed: ") + e.what();
  }
  final_applied = true;
  SessionSummary summary;
  summary.changes = std::move(report.changes);
  summary.violations = std::move(report.violations);
  summary.failure = std::move(report.failure);
  if (proxy) {
    proxy->close();
    for (auto& v : proxy->take_violations()) summary.violations.push_back(std::move(v));
  }
  // The worktree last: its git runs on what the last apply left (judged, held back).
  if (worktree) finish_worktree(*worktree, summary);
  std::lock_guard lock(mutex_);
  summary_ = summary;
  return summary;
}

std::shared_ptr<SessionCore> open_session_core(std::shared_ptr<detail::ManagerState> manager,
                                               SessionOptions options) {
  {
    std::lock_guard lock(manager->mutex);
    if (manager->closed) throw Error(errc::manager_closed, "the manager is closed");
  }
  const auto context = manager->sandbox_context;
  if (!context || !context->usable()) {
    throw Error(errc::unsupported_platform,
                "a session needs the sandbox, and this Manager runs commands on the host (" +
                    (context ? context->reason() : std::string("sandbox.enabled is false")) + ")");
  }
  validate(options.policy, manager->config);
  const SandboxPolicy base = manager->sandbox_policy();
  auto core = std::make_shared<SessionCore>();
  core->manager = manager;
  core->call = options.policy;
  core->idle_timeout = options.idle_timeout;
  // A worktree session: the worktree made first, undone if the session is not.
  std::optional<MadeWorktree> worktree;
  if (options.worktree) {
    // Its restrictions live in the change set's judge: written through, they would not hold.
    if (!base.filesystem.change_sets) {
      throw Error(errc::config_invalid,
                  "a session on a worktree needs change sets (filesystem.changeSets)");
    }
    if (options.cwd) {
      throw Error(errc::config_invalid, "a session on a worktree runs in it: give no cwd");
    }
    worktree = make_worktree(*options.worktree);
    options.cwd = worktree->path;
  }
  struct UndoWorktree {
    std::optional<MadeWorktree>* made;
    ~UndoWorktree() {
      if (!*made) return;
      (*made)->on_close = WorktreeOptions::OnClose::discard;
      SessionSummary ignored;
      finish_worktree(**made, ignored);
    }
  } undo{&worktree};
  auto dir = sandbox::resolve_working_directory(options.cwd.value_or(""));
  if (auto conflict = sandbox::call_root_conflict(base.filesystem, options.policy.allow_write,
                                                  dir.path, context->home())) {
    throw Error(errc::config_invalid, *conflict);
  }
  core->cwd = dir.path;
  WarmRequest request{dir.path, dir.identity, {}, with_call_policy(base, options.policy), false};
  if (worktree) request.policy.filesystem.git_dir_roots = {worktree->common_dir};
  core->filtered =
      manager->proxy_core != nullptr && request.policy.network.mode == NetworkMode::filtered;
  request.filtered = core->filtered;

  // Made on the warm thread: the sandbox's parent-death signal follows the thread that
  // cloned it, and the caller's may end before the session does.
  std::promise<void> made;
  auto done = made.get_future();
  run_on_warm_thread([&] {
    try {
      core->sandbox = make_waiting_sandbox(*context, request, manager->dev_null, &core->audit);
      made.set_value();
    } catch (...) {
      made.set_exception(std::current_exception());
    }
  });
  done.get();
  core->sandbox.change_set.reset();  // the audit plan holds the same set: the session's now
  if (core->audit.change_set) {
    // The session's from now on: "open" (made "waiting", as every sandbox made ahead is, and
    // a waiting set whose owner is gone is removed: a killed session's writes would go too).
    core->audit.change_set->state = "open";
    core->audit.change_set->command = "(session)";
    core->audit.change_set->session = true;
    core->audit.change_set->applied_known = true;
    sandbox::save_change_set(*core->audit.change_set);
  }
  if (worktree && core->audit.change_set) {
    core->audit.change_set->worktree = sandbox::ChangeSetInfo::Worktree{
        worktree->common_dir, worktree->admin_dir, worktree->branch};
  }
  if (core->filtered) {
    const int listener = receive_listener(core->sandbox.handoff.get());
    if (listener < 0) {
      throw Error(errc::proxy_start_failed,
                  "the session's sandbox did not hand over the proxy "
                  "listener");
    }
    core->proxy_credential = random_credential();
    core->proxy = std::make_shared<proxy::Session>(
        manager->proxy_core, manager->executor,
        "session (pid " + std::to_string(core->sandbox.pid) + ")", core->proxy_credential);
    core->proxy->set_call_rules(configuration::call_domain_rules(options.policy));
    core->proxy->start(listener);
  }
  core->worktree = std::exchange(worktree, std::nullopt);  // the session's to finish now
  core->arm_idle();
  return core;
}

}  // namespace paddock::manager
