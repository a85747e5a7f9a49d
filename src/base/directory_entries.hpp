// A directory's entries read straight with getdents64. glibc's fdopendir + readdir cost four
// more syscalls per directory (a dup, two fstats, two fcntls) than the read itself; the
// sandbox's plan and post-run audit list ~20 directories per command.
#pragma once

#include <dirent.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace paddock::base {

// Calls fn(const char* name, unsigned char d_type) for each entry of the open directory `fd`
// except "." and ".."; fn returns false to stop early. Reads from the fd's current offset and
// does not close it. Returns 0, or the errno of the failed getdents64.
template <class Fn>
int for_each_directory_entry(int fd, Fn&& fn) {
  alignas(8) char buf[8192];
  while (true) {
    const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    for (long off = 0; off < n;) {
      // The kernel's struct linux_dirent64: ino, off, reclen, type, then the name.
      const char* rec = buf + off;
      unsigned short reclen;
      std::memcpy(&reclen, rec + 16, sizeof reclen);
      const auto type = static_cast<unsigned char>(rec[18]);
      const char* name = rec + 19;
      off += reclen;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      if (!fn(name, type)) return 0;
    }
  }
}

}  // namespace paddock::base
