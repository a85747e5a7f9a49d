// Launching one command, in steps (launch() lists them): the caller's options checked and
// resolved (launch_steps.hpp), the call's policy and working directory, the proxy attached,
// the sandbox planned (or a sandbox made ahead, or the session's, taken), the child started
// (with the fallback policy), and what supervise() then watches. The strand's state machine
// that supervises it afterwards is exec_operation.cpp.
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <asio/error.hpp>
#include <asio/post.hpp>
#include <asio/write.hpp>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include "base/unique_fd.hpp"
#include "config/call_domains.hpp"
#include "config/environment.hpp"
#include "manager/exec_operation.hpp"
#include "manager/filtered_network.hpp"
#include "manager/launch_steps.hpp"
#include "manager/setup_failure.hpp"
#include "paddock/errors.hpp"
#include "process/init_image.hpp"
#include "process/program_lookup.hpp"
#include "process/spawn.hpp"
#include "sandbox/linux/mount_table.hpp"
#include "sandbox/post_run_audit.hpp"
#include "sandbox/working_directory.hpp"
#include "sandbox/write_guard.hpp"

namespace paddock::manager {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// What a failure of the child before execve means for the caller's exit status.
int exit_status_for_exec_errno(int err) {
  if (err == ENOENT || err == ENOTDIR) return 127;
  if (err == EACCES || err == ENOEXEC || err == EPERM || err == EISDIR) return 126;
  return 125;
}

}  // namespace

void ExecOperation::start(Command command) {
  // The caller's descriptors are ours from here (ExecOptions: the caller may close theirs once
  // the call is initiated), also when the launch waits for an approval.
  for (int* fd : {&options_.stdin_fd, &options_.stdout_fd, &options_.stderr_fd}) {
    if (*fd < 0) continue;
    const int copy = ::fcntl(*fd, F_DUPFD_CLOEXEC, 3);
    if (copy < 0) continue;  // not open: classify_given_fd says so at the launch
    given_fds_.emplace_back(copy);
    *fd = copy;
  }
  bool closed;
  {
    std::lock_guard lock(manager_->mutex);
    closed = manager_->closed;
  }
  if (closed) return fail(errc::manager_closed, -1, "the manager is closed");
  started_at_ = clock::now();
  try {
    if (options_.session && !adopt_session()) return;
    validate(options_.policy, manager_->config);
    // One snapshot for the whole command: the path guard, the plan and the call's checks see
    // the same policy even if update_config lands while it waits for approval.
    policy_ = manager_->sandbox_policy();
    if (options_.policy.touches_sandbox() && manager_->sandbox_context &&
        !manager_->sandbox_context->usable()) {
      return fail(errc::config_invalid, -1,
                  "policy: this Manager runs commands on the host here (fallback warn: " +
                      manager_->sandbox_context->reason() +
                      "), so a call's filesystem or network policy could not apply");
    }
    if (!decide(command)) return;  // refused, or waiting for approval
  } catch (const Error& e) {       // the path guard's cwd or policy did not resolve
    return fail(e.code(), -1, e.what());
  } catch (const std::exception& e) {
    return fail(errc::spawn_failed, -1, std::string("classifying the command failed: ") + e.what());
  }
  launch_or_fail(std::move(command));
}

void ExecOperation::launch_or_fail(Command command) {
  {
    std::lock_guard lock(manager_->mutex);
    if (manager_->closed) return fail(errc::manager_closed, -1, "the manager is closed");
  }
  try {
    launch(std::move(command));
  } catch (const Error& e) {
    fail(e.code(), -1, e.what());
  } catch (const std::exception& e) {
    fail(errc::spawn_failed, -1, std::string("preparing the command failed: ") + e.what());
  }
}

// What the steps of one launch hand each other.
struct ExecOperation::Launch {
  const sandbox::SandboxContext* sandbox = nullptr;  // the Manager's, if it sandboxes at all
  bool sandboxing = false;                           // this command runs sandboxed
  std::string cwd;
  sandbox::PathIdentity cwd_identity;  // sandboxed: the directory the child enters again
  // This call's policy: the Manager's as it was when the call started (policy_) with
  // ExecOptions::policy on top (validated in start()).
  SandboxPolicy call_policy;
  bool filtered = false;  // the command's network goes through our proxy
  // Filtered: [read] ours, [write] the child's: the proxy's listener comes over it.
  UniqueFd handoff_read, handoff_write;
  std::unique_ptr<sandbox::SandboxPlan> sandbox_plan;
  std::optional<WarmSandbox> warm;  // a sandbox made ahead that takes this command
  std::string warm_fingerprint;     // set when this Manager makes sandboxes ahead
  UniqueFd mount_points;            // for paddock-init (init_report.hpp); the child has its copy
  int namespace_flags = 0;          // of the child that was started
};

