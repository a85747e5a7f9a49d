#include "process/init_handshake.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace paddock::process {

bool InitHandshake::open() {
  int fds[2];
  // Non-blocking: take() runs on the event loop and must never wait on the pipe.
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  read_.reset(fds[0]);
  write_.reset(fds[1]);
  return true;
}

InitHandshake::Progress InitHandshake::poll() {
  while (progress_ == Progress::pending && read_.get() >= 0) {
    const std::size_t room = sizeof records_ - count_ * sizeof(InitReport);
    if (room == 0) {
      progress_ = Progress::closed;  // more than the init ever writes: not ours to trust
      break;
    }
    const ssize_t n = ::read(read_.get(), &records_[count_], room);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;  // EAGAIN: nothing more yet
    if (n == 0 || n % static_cast<ssize_t>(sizeof(InitReport)) != 0) {
      progress_ = Progress::closed;
      break;
    }
    for (ssize_t i = 0; i < n / static_cast<ssize_t>(sizeof(InitReport)); ++i) {
      const InitReportKind kind = records_[count_++].kind;
      if (kind == InitReportKind::command_status || kind == InitReportKind::fork_failed) {
        progress_ = Progress::reported;
      }
    }
  }
  return progress_;
}

InitOutcome InitHandshake::take() {
  InitOutcome out;
  if (!active()) return out;
  poll();  // the init's records are all in the pipe by now (it reported or exited)
  read_.reset();
  for (std::size_t i = 0; i < count_; ++i) take(records_[i], out);
  return out;
}

void InitHandshake::take(const InitReport& r, InitOutcome& out) {
  switch (r.kind) {
    case InitReportKind::command_status:
    case InitReportKind::command_status_unsettled: {
      ExitStatus s;
      const int sig = r.value & 0x7f;
      if (sig == 0) {
        s.exit_code = (r.value >> 8) & 0xff;
      } else {
        s.signal = sig;
        s.exit_code = 128 + sig;
      }
      if (out.exec_errno == 0) out.status = s;  // an execve failure says more than its 127
      break;
    }
    case InitReportKind::exec_failed:
      out.exec_errno = r.value;
      break;
    case InitReportKind::fork_failed:
      out.failure =
          std::string("paddock-init could not start the command: fork: ") + std::strerror(r.value);
      break;
    case InitReportKind::mounts_dropped:
      out.mounts_dropped = r.value > 0 ? r.value : 1;
      break;
    case InitReportKind::tmp_discarded_entries:
      out.tmp_entries = static_cast<std::uint32_t>(r.value);
      break;
    case InitReportKind::tmp_discarded_bytes_low:
      out.tmp_bytes |= static_cast<std::uint32_t>(r.value) & 0x7fffffffU;
      break;
    case InitReportKind::tmp_discarded_bytes_high:
      out.tmp_bytes |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(r.value) & 0x7fffffffU)
                       << 31;
      break;
    case InitReportKind::tmp_tally_bounded:
      out.tmp_bounded = true;
      break;
  }
}

bool send_init_command(int control, const char* program, char* const* argv, char* const* envp,
                       const int streams[3], int command_report) {
  InitCommand header{kInitCommandMagic, 0, 0, 0, 0};
  std::string strings;
  auto add = [&](const char* s) {
    strings.append(s);
    strings.push_back('\0');
    return strings.size() <= kInitCommandMaxSize;
  };
  bool fits = add(program);
  for (char* const* a = argv; fits && *a != nullptr; ++a, ++header.argc) fits = add(*a);
  for (char* const* e = envp; fits && *e != nullptr; ++e, ++header.envc) fits = add(*e);
  if (!fits || header.argc == 0) {
    errno = E2BIG;
    return false;
  }
  header.size = static_cast<std::uint32_t>(strings.size());

  int fds[4];
  unsigned count = 0;
  for (unsigned i = 0; i < 3; ++i) {
    if (streams[i] < 0) continue;
    header.streams |= 1U << i;
    fds[count++] = streams[i];
  }
  if (command_report >= 0) {
    header.streams |= kInitSessionCommand;
    fds[count++] = command_report;
  }
  alignas(struct cmsghdr) char control_bytes[CMSG_SPACE(sizeof fds)] = {};
  struct iovec iov[2] = {{&header, sizeof header}, {strings.data(), strings.size()}};
  struct msghdr msg {};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  if (count > 0) {
    msg.msg_control = control_bytes;
    msg.msg_controllen = CMSG_SPACE(count * sizeof(int));
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(count * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds, count * sizeof(int));
  }
  ssize_t n;
  do {
    n = ::sendmsg(control, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return false;
  if (static_cast<std::size_t>(n) != sizeof header + strings.size()) {
    errno = EAGAIN;  // a partial command: the caller discards this sandbox
    return false;
  }
  return true;
}

bool send_init_signal(int control, int sig) {
  const InitCommand header{kInitSignalMagic, static_cast<std::uint32_t>(sig), 0, 0, 0};
  ssize_t n;
  do {
    n = ::send(control, &header, sizeof header, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof header);
}

}  // namespace paddock::process
