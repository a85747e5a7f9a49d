#include "sandbox/small_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/root_views.hpp"

namespace paddock::sandbox {

bool read_small_file(const std::string& path, std::size_t max, std::string& out, bool single_link) {
  const int fd = ::open(stable_path(path).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (!single_link || st.st_nlink == 1) &&
            static_cast<std::size_t>(st.st_size) <= max;
  ok = ok && read_whole(fd, max, out) == 0;
  ::close(fd);
  return ok;
}

int read_whole(int fd, std::size_t max, std::string& out) {
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > max) return EFBIG;
  }
}

}  // namespace paddock::sandbox
