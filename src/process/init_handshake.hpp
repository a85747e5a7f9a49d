// The supervisor's half of paddock-init's handshake (the init's half is init_main.cpp; the
// record both use is init_report.hpp): a pipe whose write end the child puts on fd 3 for the
// init, and which the supervisor reads once the init has exited.
#pragma once

#include <optional>
#include <string>

#include "base/unique_fd.hpp"
#include "process/init_report.hpp"
#include "process/pidfd_watch.hpp"

namespace paddock::process {

// What the init said about the command.
struct InitOutcome {
  std::optional<ExitStatus> status;  // the command's own exit status, exactly
  int exec_errno = 0;                // its execve failed with this errno
  std::string failure;               // the init could not start it (one line)
};

class InitHandshake {
 public:
  // The pipe; false (errno set) when it cannot be made.
  bool open();
  int child_end() const noexcept { return write_.get(); }
  // After spawn: the child has its copy; ours must go so a dead init reads as "no record".
  void close_child_end() noexcept { write_.reset(); }
  bool active() const noexcept { return read_.get() >= 0; }
  // After the init exited (its record, if any, is in the pipe by then; a killed init leaves
  // none, and the init's own status stands).
  InitOutcome take();

 private:
  UniqueFd read_, write_;
};

}  // namespace paddock::process
