// Owns one child's pidfd: waits for its exit on the event loop, reads its status, signals it
// and its process group, and reaps it. The one owner that reaps this child.
#pragma once

#include <sys/types.h>

#include <asio/any_io_executor.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace paddock::process {

struct ExitStatus {
  int exit_code = -1;  // 128+N when killed by signal N
  int signal = 0;
};

class PidfdWatch {
 public:
  PidfdWatch(const asio::any_io_executor& ex, pid_t pid, int pidfd);
  ~PidfdWatch();  // kills (if still running) and reaps, so no zombie outlives us

  pid_t pid() const noexcept { return pid_; }
  bool exited() const noexcept { return exited_; }
  const ExitStatus& status() const noexcept { return status_; }

  // Calls on_exit once the child has exited. The child is left a zombie until reap(), which
  // keeps its pid (and so its process-group id) from being reused while we may still signal
  // the group.
  void async_wait_exit(std::function<void()> on_exit);

  // Signals the leader through the pidfd (no pid-reuse race) and the whole process group.
  void signal_tree(int sig) noexcept;
  // The leader is paddock-init, which passes every signal on to the command's group itself:
  // signal_tree() then signals the leader alone (the group too would deliver it twice).
  void leader_forwards_signals() noexcept { forwards_ = true; }

  // Releases the zombie and closes the pidfd, so a caller that gets the result holds no
  // resource of the command any more. Only after exited().
  void reap() noexcept;

  // The caller no longer waits for the exit to complete anything (a sandbox's command ended
  // on paddock-init's report): the exit only reaps the zombie now.
  void exit_only_reaps() noexcept { exit_awaited_ = false; }

  // How many exits, process-wide, the recheck timer found (see arm_recheck) while a
  // completion waited for them and whose pidfd wake-up has not come since: 0 unless the
  // event loop lost one (a wake-up that comes late, after the timer under heavy load, is not
  // counted). Those found after exit_only_reaps() delayed no result, only a reap: late_reaps.
  static std::int64_t missed_wakeups() noexcept;
  static std::int64_t late_reaps() noexcept;

 private:
  bool poll_exit() noexcept;  // waitid(P_PIDFD, WNOHANG|WNOWAIT): true once exited
  void arm_wait();
  void arm_recheck(std::chrono::milliseconds after);

  std::shared_ptr<asio::posix::stream_descriptor> pidfd_;
  // The safety net for a lost readiness completion (see arm_recheck).
  asio::steady_timer recheck_;
  std::function<void()> on_exit_;
  bool waiting_ = false;  // a wait on the pidfd is in flight
  // Shared with the pending handlers. `alive` is cleared by the destructor: a pending wait's
  // handler then knows `this` is gone. `found_by_recheck`: the timer found the exit with the
  // wait still out (1 awaited, 0 only reaping, -1 not): the wait's wake-up takes it back.
  struct WatchState {
    bool alive = true;
    int found_by_recheck = -1;
  };
  std::shared_ptr<WatchState> watch_ = std::make_shared<WatchState>();
  pid_t pid_;
  bool exited_ = false;
  bool reaped_ = false;
  ExitStatus status_;
  bool forwards_ = false;
  bool exit_awaited_ = true;
};

}  // namespace paddock::process