// The steps in order; each throws Error for what stops the command (launch_or_fail reports it).
void ExecOperation::launch(Command command) {
  const Config& cfg = manager_->config;
  started_at_ = clock::now();
  const CommandLimits limits = command_limits(options_, cfg);
  timeout_ = limits.timeout;
  max_output_ = limits.max_output;
  std::vector<std::string> argv = command_argv(command, options_, cfg);

  Launch l;
  l.sandbox = manager_->sandbox_context.get();
  l.sandboxing = l.sandbox != nullptr && l.sandbox->usable();
  std::vector<std::string> env = command_environment(options_, cfg, l.sandboxing);
  l.cwd = options_.cwd.value_or("");
  check_working_directory(l.cwd);
  const char* path_var = configuration::find_variable(env, "PATH");
  auto lookup = process::find_program(argv.front(), path_var ? path_var : "", l.cwd);
  if (lookup.error != 0) {
    fail(errc::spawn_failed, lookup.error == ENOENT ? 127 : 126, lookup.message);
    return;
  }
  CommandStreams streams(options_, manager_->dev_null, l.sandboxing);
  resolve_call(l);
  attach_proxy(l, env);

  process::SpawnPlan plan(std::move(lookup.path), std::move(argv), std::move(env), l.cwd);
  program_ = plan.program();
  plan_sandbox(l, plan);
  const process::SpawnResult spawned = start_child(l, plan, streams.stdio());
  given_fds_.clear();  // the child has its own: a caller's reader sees EOF when it is done
  // The child has its copies (or is gone); ours must close so EOF can happen.
  streams.close_child_ends();
  l.handoff_write.reset();
  init_.close_child_end();

  take_child(l, plan, spawned, streams);
  register_in_flight();
  asio::post(strand_, [self = shared_from_this()] { self->supervise(); });
  // The next command with this plan finds a sandbox waiting, made once this one has ended
  // (complete()): made while it runs, the new namespace's mount work slowed the command's own
  // execve on a 2-core machine as much as a warm start saved (bench/sandbox_bench.cpp).
  if (!l.warm_fingerprint.empty() && spawned.error == 0) {
    make_next_.emplace(std::move(l.warm_fingerprint),
                       WarmRequest{l.cwd, l.cwd_identity, program_, l.call_policy, l.filtered});
  }
}

// The working directory a sandboxed child enters, and this call's policy on the Manager's.
void ExecOperation::resolve_call(Launch& l) {
  // A sandboxed child always enters its directory again once its mounts are in place: the one
  // it inherited is on the host's (now read-only) mount, not on the writable copy. (A
  // session's init is in its directory already.)
  if (l.sandboxing && !session_) {
    auto dir = sandbox::resolve_working_directory(l.cwd);
    l.cwd = std::move(dir.path);
    l.cwd_identity = dir.identity;
  }
  l.call_policy = with_call_policy(policy_, options_.policy);
  if (l.sandboxing && !session_) {
    if (auto conflict = sandbox::call_root_conflict(policy_.filesystem, options_.policy.allow_write,
                                                    l.cwd, l.sandbox->home())) {
      throw Error(errc::config_invalid, *conflict);
    }
  }
  l.filtered = session_ ? session_->filtered
                        : l.sandboxing && manager_->proxy_core != nullptr &&
                              l.call_policy.network.mode == NetworkMode::filtered;
}

// Filtered network: the proxy URL in the environment, and for a sandbox made for this
// command, the socket pair its listener comes over (start_proxy_session).
void ExecOperation::attach_proxy(Launch& l, std::vector<std::string>& env) {
  if (!l.filtered) return;
  if (session_) {
    // The session's proxy serves all its commands (its listener is in the session's network
    // namespace), with the session's credential.
    add_proxy_environment(env, session_->proxy_credential);
    return;
  }
  proxy_credential_ = random_credential();
  add_proxy_environment(env, proxy_credential_);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw Error(errc::spawn_failed, "socketpair for the proxy listener: " + errno_text(errno));
  }
  l.handoff_read.reset(sv[0]);
  l.handoff_write.reset(sv[1]);
}

