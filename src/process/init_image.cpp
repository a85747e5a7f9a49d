#include "process/init_image.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>

// The linked-in executable: PADDOCK_INIT_BINARY is the built paddock_init (src/CMakeLists.txt),
// included byte for byte by the assembler.
asm(".section .rodata\n"
    ".balign 16\n"
    ".global paddock_init_image_begin\n"
    "paddock_init_image_begin:\n"
    ".incbin \"" PADDOCK_INIT_BINARY
    "\"\n"
    ".global paddock_init_image_end\n"
    "paddock_init_image_end:\n"
    ".previous\n");
extern "C" const unsigned char paddock_init_image_begin[];
extern "C" const unsigned char paddock_init_image_end[];

namespace paddock::process {
namespace {

constexpr int kSealExec = 0x0020;  // F_SEAL_EXEC, <linux/fcntl.h> of Linux 6.3

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U  // Linux 6.3: say explicitly that this memfd is executable
#endif

int make_image() {
  // MFD_EXEC where the kernel knows it (otherwise EINVAL: older kernels exec any memfd).
  int fd = ::memfd_create("paddock-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (fd < 0 && errno == EINVAL)
    fd = ::memfd_create("paddock-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  const unsigned char* p = paddock_init_image_begin;
  while (p < paddock_init_image_end) {
    ssize_t n = ::write(fd, p, static_cast<std::size_t>(paddock_init_image_end - p));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      errno = err;
      return -1;
    }
    p += n;
  }
  // F_SEAL_EXEC (Linux 6.3): nobody may chmod it either (the mode is shared by every sandbox
  // of this process). Older kernels refuse the unknown seal: their init is protected by being
  // non-dumpable alone (init_main.cpp), which keeps /proc/1/exe out of a command's reach.
  if (::fcntl(fd, F_ADD_SEALS, kSealExec) != 0 && errno != EINVAL) {
    int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  int err = errno;
  ::close(fd);
  errno = err;
  return high;
}

}  // namespace

int init_image_fd() {
  static const int fd = make_image();
  static const int err = fd < 0 ? errno : 0;
  if (fd < 0) errno = err;
  return fd;
}

}  // namespace paddock::process
