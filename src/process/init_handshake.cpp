#include "process/init_handshake.hpp"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace paddock::process {

bool InitHandshake::open() {
  int fds[2];
  // Non-blocking: take() runs on the event loop and must never wait on the pipe.
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  read_.reset(fds[0]);
  write_.reset(fds[1]);
  return true;
}

InitOutcome InitHandshake::take() {
  InitOutcome out;
  if (!active()) return out;
  InitReport r{};
  ssize_t n;
  do {
    n = ::read(read_.get(), &r, sizeof r);
  } while (n < 0 && errno == EINTR);
  read_.reset();
  if (n != static_cast<ssize_t>(sizeof r)) return out;
  switch (r.kind) {
    case InitReportKind::command_status: {
      ExitStatus s;
      const int sig = r.value & 0x7f;
      if (sig == 0) {
        s.exit_code = (r.value >> 8) & 0xff;
      } else {
        s.signal = sig;
        s.exit_code = 128 + sig;
      }
      out.status = s;
      break;
    }
    case InitReportKind::exec_failed:
      out.exec_errno = r.value;
      break;
    case InitReportKind::fork_failed:
      out.failure =
          std::string("paddock-init could not start the command: fork: ") + std::strerror(r.value);
      break;
  }
  return out;
}

}  // namespace paddock::process