// The sandbox this command runs in: the session's, or a plan of its own (which a sandbox made
// ahead with the same fingerprint may serve), or none.
void ExecOperation::plan_sandbox(Launch& l, process::SpawnPlan& plan) {
  if (session_) {
    // The session's plan was made when it opened; its audit is every command's, applying the
    // change set by copying (the layers stay mounted for the next command).
    if (!init_.open()) throw Error(errc::spawn_failed, "pipe: " + errno_text(errno));
    audit_plan_ = session_->audit;
    audit_plan_.keep_layer = true;
    audit_state_ = Audit::pending;
    sandboxed_ = true;
    return;
  }
  if (!l.sandboxing) {
    if (l.sandbox != nullptr) unsandboxed_reason_ = l.sandbox->reason();
    return;
  }
  // Where a sandbox made ahead may serve this command, the plan makes no change set unless
  // none does (start_child): that sandbox has its own.
  const bool may_be_warm = manager_->warm != nullptr && process::init_image_fd() >= 0;
  l.sandbox_plan = std::make_unique<sandbox::SandboxPlan>(
      *l.sandbox, l.cwd, l.cwd_identity, plan.program(), &l.call_policy,
      may_be_warm ? sandbox::ChangeSetMaking::on_demand : sandbox::ChangeSetMaking::now);
  attach_sandbox_plan(l, plan);
  // PID 1 of the namespace ignores signals it has no handler for: paddock-init goes in
  // front, so the command gets SIGTERM, SIGPIPE and its own kill as anywhere else. Where
  // the kernel forbids executable memfds (vm.memfd_noexec=2), the command is PID 1 itself
  // (`paddock doctor` says so): signal semantics degrade, isolation does not.
  if ((plan.namespace_flags() & CLONE_NEWPID) != 0 && process::init_image_fd() >= 0) {
    if (!init_.open()) throw Error(errc::spawn_failed, "pipe: " + errno_text(errno));
    // Its mount points are added in start_child, only if a sandbox is made there.
    plan.set_init(process::init_image_fd(), init_.child_end(), -1);
  }
  if (manager_->warm && plan.init_image() >= 0) {
    // A sandbox made ahead serves only a plan identical to this one (warm_sandboxes.hpp).
    l.warm_fingerprint = l.sandbox_plan->fingerprint();
    l.warm = manager_->warm->take(l.warm_fingerprint);
  }
  take_plan_parts(l);
  audit_state_ = Audit::pending;
  sandboxed_ = true;
}

// The spawn plan takes the sandbox plan's namespaces and steps.
void ExecOperation::attach_sandbox_plan(Launch& l, process::SpawnPlan& plan) {
  sandbox::SandboxPlan& sp = *l.sandbox_plan;
  plan.set_sandbox(sp.clone_flags(), &sp.child(), sp.join_netns(), sp.join_userns());
  if (l.filtered) sp.set_proxy_handoff(l.handoff_write.get());
}

// This operation takes the plan's netns lease and audit plan (after its fingerprint, which
// counts the lease).
void ExecOperation::take_plan_parts(Launch& l) {
  netns_lease_ = l.sandbox_plan->take_netns_lease();
  audit_plan_ = l.sandbox_plan->take_audit_plan();
}

