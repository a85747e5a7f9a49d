#include "process/child_side.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "process/init_report.hpp"
#include "sandbox/linux/child_plan.hpp"

namespace paddock::process {
namespace {

// The kernel's sigaction layout (glibc's differs), used with the raw rt_sigaction syscall so
// glibc's bookkeeping for its reserved signals (SIGCANCEL, SIGSETXID) cannot get in the way.
struct kernel_sigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  unsigned long mask;
};

[[noreturn]] void in_child_fail(ChildContext* ctx, const char* step) {
  ctx->error = errno;
  ctx->failed_step = step;
  ::syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

// Moves `fd` onto `target`. Onto itself (dup3 refuses that) only O_CLOEXEC is cleared.
bool in_child_install_fd(int fd, int target) {
  if (fd == target) {
    int flags = static_cast<int>(::syscall(SYS_fcntl, fd, F_GETFD));
    return flags >= 0 && ::syscall(SYS_fcntl, fd, F_SETFD, flags & ~FD_CLOEXEC) == 0;
  }
  return ::syscall(SYS_dup3, fd, target, 0) == target;  // dup3: dup2 is absent on arm64
}

// Standard streams that were the supervisor's /dev/null become the sandbox's own (its
// read-only mount of the node) so no descriptor to a host inode the command owns survives.
void in_child_reopen_dev_null(ChildContext* ctx) {
  if (ctx->dev_null_fd < 0) return;
  const int from[3] = {ctx->stdin_fd, ctx->stdout_fd, ctx->stderr_fd};
  long fd = -1;
  for (int target = 0; target < 3; ++target) {
    if (from[target] != ctx->dev_null_fd) continue;
    if (fd < 0) fd = ::syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
    if (fd < 0 || ::syscall(SYS_dup3, fd, target, 0) != target) {
      ctx->sandbox_failed = true;
      in_child_fail(ctx, "reopen /dev/null");
    }
  }
  if (fd >= 0) ::syscall(SYS_close, fd);
}

}  // namespace

int in_child_main(void* context) {
  auto* ctx = static_cast<ChildContext*>(context);

  // The parent blocked every signal before clone(), so no handler of the parent's can run
  // here on its memory. Reset dispositions before unblocking: handlers would be reset by
  // execve anyway, but SIG_IGN is inherited (a child that ignores SIGPIPE or SIGINT because
  // its supervisor does is a classic bug).
  struct kernel_sigaction dfl = {};
  dfl.handler = SIG_DFL;
  for (int sig = 1; sig < _NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof(unsigned long));
  }

  // Its own session (and process group) so the supervisor can signal the whole group and no
  // controlling terminal of ours leaks in.
  if (::syscall(SYS_setsid) < 0) in_child_fail(ctx, "setsid");

  // A stream given as another of 0-2 (the caller's fd 2 as stdout, say) moves above 2 first,
  // so installing one stream cannot overwrite where another comes from.
  int* sources[3] = {&ctx->stdin_fd, &ctx->stdout_fd, &ctx->stderr_fd};
  for (int target = 0; target < 3; ++target) {
    int src = *sources[target];
    if (src < 0 || src > 2 || src == target) continue;
    long moved = ::syscall(SYS_fcntl, src, F_DUPFD_CLOEXEC, 3);
    if (moved < 0) in_child_fail(ctx, "dup (standard streams)");
    for (int* other : sources) {
      if (*other == src) *other = static_cast<int>(moved);
    }
  }
  if (!in_child_install_fd(ctx->stdin_fd, 0) || !in_child_install_fd(ctx->stdout_fd, 1) ||
      !in_child_install_fd(ctx->stderr_fd, 2)) {
    in_child_fail(ctx, "dup2");
  }
  if (ctx->sandbox == nullptr && ctx->cwd != nullptr && ::syscall(SYS_chdir, ctx->cwd) != 0) {
    in_child_fail(ctx, "chdir");
  }

