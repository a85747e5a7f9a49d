// Attempts one boundary crossing from inside a sandbox, for the attack suite. Prints
// "SUCCEEDED" and exits 0 if the attempt worked, or "DENIED <errno>" and exits 1 if it was
// refused (2: bad usage). Raw syscalls where a tool would hide the errno.
//   attack ptrace PID | kill PID | unix-connect PATH | abstract-connect NAME | tcp IP PORT
//          io_uring | tiocsti | mknod PATH | mount DIR | unshare-user | read PATH
//          write PATH | alloc MIB | euid | segv | dgram-send PATH [HOW] | chmod PATH
//          fchmod-stdin | setid HOW PATH | setxattr NAME PATH
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
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
#include <sys/xattr.h>
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

// Sends a datagram to the socket at `path` from a unix socket made the way `how` says: the
// kernel turns a SOCK_RAW pair into a datagram one; stream and seqpacket pairs are connected
// (a stream pair refuses an address, a seqpacket pair ignores it and writes to its peer).
int dgram_send(const std::string& how, const char* path) {
  int pair[2] = {-1, -1};
  long rc = -1;
  errno = 0;
  if (how == "socketpair-dgram") rc = ::socketpair(AF_UNIX, SOCK_DGRAM, 0, pair);
  if (how == "socketpair-raw") rc = ::socketpair(AF_UNIX, SOCK_RAW, 0, pair);
  if (how == "socketpair-raw-flags")
    rc = ::socketpair(AF_UNIX, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair);
  if (how == "socketpair-raw-high")  // the kernel reads an int: the high half is ignored
    rc = ::syscall(SYS_socketpair, AF_UNIX, 0x100000000UL | SOCK_RAW, 0, pair);
  if (how == "socketpair-type-6")  // no such type for unix sockets: refused either way
    rc = ::socketpair(AF_UNIX, 6, 0, pair);
  if (how == "socketpair-stream") rc = ::socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
  if (how == "socketpair-seqpacket") rc = ::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair);
  if (how == "socket-dgram") rc = pair[0] = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  if (how == "socket-raw") rc = pair[0] = ::socket(AF_UNIX, SOCK_RAW, 0);
  if (rc < 0 && errno == 0) return 2;  // no such spelling
  if (rc < 0) return result(false, errno);
  sockaddr_un to{};
  to.sun_family = AF_UNIX;
  std::strncpy(to.sun_path, path, sizeof(to.sun_path) - 1);
  return check(::sendto(pair[0], "hi", 2, 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)));
}

// Tries to leave a setuid or setgid file at `path` the way `how` says. The chmod spellings
// need `path` to exist; the others create it.
int set_id(const std::string& how, const char* path) {
  std::string dir = path;
  dir = dir.substr(0, dir.rfind('/'));
  const char* name = std::strrchr(path, '/') + 1;
  int dfd = ::open(dir.c_str(), O_DIRECTORY | O_PATH);
  ::umask(022);
  if (how == "chmod-suid") return check(::chmod(path, 04755));
  if (how == "chmod-sgid") return check(::chmod(path, 02755));
  if (how == "chmod-high") return check(::syscall(SYS_chmod, path, 0xffff000000000000UL | 04755));
  if (how == "fchmod") return check(::fchmod(::open(path, O_RDONLY), 04755));
  if (how == "fchmodat") return check(::fchmodat(dfd, name, 06755, 0));
  if (how == "fchmodat2") return check(::syscall(452, dfd, name, 04755, 0));
  if (how == "open-creat") return check(::open(path, O_CREAT | O_WRONLY, 04755));
  if (how == "openat-creat") return check(::openat(dfd, name, O_CREAT | O_WRONLY, 02755));
  if (how == "creat") return check(::creat(path, 04755));
  if (how == "mknod") return check(::mknod(path, S_IFREG | 04755, 0));
  if (how == "mknodat") return check(::mknodat(dfd, name, S_IFREG | 02755, 0));
  if (how == "openat2") {
    open_how o{};
    o.flags = O_CREAT | O_WRONLY;
    o.mode = 04755;
    return check(::syscall(SYS_openat2, dfd, name, &o, sizeof o));
  }
  if (how == "tmpfile-link") {  // a nameless setuid file, then given its name
    int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY, 04755);
    if (fd < 0) return result(false, errno);
    std::string proc = "/proc/self/fd/" + std::to_string(fd);
    return check(::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path, AT_SYMLINK_FOLLOW));
  }
  return 2;
}

// File capabilities: a v2 security.capability granting CAP_SETUID, effective on exec.
int set_xattr(const std::string& name, const char* path) {
  if (name != "security.capability") return check(::setxattr(path, name.c_str(), "x", 1, 0));
  vfs_cap_data cap{};
  cap.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
  cap.data[0].permitted = 1u << CAP_SETUID;
  return check(::setxattr(path, name.c_str(), &cap, XATTR_CAPS_SZ_2, 0));
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
  if (what == "dgram-send") return dgram_send(argc > 3 ? argv[3] : "socketpair-dgram", arg);
  if (what == "setid" && argc > 3) return set_id(arg, argv[3]);
  if (what == "setxattr" && argc > 3) return set_xattr(arg, argv[3]);
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
