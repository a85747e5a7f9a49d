#include "sandbox/linux/path_identity.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "paddock/errors.hpp"
#include "sandbox/root_views.hpp"

namespace paddock::sandbox {
namespace {

// O_NOFOLLOW with O_PATH: a trailing symlink is opened as the link (a protected name that is
// itself a link gets pinned as a link). RESOLVE_NO_SYMLINKS: no symlink on the way either;
// the paths are canonical, so a symlink found there was put there after the check.
long open_no_symlinks(const char* path) {
  struct open_how how;
  std::memset(&how, 0, sizeof(how));
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return ::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

}  // namespace

PathIdentity capture_identity(const std::string& path) {
  // Below a writable root, from the root's descriptor (root_views.hpp): the object of the
  // tree the plan scanned, whatever was renamed above it meanwhile.
  auto [root, rest] = stable_beneath(path);
  long fd;
  if (root >= 0) {
    struct open_how how;
    std::memset(&how, 0, sizeof(how));
    how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH;
    const std::string below(rest.empty() ? std::string_view(".") : rest);
    fd = ::syscall(SYS_openat2, root, below.c_str(), &how, sizeof(how));
  } else {
    fd = open_no_symlinks(path.c_str());
  }
  if (fd < 0) {
    int err = errno;
    throw Error(errc::spawn_failed, path + ": changed while the sandbox was planned (" +
                                        (err == ELOOP ? std::string("a symlink appeared on the way")
                                                      : std::string(std::strerror(err))) +
                                        "); try again");
  }
  struct stat st;
  int rc = ::fstat(static_cast<int>(fd), &st);
  int err = errno;
  ::close(static_cast<int>(fd));
  if (rc != 0) throw Error(errc::spawn_failed, path + ": fstat: " + std::strerror(err));
  return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

int in_child_open_verified(const char* path, const PathIdentity& expected) {
  long fd = open_no_symlinks(path);
  if (fd < 0) return -1;
  if (expected.ino == 0) return static_cast<int>(fd);
  struct stat st;
  if (::syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH) != 0) {
    int saved = errno;
    ::syscall(SYS_close, fd);
    errno = saved;
    return -1;
  }
  if (static_cast<std::uint64_t>(st.st_dev) != expected.dev ||
      static_cast<std::uint64_t>(st.st_ino) != expected.ino) {
    ::syscall(SYS_close, fd);
    errno = ESTALE;
    return -1;
  }
  return static_cast<int>(fd);
}

const char* in_child_fd_path(int fd, char* buf) {
  static constexpr char kPrefix[] = "/proc/self/fd/";
  std::memcpy(buf, kPrefix, sizeof(kPrefix) - 1);
  char digits[12];
  int n = 0;
  unsigned v = static_cast<unsigned>(fd);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char* out = buf + sizeof(kPrefix) - 1;
  while (n > 0) *out++ = digits[--n];
  *out = '\0';
  return buf;
}

}  // namespace paddock::sandbox
