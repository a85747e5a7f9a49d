#include "process/pidfd_watch.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include <utility>

#include "process/syscalls.hpp"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace paddock::process {

PidfdWatch::PidfdWatch(const asio::any_io_executor& ex, pid_t pid, int pidfd)
    : pidfd_(ex, pidfd), pid_(pid) {}

PidfdWatch::~PidfdWatch() {
  *alive_ = false;
  if (!reaped_) {
    if (!exited_) signal_tree(SIGKILL);
    // The child was SIGKILLed or already exited; this wait is bounded by the kernel tearing
    // it down, never by the child's own behaviour. The reactor made the pidfd non-blocking,
    // and on a non-blocking pidfd waitid answers EAGAIN instead of waiting: clear it first.
    const int fd = pidfd_.native_handle();
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    siginfo_t info{};
    ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_.native_handle()), &info,
             WEXITED | __WALL);
  }
}

bool PidfdWatch::poll_exit() noexcept {
  if (exited_) return true;
  siginfo_t info{};
  // __WALL: our children have exit signal 0 (see spawn.cpp). WNOWAIT: keep the zombie.
  int rc = ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_.native_handle()),
                    &info, WEXITED | WNOHANG | WNOWAIT | __WALL);
  if (rc != 0 && errno == ECHILD) {
    // Someone else reaped it: after execve the kernel resets a child's exit signal to
    // SIGCHLD, so an embedder that ignores SIGCHLD (auto-reap) or calls waitpid(-1) can take
    // our children. The status is lost; say so rather than wait forever.
    exited_ = true;
    reaped_ = true;
    status_.exit_code = -1;
    return true;
  }
  if (rc != 0 || info.si_pid == 0) return false;  // spurious wake-up: not exited yet
  exited_ = true;
  if (info.si_code == CLD_EXITED) {
    status_.exit_code = info.si_status;
  } else {
    status_.signal = info.si_status;
    status_.exit_code = 128 + info.si_status;
  }
  return true;
}

void PidfdWatch::async_wait_exit(std::function<void()> on_exit) {
  if (poll_exit()) {
    on_exit();
    return;
  }
  pidfd_.async_wait(
      asio::posix::stream_descriptor::wait_read,
      [this, alive = alive_, cb = std::move(on_exit)](const std::error_code&) mutable {
        // Only our destructor ends the watch; any other error (Asio 1.22's
        // io_uring backend can hand a stray operation_aborted to a new wait
        // when an fd number and its state object are reused) means: look again.
        if (!*alive) return;
        async_wait_exit(std::move(cb));
      });
}

void PidfdWatch::signal_tree(int sig) noexcept {
  if (reaped_) return;
  sys::pidfd_send_signal(pidfd_.native_handle(), sig);
  // The leader is not reaped yet, so its pid is still the group's id and cannot name anyone
  // else's group. Members that left the group (setsid) are the PID namespace's job.
  ::kill(-pid_, sig);
}

void PidfdWatch::reap() noexcept {
  if (!exited_) return;
  if (!reaped_) {
    siginfo_t info{};
    ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_.native_handle()), &info,
             WEXITED | WNOHANG | __WALL);
    reaped_ = true;
  }
  std::error_code ignored;
  pidfd_.close(ignored);
}

}  // namespace paddock::process
