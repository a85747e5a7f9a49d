#include "cli/stdin_relay.hpp"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <thread>

namespace paddock::cli {

int start_stdin_relay(int from) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  std::thread([from, to = fds[1]] {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(from, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      const char* p = buf;
      while (n > 0) {
        ssize_t w = ::write(to, p, static_cast<std::size_t>(n));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          ::close(to);
          return;
        }
        p += w;
        n -= w;
      }
    }
    ::close(to);
  }).detach();
  return fds[0];
}

}  // namespace paddock::cli
