// Sandboxes made ahead of their commands. Most of a sandboxed start is the kernel's work
// (clone with six namespaces, ~50 mount steps, Landlock, seccomp, paddock-init's execve:
// ~0.7 ms of the ~2 ms) and none of it depends on the command itself, only on its plan. So
// after a sandboxed command starts, a worker thread makes another sandbox for the same inputs
// whose paddock-init waits for a command (init_report.hpp, InitCommand); the next command with
// the same plan sends its program, arguments, environment and streams to it and skips all of
// that.
//
// Never a weaker or an older sandbox than a fresh one: every command still makes its own plan
// when it starts (resolving every path again, taking the audit's "before" snapshot then), and
// uses a waiting sandbox only if that sandbox's plan has the same fingerprint — the same steps
// on the same host objects by (st_dev, st_ino), in the same working directory
// (sandbox/linux/plan_builder.hpp) — and its mount table is still the one it was made with:
// another mount namespace (the host, another sandbox) unlinking or renaming a name that is a
// mount point in it drops that mount there, and the same inode linked back would pass the
// identity check (checked by mount point against the plan, not against what was seen after
// it was made: the drop can happen while it is being set up). What it cannot see is the host's
// mount table changing after it was made (a file system mounted or unmounted on the host since);
// Config::warm_sandbox_max_age bounds that: an older sandbox is discarded unused.
//
// Made on a thread of its own (the warm thread, warm_sandboxes.cpp), never on the event loop nor on
// the audits' workers, and only for a plan seen twice within warm_sandbox_max_age: a farm whose
// every command has another working directory gets no sandbox made in vain.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/unique_fd.hpp"
#include "paddock/sandbox_policy.hpp"
#include "sandbox/change_set.hpp"
#include "sandbox/linux/netns_pool.hpp"
#include "sandbox/linux/path_identity.hpp"
#include "sandbox/linux/sandbox_context.hpp"
#include "sandbox/post_run_audit.hpp"

namespace paddock::manager {

// What a sandbox is made from: the inputs of a command's own plan (exec_launch.cpp).
struct WarmRequest {
  std::string cwd;
  sandbox::PathIdentity cwd_identity;
  std::string program;
  SandboxPolicy policy;   // the call's (the Manager's with ExecOptions::policy on top)
  bool filtered = false;  // the proxy's listener is handed over on a socket
};

// A sandbox whose paddock-init waits for its command. Destroyed unused, it is killed and
// reaped (a blocking wait for a process already sent SIGKILL).
struct WarmSandbox {
  WarmSandbox() = default;
  WarmSandbox(WarmSandbox&&) = default;
  WarmSandbox& operator=(WarmSandbox&&) = default;
  ~WarmSandbox();
  void kill_and_reap() noexcept;

  std::string fingerprint;
  pid_t pid = -1;
  UniqueFd pidfd;    // the init's
  UniqueFd control;  // the command goes here (process::send_init_command)
  UniqueFd report;   // the init's report pipe, read end
  UniqueFd handoff;  // filtered network: the proxy's listener arrived here
  sandbox::NetnsLease netns;
  std::chrono::steady_clock::time_point made;
  // Where its plan put a mount (sorted, a path once per mount): each must still be in its
  // mount table when it is used.
  std::vector<std::string> mount_points;
  UniqueFd mount_table;  // its /proc/PID/mountinfo, open: polled for changes (take())
  // Its copy-on-write layers (null: nothing layered). The command that uses it takes the set
  // (exec_launch.cpp), which then starts when that command does: what the host wrote while
  // the sandbox waited is the host's, not a conflict. Unused, the set goes with the sandbox
  // (empty: no command wrote it).
  std::shared_ptr<sandbox::ChangeSetInfo> change_set;
};

// One sandbox whose paddock-init waits for its command, made now on the calling thread (which
// must outlive it: the sandbox's parent-death signal is the thread's). Throws Error saying why
// it could not be made. `audit`: the plan's audit plan goes there (sessions).
WarmSandbox make_waiting_sandbox(const sandbox::SandboxContext& context, const WarmRequest& request,
                                 int dev_null, sandbox::AuditPlan* audit);

// Runs `job` on the warm thread: one thread for the process that never exits, so what it
// clones lives until it is killed (the parent-death signal follows the thread).
// `when`: not before then.
void run_on_warm_thread(
    std::function<void()> job,
    std::chrono::steady_clock::time_point when = std::chrono::steady_clock::time_point::min());

class WarmSandboxes : public std::enable_shared_from_this<WarmSandboxes> {
 public:
  // `capacity`: at most this many wait at once.
  WarmSandboxes(std::shared_ptr<const sandbox::SandboxContext> context, std::size_t capacity,
                std::chrono::milliseconds max_age);
  ~WarmSandboxes();

  // A live sandbox made for exactly this fingerprint, with its mounts intact, if one waits.
  std::optional<WarmSandbox> take(const std::string& fingerprint);
  // A command with this plan ended: true when sandboxes should be made for it (the plan
  // was seen before within the age limit, fewer than two wait, none is being made). The
  // caller then passes the plan's inputs to make_ahead(), which makes them on the warm thread.
  bool claim(const std::string& fingerprint);
  void make_ahead(WarmRequest request);
  // Kills and reaps a sandbox that will not be used (on the warm thread).
  static void discard(WarmSandbox sandbox);
  // Kills and reaps every waiting sandbox, and waits for the one being made, if any (a plan
  // and a spawn: milliseconds); none is made afterwards.
  void close();

  std::uint64_t hits() const;
  std::uint64_t misses() const;
  std::size_t waiting() const;

 private:
  void make(WarmRequest request);
  void store(WarmSandbox sandbox);
  void sweep();
  void arm_sweep();
  std::size_t waiting_for(const std::string& fingerprint) const;  // under mutex_

  std::shared_ptr<const sandbox::SandboxContext> context_;
  const std::size_t capacity_;
  const std::chrono::milliseconds max_age_;
  UniqueFd dev_null_;  // the waiting init's streams until its command brings its own

  mutable std::mutex mutex_;
  std::deque<WarmSandbox> ready_;  // oldest first
  // Plans seen lately (fingerprint -> when), bounded: claim() says yes only for a repeat.
  std::deque<std::pair<std::string, std::chrono::steady_clock::time_point>> seen_;
  bool sweep_armed_ = false;
  bool making_ = false;
  std::condition_variable made_;  // making_ went false
  bool closed_ = false;
  std::uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace paddock::manager
