// Raw syscalls glibc 2.36 does not wrap (or wraps in ways we cannot use after clone()),
// behind one small header so the numbers come from <sys/syscall.h> in one place.
#pragma once

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace paddock::sys {

inline int pidfd_send_signal(int pidfd, int sig) noexcept {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

inline int pidfd_open(pid_t pid) noexcept {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

inline int close_range(unsigned first, unsigned last) noexcept {
  return static_cast<int>(::syscall(SYS_close_range, first, last, 0));
}

}  // namespace paddock::sys