// Starts the command: in the session, in the sandbox made ahead, or in a child made here.
process::SpawnResult ExecOperation::start_child(Launch& l, process::SpawnPlan& plan,
                                                const process::ChildStdio& stdio) {
  l.namespace_flags = plan.namespace_flags();
  const sandbox::ChangeSetInfo* planned_set =
      l.sandbox_plan ? l.sandbox_plan->planned_change_set() : nullptr;
  if (l.warm && l.warm->change_set) adopt_warm_change_set(*l.warm->change_set, planned_set);
  auto spawned = session_ ? start_in_session(plan, stdio)
                 : l.warm ? start_warm(*l.warm, plan, stdio, l.handoff_read)
                          : process::SpawnResult{};
  if (spawned.pid >= 0 && l.warm && l.warm->change_set) {
    // The command writes the layers the sandbox made ahead has mounted: that set is its own.
    audit_plan_.change_set = std::move(l.warm->change_set);
  }
  if (spawned.pid >= 0) return spawned;
  if (planned_set != nullptr) {
    // No sandbox made ahead took it: the plan's own set is made now.
    if (auto set = l.sandbox_plan->make_change_set()) {
      audit_plan_.change_set = std::move(set);
    } else {
      // Its stand-ins came out other than planned: a plan that makes its set at once.
      l.sandbox_plan = std::make_unique<sandbox::SandboxPlan>(*l.sandbox, l.cwd, l.cwd_identity,
                                                              plan.program(), &l.call_policy);
      attach_sandbox_plan(l, plan);
      take_plan_parts(l);
      l.namespace_flags = plan.namespace_flags();
    }
  }
  // A sandbox made here: its paddock-init gets the plan's mount points to check the run
  // against (init_report.hpp); a warm hit skips this (its init got them when it was made).
  if (plan.init_image() >= 0) {
    l.mount_points =
        sandbox::mount_points_memfd(sandbox::planned_mount_points(l.sandbox_plan->child()));
    if (l.mount_points.get() < 0) {
      throw Error(errc::spawn_failed, "memfd for the planned mount points: " + errno_text(errno));
    }
    plan.set_init(process::init_image_fd(), init_.child_end(), l.mount_points.get());
  }
  if (audit_plan_.change_set) {
    own_change_set(*audit_plan_.change_set);
    if (options_.changes_owner) sandbox::save_change_set(*audit_plan_.change_set);
  }
  return spawn_sandbox_or_host(plan, stdio, l.sandboxing);
}

// The set the sandbox made ahead has mounted becomes this command's (saved "open" before the
// command starts: a paddock killed from here on leaves it for `paddock changes`). It starts
// when this command does, as a fresh sandbox's would: the start this command's plan stamped
// before it looked at the host. What the host changed since the sandbox was made is then the
// host's before the command, not a conflict (a file saved in an editor between two commands).
// The overlay cannot show the command an older host there: what it looked up while being
// made counts in the plan's fingerprint by identity (plan_builder.cpp, note_names_looked_up),
// captured after that start.
void ExecOperation::adopt_warm_change_set(sandbox::ChangeSetInfo& set,
                                          const sandbox::ChangeSetInfo* planned) {
  set.state = "open";
  if (planned != nullptr) {
    set.command = planned->command;
    set.cwd = planned->cwd;
    set.start_sec = planned->start_sec;
    set.start_nsec = planned->start_nsec;
  }
  own_change_set(set);
  sandbox::save_change_set(set);
}

// The started child (or its failure) becomes what supervise() watches: its pidfd, its output
// pipes, its stdin, the error to report, the proxy's session.
void ExecOperation::take_child(Launch& l, const process::SpawnPlan& plan,
                               const process::SpawnResult& spawned, CommandStreams& streams) {
  // A set-up failure that is not the platform's (or the platform's, under strict) stays a
  // failure: the command does not run, on the host least of all.
  const auto setup_failure =
      sandboxed_ ? classify_setup_failure(spawned, l.namespace_flags) : std::nullopt;
  if (spawned.pid < 0) {
    throw Error(errc::spawn_failed, setup_failure ? setup_failure->reason
                                                  : std::string(spawned.failed_step) + ": " +
                                                        errno_text(spawned.error));
  }
  if (sandboxed_ && !session_ && spawned.error == 0 && !setup_failure && plan.init_image() < 0) {
    // The command is PID 1 itself (no executable memfd for paddock-init): nothing watches its
    // mounts, so none is taken as intact.
    audit_plan_.mounts_unverified = true;
  }
  if (session_) {
    session_pid_ = spawned.pid;  // the session's init: its pidfd stays the session's
  } else {
    child_.emplace(strand_, spawned.pid, spawned.pidfd);
    if (plan.init_image() >= 0) child_->leader_forwards_signals();
  }
  stdout_.emplace(strand_, streams.take_stdout().release(), max_output_, options_.keep_output);
  stderr_.emplace(strand_, streams.take_stderr().release(), max_output_, options_.keep_output);
  if (streams.feeds_stdin()) {
    stdin_.emplace(strand_, streams.take_stdin().release());
    stdin_->non_blocking(true);
  }
  if (setup_failure) {
    spawn_error_ = setup_failure->reason;
    spawn_error_exit_ = 125;
    spawn_error_code_ = setup_failure->platform ? errc::unsupported_platform : errc::spawn_failed;
  } else if (spawned.error != 0) {
    spawn_error_ = std::string(spawned.failed_step) + " failed for " + plan.program() + ": " +
                   errno_text(spawned.error);
    spawn_error_exit_ = exit_status_for_exec_errno(spawned.error);
  }
  if (l.filtered && sandboxed_ && !session_ && spawned.error == 0) {
    start_proxy_session(l.handoff_read.get());
  }
}

