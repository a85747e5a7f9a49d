#include "process/pidfd_watch.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>

#include "process/syscalls.hpp"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace paddock::process {

namespace {
// The first look after a missed wake-up, and the longest gap between looks.
constexpr std::chrono::milliseconds kFirstRecheck{100};
constexpr std::chrono::milliseconds kMaxRecheck{1000};

// Exits the recheck timer found whose pidfd wake-up has not come (yet): [1] while a completion
// waited for the exit, [0] when it only reaps. A wake-up that comes after all takes its count
// back: under heavy load the timer's handler can simply run first.
std::atomic<std::int64_t> g_unwoken[2] = {0, 0};
}  // namespace

std::int64_t PidfdWatch::missed_wakeups() noexcept {
  return g_unwoken[1].load(std::memory_order_relaxed);
}

std::int64_t PidfdWatch::late_reaps() noexcept {
  return g_unwoken[0].load(std::memory_order_relaxed);
}

PidfdWatch::PidfdWatch(const asio::any_io_executor& ex, pid_t pid, int pidfd)
    : pidfd_(std::make_shared<asio::posix::stream_descriptor>(ex, pidfd)),
      recheck_(ex),
      pid_(pid) {}

PidfdWatch::~PidfdWatch() {
  watch_->alive = false;
  recheck_.cancel();
  if (!reaped_) {
    if (!exited_) signal_tree(SIGKILL);
    // The child was SIGKILLed or already exited; this wait is bounded by the kernel tearing
    // it down, never by the child's own behaviour. The reactor made the pidfd non-blocking,
    // and on a non-blocking pidfd waitid answers EAGAIN instead of waiting: clear it first.
    const int fd = pidfd_->native_handle();
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    siginfo_t info{};
    ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(fd), &info, WEXITED | __WALL);
  }
  // A wait still in flight holds the descriptor (see arm_wait): it is closed when that wait
  // has completed (the child is gone now, so promptly), never under it.
}

bool PidfdWatch::poll_exit() noexcept {
  if (exited_) return true;
  siginfo_t info{};
  // __WALL: our children have exit signal 0 (see spawn.cpp). WNOWAIT: keep the zombie.
  int rc = ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_->native_handle()),
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
  on_exit_ = std::move(on_exit);
  arm_wait();
  arm_recheck(kFirstRecheck);
}

// The handler shares the descriptor: if we are destroyed or reap() comes first, the wait keeps
// it open until it completes. Never a close or cancel under the wait: on Asio 1.22's io_uring
// backend both corrupt other operations (see OutputPipe::close).
void PidfdWatch::arm_wait() {
  waiting_ = true;
  pidfd_->async_wait(asio::posix::stream_descriptor::wait_read,
                     [this, watch = watch_, fd = pidfd_](const std::error_code&) {
                       if (watch->found_by_recheck >= 0) {  // woke up late, not never
                         g_unwoken[watch->found_by_recheck].fetch_sub(1, std::memory_order_relaxed);
                         watch->found_by_recheck = -1;
                       }
                       if (!watch->alive) return;  // we are gone; `fd` closes as this ends
                       waiting_ = false;
                       if (!on_exit_) return;  // reported already (the recheck saw it first)
                       // Any error (a stray operation_aborted) just means: look again.
                       if (!poll_exit()) return arm_wait();
                       recheck_.cancel();
                       std::exchange(on_exit_, nullptr)();
                     });
}

// The safety net under the wait: the exit is also looked for on a timer, backing off to once
// a second. A command whose exit wake-up got lost completes late instead of never (Asio 1.22's
// io_uring backend lost them while paddock still cancelled operations, see OutputPipe::close);
// one that exits promptly never sees the timer fire. The load tests check it stays unused.
void PidfdWatch::arm_recheck(std::chrono::milliseconds after) {
  recheck_.expires_after(after);
  recheck_.async_wait([this, watch = watch_, after](const std::error_code& ec) {
    if (ec || !watch->alive || !on_exit_) return;
    if (!poll_exit()) return arm_recheck(std::min(after * 2, kMaxRecheck));
    if (waiting_) {  // the wait is still out: its wake-up, if it ever comes, takes this back
      watch->found_by_recheck = exit_awaited_ ? 1 : 0;
      g_unwoken[watch->found_by_recheck].fetch_add(1, std::memory_order_relaxed);
    }
    std::exchange(on_exit_, nullptr)();
  });
}

void PidfdWatch::signal_tree(int sig) noexcept {
  if (reaped_) return;
  sys::pidfd_send_signal(pidfd_->native_handle(), sig);
  if (forwards_) return;
  // The leader is not reaped yet, so its pid is still the group's id and cannot name anyone
  // else's group. Members that left the group (setsid) are the PID namespace's job.
  ::kill(-pid_, sig);
}

void PidfdWatch::reap() noexcept {
  if (!exited_) return;
  if (!reaped_) {
    siginfo_t info{};
    ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_->native_handle()), &info,
             WEXITED | WNOHANG | __WALL);
    reaped_ = true;
  }
  recheck_.cancel();
  // Under a wait in flight the descriptor stays with the wait, which closes it (arm_wait).
  if (waiting_) return;
  std::error_code ignored;
  pidfd_->close(ignored);
}

}  // namespace paddock::process
