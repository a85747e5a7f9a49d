#include "cli/run_streams.hpp"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "cli/stdin_relay.hpp"
#include "cli/terminal.hpp"
#include "paddock/errors.hpp"
#include "process/given_fd.hpp"

namespace paddock::cli {
namespace {

// Our stdout and stderr are one open file (`> log 2>&1`, a terminal opened once): then the
// command's two streams go down one pipe, in the order it wrote them. kcmp may be missing
// (no CONFIG_KCMP, a seccomp filter): then two pipes, as in process.
bool one_open_file(int a, int b) {
  const pid_t me = ::getpid();
  return ::syscall(SYS_kcmp, me, me, KCMP_FILE, a, b) == 0;
}

}  // namespace

bool a_stream_reaches_a_daemon() {
  struct stat ours;
  if (::stat("/proc/self/exe", &ours) != 0) return false;
  for (int fd = 0; fd <= 2; ++fd) {
    int domain = 0;
    socklen_t len = sizeof domain;
    if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX) {
      continue;
    }
    ucred peer{};
    len = sizeof peer;
    struct stat theirs;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.pid <= 0 ||
        peer.pid == ::getpid() ||
        ::stat(("/proc/" + std::to_string(peer.pid) + "/exe").c_str(), &theirs) != 0 ||
        theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino) {
      continue;
    }
    say(std::string(code_string(errc::config_invalid)) + ": " +
        (fd == 0   ? "stdin"
         : fd == 1 ? "stdout"
                   : "stderr") +
        " is a connection to a paddock daemon (pid " + std::to_string(peer.pid) +
        "): what the command writes there would be read as that daemon's client's lines; give "
        "the command a pipe");
    return true;
  }
  return false;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool valid_stdin_mode(const RunArgs& args) {
  if (args.stdin_mode == "auto" || args.stdin_mode == "inherit" || args.stdin_mode == "none") {
    return true;
  }
  say("--stdin " + args.stdin_mode + ": expected auto, inherit or none (see paddock run --help)");
  return false;
}

bool choose_streams(const RunArgs& args, ExecOptions& options, UniqueFd& relayed_stdin) {
  using process::GivenFdKind;
  const auto stdin_kind = process::classify_given_fd(STDIN_FILENO);
  if (args.stdin_mode == "auto" && stdin_kind == GivenFdKind::terminal) {
    spdlog::info("stdin is a terminal: the command gets /dev/null (--stdin inherit passes it)");
  }
  if (args.stdin_mode != "none" && stdin_kind != GivenFdKind::invalid &&
      (args.stdin_mode == "inherit" || stdin_kind != GivenFdKind::terminal)) {
    if (process::sandbox_may_have(stdin_kind)) {
      options.stdin_fd = STDIN_FILENO;
    } else {
      relayed_stdin.reset(start_stdin_relay(STDIN_FILENO));
      if (relayed_stdin.get() < 0) {
        say(std::string("stdin: pipe: ") + std::strerror(errno));
        return false;
      }
      options.stdin_fd = relayed_stdin.get();
    }
  }
  if (args.json || args.max_output) return true;
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    if (!process::sandbox_may_have(process::classify_given_fd(fd))) continue;
    (fd == STDOUT_FILENO ? options.stdout_fd : options.stderr_fd) = fd;
  }
  return true;
}

bool OutputCopy::write(std::string_view chunk) {
  if (write_all(to_, chunk)) return true;
  if (errno == EPIPE) return false;
  if (!failed_) {
    failed_ = true;
    say(std::string("writing the command's ") + (to_ == STDOUT_FILENO ? "stdout" : "stderr") +
        " failed: " + std::strerror(errno) + "; what it writes from here on is lost");
  }
  return true;
}

std::optional<HelperStreams> helper_streams(const RunArgs& args) {
  ExecOptions chosen;
  UniqueFd relayed;
  if (!choose_streams(args, chosen, relayed)) return std::nullopt;
  HelperStreams s;
  if (chosen.stdin_fd >= 0) {
    s.names.emplace_back("stdin");
    s.fds.push_back(chosen.stdin_fd);
    if (relayed.get() >= 0) s.ours.push_back(std::move(relayed));
  }
  const bool captured = args.json || args.max_output;  // the helper sends the bytes back
  int stdout_pipe = -1;
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    int given = fd == STDOUT_FILENO ? chosen.stdout_fd : chosen.stderr_fd;
    if (given < 0 && !captured && process::classify_given_fd(fd) != process::GivenFdKind::invalid) {
      if (fd == STDERR_FILENO && stdout_pipe >= 0 && one_open_file(STDOUT_FILENO, fd)) {
        given = stdout_pipe;
      } else {
        int p[2];
        if (::pipe2(p, O_CLOEXEC) != 0) {
          say(std::string("pipe: ") + std::strerror(errno));
          return std::nullopt;
        }
        s.ours.emplace_back(p[1]);
        s.copies.push_back({UniqueFd(p[0]), OutputCopy(fd)});
        given = p[1];
        if (fd == STDOUT_FILENO) stdout_pipe = p[1];
      }
    }
    if (given < 0) continue;
    s.names.emplace_back(fd == STDOUT_FILENO ? "stdout" : "stderr");
    s.fds.push_back(given);
  }
  return s;
}

ssize_t send_with_descriptors(int socket, std::string_view line, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(line.data()), line.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 3)] = {};
  if (!fds.empty()) {
    if (fds.size() > 3) {
      errno = EINVAL;
      return -1;
    }
    m.msg_control = control;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    const ssize_t n = ::sendmsg(socket, &m, MSG_NOSIGNAL);
    if (n >= 0 || errno != EINTR) return n;
  }
}

}  // namespace paddock::cli
