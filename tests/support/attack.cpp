// Attempts one boundary crossing from inside a sandbox, for the attack suite. Prints
// "SUCCEEDED" and exits 0 if the attempt worked, or "DENIED <errno>" and exits 1 if it was
// refused (2: bad usage). Raw syscalls where a tool would hide the errno.
//   attack ptrace PID | kill PID | unix-connect PATH | abstract-connect NAME | tcp IP PORT
//          io_uring | tiocsti | mknod PATH | mount DIR | unshare-user | read PATH
//          write PATH | alloc MIB | euid | segv | dgram-send PATH | chmod PATH | fchmod-stdin
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

namespace {

int result(bool ok, int err) {
  if (ok) {
    std::printf("SUCCEEDED\n");
    return 0;
  }
  std::printf("DENIED %s (%s)\n", strerrorname_np(err) ? strerrorname_np(err) : "?",
              std::strerror(err));
  return 1;
}

int check(long rc) { return result(rc >= 0, errno); }

int connect_unix(const std::string& name, bool abstract) {
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (s < 0) return result(false, errno);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::size_t offset = abstract ? 1 : 0;
  std::memcpy(addr.sun_path + offset, name.data(),
              std::min(name.size(), sizeof(addr.sun_path) - 2));
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + name.size());
  return check(::connect(s, reinterpret_cast<sockaddr*>(&addr), len));
}

int connect_tcp(const char* ip, int port) {
  int family = std::strchr(ip, ':') ? AF_INET6 : AF_INET;
  int s = ::socket(family, SOCK_STREAM, 0);
  if (s < 0) return result(false, errno);
  timeval tv{2, 0};
  ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (family == AF_INET) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, ip, &a.sin_addr);
    return check(::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)));
  }
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET6, ip, &a.sin6_addr);
  return check(::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string what = argv[1];
  const char* arg = argc > 2 ? argv[2] : "";
  if (what == "ptrace") return check(::ptrace(PTRACE_ATTACH, std::atoi(arg), nullptr, nullptr));
  if (what == "kill") return check(::kill(std::atoi(arg), SIGKILL));
  if (what == "unix-connect") return connect_unix(arg, false);
  if (what == "abstract-connect") return connect_unix(arg, true);
  if (what == "tcp" && argc > 3) return connect_tcp(arg, std::atoi(argv[3]));
  if (what == "io_uring") {
    io_uring_params p{};
    return check(::syscall(SYS_io_uring_setup, 4, &p));
  }
  if (what == "tiocsti") {
    char c = 'x';
    return check(::ioctl(0, TIOCSTI, &c));
  }
  if (what == "mknod") return check(::mknod(arg, S_IFCHR | 0666, makedev(1, 3)));
  if (what == "mount") return check(::mount("none", arg, "tmpfs", 0, nullptr));
  if (what == "unshare-user") return check(::unshare(CLONE_NEWUSER));
  if (what == "read") {
    int fd = ::open(arg, O_RDONLY);
    if (fd < 0) return result(false, errno);
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) return result(false, errno);
    // An empty read hides the content as well as a refusal does; say which it was.
    if (n == 0) return result(false, ENODATA);
    std::fwrite(buf, 1, static_cast<std::size_t>(n), stdout);
    std::printf("\n");
    return result(true, 0);
  }
  if (what == "write") {
    int fd = ::open(arg, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) return result(false, errno);
    return check(::write(fd, "attack\n", 7));
  }
  if (what == "alloc") {
    std::size_t bytes = std::strtoull(arg, nullptr, 10) << 20;
    void* p = std::malloc(bytes);
    if (p == nullptr) return result(false, ENOMEM);
    std::memset(p, 1, bytes);
    return result(true, 0);
  }
  if (what == "dgram-send") {  // a datagram socketpair can address any socket path
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) != 0) return result(false, errno);
    sockaddr_un to{};
    to.sun_family = AF_UNIX;
    std::strncpy(to.sun_path, arg, sizeof(to.sun_path) - 1);
    return check(::sendto(pair[0], "hi", 2, 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)));
  }
  if (what == "chmod") return check(::chmod(arg, 0600));
  if (what == "fchmod-stdin") return check(::fchmod(0, 0600));
  if (what == "segv") {
    volatile int* null = nullptr;
    return *null;  // a real fault: the kernel's SIGSEGV kills even a namespace's init
  }
  if (what == "euid") {
    std::printf("uid=%d euid=%d\n", ::getuid(), ::geteuid());
    return 0;
  }
  return 2;
}