  if (ctx->nofile_soft != RLIM_INFINITY) {
    struct rlimit cur;
    if (::syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &cur) == 0 &&
        cur.rlim_cur > ctx->nofile_soft) {
      cur.rlim_cur = ctx->nofile_soft;
      ::syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &cur, nullptr);
    }
  }

  // Only 0-2 survive. Asio 1.22 creates some fds without O_CLOEXEC (asio#523) and an
  // embedding program may too: closing by range does not depend on anyone's flags.
  // (Keeping, for the sandbox set-up only, the supervisor's pidfd for the parent-death check
  // and the socket the proxy's listener is handed over on; the set-up closes both.)
  // The init's image, report pipe, command socket and the plan's mount points stay until
  // the init's execve.
  // So do the writable roots' overlays a joiner made for a sandbox from a mount template.
  const bool init = ctx->init_image >= 0;
  constexpr int kKept = 6 + sandbox::kMaxTemplateLayers;
  int keep[kKept] = {-1,
                     -1,
                     ctx->init_image,
                     init ? ctx->init_report : -1,
                     init ? ctx->init_control : -1,
                     init ? ctx->init_mounts : -1};
  for (int i = 6; i < kKept; ++i) keep[i] = -1;
  if (ctx->sandbox != nullptr) {
    keep[0] = ctx->supervisor_pidfd;
    keep[1] = ctx->sandbox->proxy_handoff_fd;
    if (const sandbox::MountTemplateUse* from = ctx->sandbox->mount_template) {
      int k = 6;
      for (int slot = 0; slot < ctx->sandbox->slot_count && k < kKept; ++slot) {
        if (from->preset_slots[slot] >= 0) keep[k++] = from->preset_slots[slot];
      }
    }
  }
  for (int i = 1; i < kKept; ++i) {  // ascending, for the ranges between them
    for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) {
      int t = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = t;
    }
  }
  unsigned next = 3;
  for (int k : keep) {
    if (k < 3 || static_cast<unsigned>(k) < next) continue;
    if (static_cast<unsigned>(k) > next &&
        ::syscall(SYS_close_range, next, static_cast<unsigned>(k - 1), 0U) != 0) {
      in_child_fail(ctx, "close_range");
    }
    next = static_cast<unsigned>(k) + 1;
  }
  if (::syscall(SYS_close_range, next, ~0U, 0U) != 0) in_child_fail(ctx, "close_range");

  // The sandbox (namespaces were created by clone itself): mounts, chdir, limits, Landlock,
  // capabilities, seccomp last.
  int tmp_uppers[2] = {-1, -1};
  if (ctx->sandbox != nullptr) {
    sandbox::StepFailure failure;
    int err = sandbox::in_child_apply_sandbox(*ctx->sandbox, ctx->cwd, ctx->supervisor_pidfd,
                                              &failure, tmp_uppers);
    if (err != 0) {
      errno = err;
      ctx->failed_path = failure.path;
      ctx->sandbox_failed = true;
      ctx->feature_step = failure.needs_feature;
      in_child_fail(ctx, failure.step);
    }
    in_child_reopen_dev_null(ctx);
  }

  unsigned long empty_mask = 0;
  if (ctx->init_image >= 0) {
    // PID 1 is paddock-init, the command its child (init_main.cpp). Its image fd is numbered
    // 10 or above, so moving the report pipe onto 3 cannot clobber it; the mount table and
    // the command socket move out of the way (to 6 or above) before the report pipe lands on
    // 3, the socket on 4 and the table on 5.
    // Every descriptor the init gets is first copied above the numbers it gets them on (9 and
    // up), so installing one can never overwrite another's source.
    constexpr int kAbove = kInitVarTmpUpperFd + 1;
    auto above = [](long fd, bool owned) -> long {
      if (fd < 0) return fd;
      const long high = ::syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, kAbove);
      if (owned) ::syscall(SYS_close, fd);
      return high;
    };
    // The mount table, opened now that every mount step is done (init_report.hpp).
    const long table =
        above(::syscall(SYS_openat, AT_FDCWD, "/proc/self/mountinfo", O_RDONLY | O_CLOEXEC), true);
    if (table < 0) {
      ctx->sandbox_failed = true;
      in_child_fail(ctx, "open /proc/self/mountinfo (paddock-init's mount table)");
    }
    const long points = ctx->init_mounts < 0 ? -1 : above(ctx->init_mounts, false);
    if (points < 0) {
      ctx->sandbox_failed = true;
      in_child_fail(ctx, "dup (paddock-init's planned mount points)");
    }
    long control = -1;
    if (ctx->init_control >= 0) {
      control = above(ctx->init_control, false);
      if (control < 0) {
        ctx->sandbox_failed = true;
        in_child_fail(ctx, "dup (paddock-init's command socket)");
      }
    }
    // Optional: without one the init counts nothing there.
    const long tmp_upper = above(tmp_uppers[0], true);
    const long var_tmp_upper = above(tmp_uppers[1], true);
    if (!in_child_install_fd(ctx->init_report, kInitReportFd) ||
        (control >= 0 && !in_child_install_fd(static_cast<int>(control), kInitControlFd)) ||
        !in_child_install_fd(static_cast<int>(table), kInitMountTableFd) ||
        !in_child_install_fd(static_cast<int>(points), kInitMountPointsFd) ||
        (tmp_upper >= 0 && !in_child_install_fd(static_cast<int>(tmp_upper), kInitTmpUpperFd)) ||
        (var_tmp_upper >= 0 &&
         !in_child_install_fd(static_cast<int>(var_tmp_upper), kInitVarTmpUpperFd))) {
      ctx->sandbox_failed = true;
      in_child_fail(ctx, "dup2 (paddock-init's report pipe, command socket, mount table)");
    }
    // Absent ones: nothing else may sit on their numbers (every source is above them now).
    if (tmp_upper < 0) ::syscall(SYS_close, kInitTmpUpperFd);
    if (var_tmp_upper < 0) ::syscall(SYS_close, kInitVarTmpUpperFd);
    // Every signal stays blocked across this execve (spawn() blocked them all around clone):
    // the kernel drops a signal that reaches PID 1 unblocked with no handler, so a SIGTERM or
    // a timeout sent between this execve and the init's own sigprocmask was lost and the
    // command ran on until SIGKILL. Blocked, it waits for the init (which unblocks the command).
    ::syscall(SYS_execveat, ctx->init_image, "", ctx->init_argv, ctx->envp, AT_EMPTY_PATH);
    ctx->sandbox_failed = true;
    in_child_fail(ctx, "execve (paddock-init)");
  }
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty_mask, nullptr, sizeof(empty_mask));

  ::syscall(SYS_execve, ctx->program, ctx->argv, ctx->envp);
  in_child_fail(ctx, "execve");
}

}  // namespace paddock::process