// Registered only now, with everything written: close() may cancel from here on. If it closed
// while we spawned, the command is ended as soon as supervision starts.
void ExecOperation::register_in_flight() {
  std::lock_guard lock(manager_->mutex);
  if (manager_->closed) cancel_requested_ = true;
  id_ = manager_->next_id++;
  manager_->in_flight.emplace(id_, weak_from_this());
}

void ExecOperation::own_change_set(sandbox::ChangeSetInfo& set) {
  if (options_.changes_owner) {
    sandbox::set_change_set_owner(set, options_.changes_owner->pid,
                                  options_.changes_owner->start_time);
  }
  // The set's lock (ChangeSetInfo::lock, taken when it was made) stays held until the audit
  // is done: `paddock changes` waits for it.
}

// Gives the command to a sandbox made ahead. Its init, report pipe, proxy listener and
// network namespace become this command's. If the init cannot take it (gone, or the command
// does not fit its socket at once), the sandbox is discarded: pid -1, and the caller makes a
// fresh one.
process::SpawnResult ExecOperation::start_warm(WarmSandbox& warm, const process::SpawnPlan& plan,
                                               const process::ChildStdio& stdio,
                                               UniqueFd& handoff_read) {
  // Our /dev/null is not passed: the init keeps the sandbox's own.
  auto own = [&](int fd) { return fd == manager_->dev_null ? -1 : fd; };
  const int streams[3] = {own(stdio.in), own(stdio.out), own(stdio.err)};
  process::SpawnResult result;
  if (!process::send_init_command(warm.control.get(), plan.program(), plan.argv(), plan.envp(),
                                  streams)) {
    WarmSandboxes::discard(std::move(warm));
    return result;
  }
  warm.control.reset();  // the command is in the socket; the init reads it from there
  result.pid = warm.pid;
  result.pidfd = warm.pidfd.release();
  init_.adopt(std::move(warm.report));
  if (warm.handoff.get() >= 0) handoff_read = std::move(warm.handoff);
  netns_lease_.return_unused();  // the fresh plan's: no process joined it
  netns_lease_ = std::move(warm.netns);
  return result;
}

// A session's command (ExecOptions::session): its working directory and policy are the
// session's, so the classifier and the path guard judge it under those. False: failed.
bool ExecOperation::adopt_session() {
  session_ = options_.session->core();
  options_.session.reset();  // the session's end does not wait for this operation
  if (options_.policy.touches_sandbox()) {
    fail(errc::config_invalid, -1,
         "policy: a session's policy is fixed when it opens (SessionOptions::policy)");
    return false;
  }
  if (options_.cwd && !options_.cwd->empty()) {
    const auto dir = sandbox::resolve_working_directory(*options_.cwd);
    if (dir.path != session_->cwd) {
      fail(errc::config_invalid, -1,
           "cwd: a session's commands run in its working directory (" + session_->cwd + "), not " +
               dir.path + " (cd there in the command)");
      return false;
    }
  }
  options_.cwd = session_->cwd;
  options_.policy = session_->call;
  return true;
}

// Hands the command to the session's init, with the write end of its own report pipe. The
// session is this operation's until it completes (SessionCore::end_command).
process::SpawnResult ExecOperation::start_in_session(const process::SpawnPlan& plan,
                                                     const process::ChildStdio& stdio) {
  if (std::string why = session_->begin_command(); !why.empty()) {
    throw Error(errc::spawn_failed, why);
  }
  session_busy_ = true;
  auto own = [&](int fd) { return fd == manager_->dev_null ? -1 : fd; };
  const int streams[3] = {own(stdio.in), own(stdio.out), own(stdio.err)};
  if (!process::send_init_command(session_->sandbox.control.get(), plan.program(), plan.argv(),
                                  plan.envp(), streams, init_.child_end())) {
    const int err = errno;
    session_busy_ = false;
    session_->end_command();
    throw Error(errc::spawn_failed,
                err == E2BIG
                    ? "command: too large for a session (over 64 KiB of program, "
                      "arguments and environment)"
                    : "the session's sandbox did not take the command: " + errno_text(err));
  }
  process::SpawnResult result;
  result.pid = session_->sandbox.pid;
  return result;
}

