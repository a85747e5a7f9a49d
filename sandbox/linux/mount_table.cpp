#include "sandbox/linux/mount_table.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace paddock::sandbox {

bool puts_a_mount(MountStep step) {
  switch (step) {
    case MountStep::tmpfs:
    case MountStep::overlay:
    case MountStep::proc:
    case MountStep::devpts:
    case MountStep::attach_clone:
    case MountStep::bind_readonly:
    case MountStep::pin:
    case MountStep::cover_file:
      return true;
    default:
      return false;  // no new mount (a copy detached for later, attributes, files in our tmpfs)
  }
}

// Where a plan's steps put a mount, one entry per mount, sorted.
std::vector<std::string> planned_mount_points(const ChildSandbox& child) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < child.mount_count; ++i) {
    if (puts_a_mount(child.mounts[i].step)) out.emplace_back(child.mounts[i].path);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Whether every mount point in `expected` (sorted) is in the mount table `fd` (an open
// /proc/PID/mountinfo, read from its start), as often as expected. False also when the
// table cannot be read.
bool mounts_intact(int fd, const std::vector<std::string>& expected) {
  if (fd < 0 || ::lseek(fd, 0, SEEK_SET) != 0) return false;
  std::string text;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  // "ID PARENT MAJ:MIN ROOT MOUNT_POINT ...": the fifth field, octal escapes (\040) undone.
  std::vector<std::string> present;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    std::size_t field = at;
    for (int skip = 0; skip < 4 && field < eol; ++skip) field = text.find(' ', field) + 1;
    const std::size_t end = std::min(text.find(' ', field), eol);
    std::string point;
    for (std::size_t i = field; i < end; ++i) {
      if (text[i] == '\\' && i + 3 < end) {
        point.push_back(static_cast<char>(((text[i + 1] - '0') << 6) | ((text[i + 2] - '0') << 3) |
                                          (text[i + 3] - '0')));
        i += 3;
      } else {
        point.push_back(text[i]);
      }
    }
    present.push_back(std::move(point));
    at = eol + 1;
  }
  std::sort(present.begin(), present.end());
  return std::includes(present.begin(), present.end(), expected.begin(), expected.end());
}

UniqueFd mount_points_memfd(const std::vector<std::string>& points) {
  std::string text;
  for (const auto& p : points) text.append(p).push_back('\0');
  // Not executable, sealed: where vm.memfd_noexec=2 a memfd must say so (Linux 6.3+; older
  // kernels do not know the flag).
  constexpr unsigned kNoexecSeal = 0x0008U;  // MFD_NOEXEC_SEAL
  UniqueFd fd(
      ::memfd_create("paddock-mount-points", MFD_CLOEXEC | MFD_ALLOW_SEALING | kNoexecSeal));
  if (fd.get() < 0 && errno == EINVAL) {
    fd.reset(::memfd_create("paddock-mount-points", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  }
  if (fd.get() < 0) return fd;
  for (std::size_t at = 0; at < text.size();) {
    const ssize_t n = ::write(fd.get(), text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return UniqueFd();
    at += static_cast<std::size_t>(n);
  }
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) !=
      0) {
    return UniqueFd();
  }
  return fd;
}

}  // namespace paddock::sandbox
