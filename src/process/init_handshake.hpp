// The supervisor's half of paddock-init's handshake (the init's half is init_main.cpp; the
// record both use is init_report.hpp): a pipe whose write end the child puts on fd 3 for the
// init, and which the supervisor reads once the init has exited.
#pragma once

#include <cstddef>
#include <cstdint>
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
  int mounts_dropped = 0;            // mounts its namespace lost while it ran (init_report.hpp)
  // What it left in the private /tmp and /var/tmp (init_tmp_tally.hpp).
  std::uint64_t tmp_entries = 0, tmp_bytes = 0;
  bool tmp_bounded = false;
};

class InitHandshake {
 public:
  // The pipe; false (errno set) when it cannot be made.
  bool open();
  int child_end() const noexcept { return write_.get(); }
  // After spawn: the child has its copy; ours must go so a dead init reads as "no record".
  void close_child_end() noexcept { write_.reset(); }
  bool active() const noexcept { return read_.get() >= 0; }
  int read_end() const noexcept { return read_.get(); }
  // Reads what the init has written so far, never waiting. `reported`: its last record is in
  // (the command's status, or that it could not start it), and the init confirmed nothing
  // else is left in its namespace (init_main.cpp), so the command has ended then, before the
  // init's own exit. `closed`: the init is gone without it. A status the init could not
  // settle (command_status_unsettled) stays `pending`: the init's exit ends that command.
  enum class Progress { pending, reported, closed };
  Progress poll();
  // After the init reported or exited (a killed init leaves no record, and the init's own
  // status stands).
  InitOutcome take();
  // A warm sandbox's init (manager/warm_sandboxes.hpp): its pipe's read end, made when the
  // sandbox was.
  void adopt(UniqueFd read_end) noexcept {
    read_ = std::move(read_end);
    write_.reset();
  }
  UniqueFd release_read_end() noexcept { return std::move(read_); }

 private:
  static void take(const InitReport& r, InitOutcome& out);
  UniqueFd read_, write_;
  // What poll() read: at most exec_failed (from the command's side), mounts_dropped, the four
  // tmp_* records and the last record (command_status or fork_failed). Records are written
  // whole (8 bytes, below PIPE_BUF), so a read never splits one.
  InitReport records_[8]{};
  std::size_t count_ = 0;
  Progress progress_ = Progress::pending;
};

// The supervisor's half of a waiting init's command (init_report.hpp, InitCommand): sends
// the command and its standard streams (`streams[i]` for fd i, -1: keep the sandbox's own
// /dev/null) on `control`. Never waits: false (errno set) when the init is gone or the whole
// message does not fit the socket at once, E2BIG when it is larger than kInitCommandMaxSize;
// the caller then discards the sandbox and makes a fresh one.
// A session's command (init_report.hpp, kInitSessionCommand) brings `command_report`, the
// write end of its own report pipe.
bool send_init_command(int control, const char* program, char* const* argv, char* const* envp,
                       const int streams[3], int command_report = -1);

// A signal for a session's running command, to its process group (kInitSignalMagic). Never
// waits; false when the init is gone or its socket is full.
bool send_init_signal(int control, int sig);

}  // namespace paddock::process
