#include "process/given_fd.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace paddock::process {
namespace {

constexpr long kPipefsMagic = 0x50495045;  // <linux/magic.h>: PIPEFS_MAGIC

// A socket a sandboxed command may have: connected, of the unix family, and one that cannot
// be pointed anywhere else (hostile review helper-47). A host socket keeps the host's network
// namespace inside the sandbox: an unconnected or datagram one (which connect() re-aims, also
// in the unix family's abstract names), a TCP one (connect(AF_UNSPEC) disconnects it, then it
// connects anywhere the host reaches), a listening, raw, packet or netlink one would all reach
// past the sandbox's network.
bool harmless_socket(int fd) noexcept {
  int domain = 0, type = 0, listening = 0;
  socklen_t len = sizeof domain;
  if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) return false;
  len = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) return false;
  len = sizeof listening;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening != 0) {
    return false;
  }
  if (domain != AF_UNIX || (type != SOCK_STREAM && type != SOCK_SEQPACKET)) return false;
  sockaddr_storage peer{};
  len = sizeof peer;
  return ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0;
}

}  // namespace

GivenFdKind classify_given_fd(int fd) noexcept {
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) return GivenFdKind::invalid;
  // An O_PATH descriptor is a name, not an open stream: through /proc/self/fd/N it reopens
  // the host's inode (a socket file's, a FIFO's) whatever the deny rules say.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags == -1 || (flags & O_PATH) != 0) return GivenFdKind::other;
  if (S_ISSOCK(st.st_mode)) {
    return harmless_socket(fd) ? GivenFdKind::pipe_or_socket : GivenFdKind::other;
  }
  if (S_ISFIFO(st.st_mode)) {
    // A named FIFO is an inode on a host file system; an anonymous pipe lives on pipefs.
    struct statfs fs;
    if (::fstatfs(fd, &fs) == 0 && fs.f_type == kPipefsMagic) return GivenFdKind::pipe_or_socket;
    return GivenFdKind::other;
  }
  if (S_ISCHR(st.st_mode)) {
    if (major(st.st_rdev) == 1 && minor(st.st_rdev) == 3) return GivenFdKind::dev_null;
    if (::isatty(fd)) return GivenFdKind::terminal;
  }
  return GivenFdKind::other;
}

std::string refusal_for_sandbox(GivenFdKind kind) {
  if (sandbox_may_have(kind)) return "";
  switch (kind) {
    case GivenFdKind::pipe_or_socket:
    case GivenFdKind::dev_null:
      return "";
    case GivenFdKind::terminal:
      return "a terminal cannot be given to a sandboxed command as it is (the command could "
             "change its mode through it); give a pipe and relay";
    case GivenFdKind::other:
      return "only a pipe or a connected unix socket can be given to a sandboxed command as it "
             "is (through a file's, directory's or device's descriptor it could change that host "
             "inode or read past the deny rules, and through another socket reach the host's "
             "network); give a pipe and relay";
    case GivenFdKind::invalid:
      return "not an open descriptor";
  }
  return "";
}

}  // namespace paddock::process
