// A handle on one running command for whoever started it: signals from outside the call (a
// daemon's client sending SIGINT), safe from any thread. Give one in ExecOptions::control
// before async_exec; it is live from the command's start until its completion.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

namespace paddock {

namespace manager {
class ExecOperation;
}

class ExecControl {
 public:
  // Sends `sig` to the command's whole tree (everything in its sandbox, or its process group
  // on the host). False if the command is not running: not started yet, or already ended.
  // Ending it this way is the command's status (128+N), not a cancellation.
  bool signal(int sig);

  // The caller that would take the command's result is gone (a helper's client was killed, its
  // connection dropped): when the command ends its change set is not applied but left
  // abandoned for `paddock changes`, as when a paddock running it in process is killed. Call
  // before cancelling. Any thread; any time before the command's audit starts.
  void leave_changes() noexcept { leave_changes_.store(true); }
  bool changes_left() const noexcept { return leave_changes_.load(); }

 private:
  friend class manager::ExecOperation;
  void attach(std::function<void(int)> target);
  void detach();

  std::mutex mutex_;
  std::function<void(int)> target_;
  std::atomic<bool> leave_changes_{false};
};

}  // namespace paddock
