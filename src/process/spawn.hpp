// Starting a child without fork(): clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD) on a stack of
// its own, like posix_spawn but with a pidfd and room for the namespace/sandbox steps the
// isolation layer adds. fork() from a threaded supervisor costs time proportional to its RSS
// (page-table copy: ~17 ms at 1 GiB); this path costs the same at any size.
//
// Everything the child needs is computed here, in the parent, into a SpawnPlan; between clone
// and execve the child only runs the async-signal-safe steps in child_side.cpp.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace paddock::sandbox {
struct ChildSandbox;
}

namespace paddock::process {

// Immutable once built; owns every string the child's arrays point into.
class SpawnPlan {
 public:
  SpawnPlan(std::string program_path, std::vector<std::string> argv, std::vector<std::string> env,
            std::string cwd);
  SpawnPlan(SpawnPlan&&) = delete;  // argv_/envp_ point into our own strings

  const char* program() const noexcept { return program_.c_str(); }
  char* const* argv() const noexcept { return argv_ptrs_.data(); }
  char* const* envp() const noexcept { return env_ptrs_.data(); }
  const char* cwd() const noexcept { return cwd_.empty() ? nullptr : cwd_.c_str(); }

  // Runs the child in a sandbox: `flags` are the clone namespace flags, `child` the steps it
  // applies before execve. Both must outlive spawn().
  // `join_netns`: a pooled network namespace the child starts in; `join_userns`: the user
  // namespace that owns it, when it is not ours (sandbox/linux/netns_pool.hpp).
  void set_sandbox(int flags, const sandbox::ChildSandbox* child, int join_netns = -1,
                   int join_userns = -1) noexcept {
    namespace_flags_ = flags;
    sandbox_ = child;
    join_netns_ = join_netns;
    join_userns_ = join_userns;
    if (child == nullptr) init_image_ = init_report_ = init_control_ = init_mounts_ = -1;
  }
  // Puts paddock-init (init_main.cpp) in front of the command as PID 1 of its PID namespace:
  // the child execs `image_fd` (init_image.hpp) with the command as its arguments, and the
  // init reports the command's status on `report_fd` (init_handshake.hpp). With
  // `control_fd` the init starts without a command and waits for one on that socket
  // (init_report.hpp, InitCommand): a sandbox made ahead (manager/warm_sandboxes.hpp); the
  // plan's own program and arguments are then unused.
  // `mounts_fd`: the plan's mount points (sandbox/linux/mount_table.hpp), which the init
  // checks its namespace still shows at the start and at the end (init_report.hpp).
  void set_init(int image_fd, int report_fd, int mounts_fd, int control_fd = -1);
  int init_image() const noexcept { return init_image_; }
  int init_report() const noexcept { return init_report_; }
  int init_control() const noexcept { return init_control_; }
  int init_mounts() const noexcept { return init_mounts_; }
  char* const* init_argv() const noexcept { return init_argv_ptrs_.data(); }
  // A network namespace the child starts in: the spawning thread enters it for the clone, or,
  // with join_userns(), a child of ours that joins both and clones the sandbox (spawn.cpp).
  int join_netns() const noexcept { return join_netns_; }
  int join_userns() const noexcept { return join_userns_; }
  int namespace_flags() const noexcept { return namespace_flags_; }
  const sandbox::ChildSandbox* sandbox() const noexcept { return sandbox_; }

 private:
  std::string program_;
  std::vector<std::string> argv_, env_;
  std::string cwd_;
  std::vector<char*> argv_ptrs_, env_ptrs_;
  int namespace_flags_ = 0;
  int join_netns_ = -1;
  int join_userns_ = -1;
  int init_image_ = -1, init_report_ = -1, init_control_ = -1, init_mounts_ = -1;
  std::vector<char*> init_argv_ptrs_;  // "paddock-init", program, then argv_ptrs_
  const sandbox::ChildSandbox* sandbox_ = nullptr;
};

// The child's standard streams (fds in the parent; the child dup2s them onto 0, 1, 2).
struct ChildStdio {
  int in = -1, out = -1, err = -1;
  // The supervisor's /dev/null, if any of the three is it: a sandboxed child reopens its own
  // (on a read-only mount) instead, since a root-mapped sandbox owns the host's node and could
  // chmod it through the inherited descriptor.
  int dev_null = -1;
};

struct SpawnResult {
  pid_t pid = -1;
  int pidfd = -1;                     // owned by the caller; CLOEXEC
  int error = 0;                      // errno of the failing step; 0 if execve succeeded
  const char* failed_step = nullptr;  // "chdir", "execve", ... when error != 0
  const char* failed_path = nullptr;  // what the failed step was about, if anything
  bool sandbox_failed = false;        // the failure was in the sandbox set-up
  // The failed step needs a kernel feature: clone with namespace flags, or a child step that
  // says so (sandbox::StepFailure::needs_feature). See manager/setup_failure.hpp.
  bool feature_step = false;
};

// Spawns the plan. When the child failed before execve, error/failed_step say why and
// pid/pidfd still refer to the (exited) child, which the caller must reap like any other.
// When clone itself fails, pid == -1 and error is set.
SpawnResult spawn(const SpawnPlan& plan, const ChildStdio& stdio);

// The soft RLIMIT_NOFILE the supervisor started with; children get it back (a raised soft
// limit breaks programs that still use select()). Recorded by init_process_once().
void remember_original_nofile(rlim_t soft) noexcept;

}  // namespace paddock::process
