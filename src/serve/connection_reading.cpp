// Reading a unix peer's bytes (Connection::receive_more): through recvmsg, which asio's reads
// do not do, for what comes with them: the descriptors a helper's client gives its command
// (SCM_RIGHTS, RequestRules::given_descriptors) and who wrote each segment (SCM_CREDENTIALS,
// SO_PASSCRED on the listener), which decides whether the bytes are the client's at all.
#include <sys/socket.h>
#include <sys/stat.h>

#include <asio/bind_executor.hpp>
#include <cerrno>
#include <cstring>

#include "sandbox/change_set.hpp"
#include "serve/connection.hpp"
#include "serve/running_command.hpp"

namespace paddock::serve {
namespace {

// What a sandbox makes anew: a writer must share each with the client (sender_allowed).
constexpr const char* kWriterNamespaces[] = {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"};

}  // namespace

void Connection::note_peer_namespaces() {
  if (!peer_process_ || peer_process_->start_time == 0) return;
  const std::string base = "/proc/" + std::to_string(peer_process_->pid) + "/ns/";
  for (const char* ns : kWriterNamespaces) {
    struct stat st;
    if (::stat((base + ns).c_str(), &st) != 0) {
      peer_namespaces_.clear();
      return;
    }
    peer_namespaces_.emplace_back(st.st_dev, st.st_ino);
  }
}

// A helper's client sends its standard streams with its exec line (SCM_RIGHTS): read with
// recvmsg, which asio's reads do not do. More descriptors than a command has streams is not a
// client of ours. And the kernel says who wrote each segment (SO_PASSCRED on the listener; a
// stream read never joins two writers' bytes): the process that connected was checked when
// it did, but a connection handed on to a sandboxed command (its stdout) would let that
// command speak for it (hostile review helper-47: commands run with the helper's reach, their
// approvals answered by themselves).
void Connection::receive_more() {
  socket_.async_wait(
      asio::socket_base::wait_read,
      asio::bind_executor(strand_, [self = shared_from_this()](std::error_code ec) {
        if (ec || self->closed_) {
          self->reading_ = false;
          if (ec && !self->closed_) self->do_close("reading from the client: " + ec.message());
          return;
        }
        alignas(
            cmsghdr) char control[CMSG_SPACE(sizeof(ucred)) + CMSG_SPACE(sizeof(int) * kMaxGiven)];
        iovec iov{self->read_buffer_.data(), self->read_buffer_.size()};
        msghdr m{};
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = control;
        m.msg_controllen = sizeof control;
        const ssize_t n =
            ::recvmsg(self->socket_.native_handle(), &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        std::vector<UniqueFd> fds;  // closed unless kept below
        std::optional<ucred> sender;
        for (cmsghdr* c = n >= 0 ? CMSG_FIRSTHDR(&m) : nullptr; c != nullptr;
             c = CMSG_NXTHDR(&m, c)) {
          if (c->cmsg_level != SOL_SOCKET) continue;
          if (c->cmsg_type == SCM_RIGHTS) {
            const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (std::size_t i = 0; i < count; ++i) {
              int fd;
              std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
              fds.emplace_back(fd);
            }
          } else if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
            sender.emplace();
            std::memcpy(&*sender, CMSG_DATA(c), sizeof(ucred));
          }
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return self->receive_more();
        self->reading_ = false;
        if (n < 0) {
          return self->do_close("reading from the client: " + std::string(std::strerror(errno)));
        }
        if (n == 0) return self->do_close("the client closed the connection");
        // The writer's start time, read once for both checks (0: not to be read).
        const std::uint64_t started =
            sender && sender->pid > 0 ? sandbox::process_start_time(sender->pid) : 0;
        if (sender && self->shared_->rules.one_writer && !self->same_writer(*sender, started)) {
          self->shared_->metrics.connections_refused.fetch_add(1);
          return self->do_close(
              "another process than the one that wrote first wrote on the "
              "connection (pid " +
              std::to_string(sender->pid) +
              " as seen here): a copier's or a command's bytes are not the "
              "client's; its commands are stopped");
        }
        if (!sender || !self->sender_allowed(*sender, started)) {
          self->shared_->metrics.connections_refused.fetch_add(1);
          return self->do_close(
              "a process in other namespaces than the client's wrote on the connection (pid " +
              std::to_string(sender ? sender->pid : 0) +
              " as seen here): a connection handed into a sandbox; its commands are stopped");
        }
        if (!fds.empty() && !self->shared_->rules.given_descriptors) fds.clear();
        if ((m.msg_flags & MSG_CTRUNC) || self->received_fds_.size() + fds.size() > kMaxGiven) {
          self->shared_->metrics.protocol_errors.fetch_add(1);
          return self->do_close("more descriptors than a command has standard streams");
        }
        const std::uint64_t begin = self->received_bytes_;
        for (auto& fd : fds) {
          self->received_fds_.push_back(
              {begin, begin + static_cast<std::uint64_t>(n), std::move(fd)});
        }
        return self->on_read(static_cast<std::size_t>(n));
      }));
}

bool Connection::sender_allowed(const ucred& sender, std::uint64_t started) {
  // A client we cannot look at (in a pid namespace we cannot see into, or its /proc hidden
  // from us: hidepid, another uid) leaves its writers untold apart, as before this check.
  // The helper and sessions always can (same uid, same namespaces), and the helper's lines
  // are keyed besides (RequestRules::keyed_lines).
  if (peer_namespaces_.empty()) return true;
  if (sender.pid <= 0) return false;  // a writer in a pid namespace we cannot see into
  // The process that connected, still that one (its pid not reused since).
  if (sender.pid == peer_process_->pid && started == peer_process_->start_time) {
    return true;
  }
  // Another writer (a child the client forked, one it left the connection to, or a command
  // it handed the connection to): in the namespaces the client was in when it connected.
  const std::string base = "/proc/" + std::to_string(sender.pid) + "/ns/";
  for (std::size_t i = 0; i < peer_namespaces_.size(); ++i) {
    struct stat st;
    if (::stat((base + kWriterNamespaces[i]).c_str(), &st) != 0 ||
        st.st_dev != peer_namespaces_[i].first || st.st_ino != peer_namespaces_[i].second) {
      return false;
    }
  }
  return true;
}

bool Connection::same_writer(const ucred& sender, std::uint64_t start) {
  if (sender.pid <= 0 || start == 0) return false;  // cannot tell who it is
  if (!writer_) {
    writer_ = ExecOptions::ProcessRef{sender.pid, start};
    return true;
  }
  return writer_->pid == sender.pid && writer_->start_time == start;
}

std::vector<UniqueFd> Connection::take_given(std::size_t count) {
  std::vector<UniqueFd> out;
  while (out.size() < count && !received_fds_.empty() && received_fds_.front().begin < line_end_ &&
         received_fds_.front().end > line_begin_) {
    out.push_back(std::move(received_fds_.front().fd));
    received_fds_.pop_front();
  }
  return out;
}

}  // namespace paddock::serve