// Spawns the plan. Host or sandbox was decided before planning (SandboxContext: under
// fallback warn a host without namespaces runs every command on the host from the start), so
// a sandbox that cannot be set up now is this command's failure, under either fallback: a
// missing feature is E_UNSUPPORTED_PLATFORM naming it, anything else E_SPAWN_FAILED.
process::SpawnResult ExecOperation::spawn_sandbox_or_host(process::SpawnPlan& plan,
                                                          const process::ChildStdio& stdio,
                                                          bool sandboxing) {
  auto spawned = process::spawn(plan, stdio);
  if (!sandboxing || spawned.pid >= 0) return spawned;
  const auto failure = classify_setup_failure(spawned, plan.namespace_flags());
  if (!failure || !failure->platform) return spawned;
  const bool warn = manager_->sandbox_context->policy().fallback == FallbackMode::warn;
  throw Error(errc::unsupported_platform,
              failure->reason + (warn ? " (fallback warn: the start-up check passed, so this "
                                        "command is refused rather than run on the host)"
                                      : " (strict fallback: refusing to run unsandboxed; "
                                        "sandbox.fallback=warn runs commands unsandboxed "
                                        "instead)"));
}

void ExecOperation::start_proxy_session(int handoff_fd) {
  int listener = receive_listener(handoff_fd);
  if (listener < 0) {
    // The child reached execve, so it sent the listener: a missing one is our bug or a
    // kernel surprise, and the command must not run with a proxy URL that leads nowhere.
    child_->signal_tree(SIGKILL);
    spawn_error_ = "the sandbox did not hand over the proxy listener";
    spawn_error_exit_ = 125;
    spawn_error_code_ = errc::proxy_start_failed;
    return;
  }
  proxy_session_ = std::make_shared<proxy::Session>(
      manager_->proxy_core, manager_->executor,
      program_ + " (pid " + std::to_string(child_->pid()) + ")", proxy_credential_);
  proxy_session_->set_call_rules(
      configuration::call_domain_rules(options_.policy));  // validated in start()
  proxy_session_->set_call_sink(options_.on_network);
  if (netns_lease_.fd() >= 0) {
    proxy_session_->hold(std::make_shared<sandbox::NetnsLease>(std::move(netns_lease_)));
  }
  proxy_session_->start(listener);
}

void ExecOperation::close_proxy_session() {
  if (proxy_session_) proxy_session_->close();
}

// The leader is paddock-init: what it said about the command replaces its own status. A
// command whose execve failed inside the sandbox ends as such a failure would outside it.
void ExecOperation::take_init_report() {
  if (!init_.active()) return;
  auto outcome = init_.take();
  audit_plan_.mounts_dropped = outcome.mounts_dropped;  // the audit (after this) compares more
  discarded_ = {outcome.tmp_entries, outcome.tmp_bytes, outcome.tmp_bounded};
  // An init killed before its report (a timeout's or a cancel's grace passed, the Manager
  // closed) said nothing about the mounts: nothing may be taken as intact (fail closed).
  if (!outcome.status && outcome.exec_errno == 0 && outcome.failure.empty()) {
    audit_plan_.mounts_unverified = true;
  }
  // The command's execve failing is its result, not a failure to set up: it ran in the
  // sandbox, so the audit's findings and `sandboxed` stay in the result (complete()).
  if (outcome.status) {
    command_status_ = outcome.status;
  } else if (outcome.exec_errno != 0) {
    command_error_ = "execve failed for " + program_ + ": " + errno_text(outcome.exec_errno);
    command_status_ = process::ExitStatus{exit_status_for_exec_errno(outcome.exec_errno), 0};
  } else if (!outcome.failure.empty()) {
    command_error_ = outcome.failure;
    command_status_ = process::ExitStatus{125, 0};
  }
}

}  // namespace paddock::manager
