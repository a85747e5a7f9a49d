#include "sandbox/small_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/root_views.hpp"

namespace paddock::sandbox {

bool read_small_file(const std::string& path, std::size_t max, std::string& out, bool single_link) {
  const int fd = ::open(stable_path(path).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (!single_link || st.st_nlink == 1) &&
            static_cast<std::size_t>(st.st_size) <= max;
  char buf[8192];
  while (ok) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) ok = false;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > max) ok = false;
  }
  ::close(fd);
  return ok;
}

}  // namespace paddock::sandbox
