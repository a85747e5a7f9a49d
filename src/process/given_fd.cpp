#include "process/given_fd.hpp"

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace paddock::process {
namespace {
constexpr long kPipefsMagic = 0x50495045;  // <linux/magic.h>: PIPEFS_MAGIC
}

GivenFdKind classify_given_fd(int fd) noexcept {
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) return GivenFdKind::invalid;
  if (S_ISSOCK(st.st_mode)) return GivenFdKind::pipe_or_socket;
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
      return "only a pipe or a socket can be given to a sandboxed command as it is (through a "
             "file's, directory's or device's descriptor it could change that host inode or read "
             "past the deny rules); give a pipe and relay";
    case GivenFdKind::invalid:
      return "not an open descriptor";
  }
  return "";
}

}  // namespace paddock::process
