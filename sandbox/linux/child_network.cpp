// Child side: the network steps (see child_steps.hpp).
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "sandbox/linux/child_steps.hpp"

namespace paddock::sandbox::child {

int bring_loopback_up(const Failure& f) {
  long s = ::syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return f.fail("socket for loopback", "lo");
  struct ifreq ifr;
  std::memset(&ifr, 0, sizeof(ifr));
  std::memcpy(ifr.ifr_name, "lo", 3);
  int err = 0;
  if (::syscall(SYS_ioctl, s, SIOCGIFFLAGS, &ifr) != 0) {
    err = f.fail("read loopback flags", "lo");
  } else {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    if (::syscall(SYS_ioctl, s, SIOCSIFFLAGS, &ifr) != 0) err = f.fail("bring loopback up", "lo");
  }
  ::syscall(SYS_close, s);
  return err;
}

// The proxy's listener, made here so that it lives in the sandbox's network namespace, then
// sent to the supervisor and closed: the command never holds it, so it cannot accept the
// connections meant for the proxy.
int hand_over_proxy_listener(const ChildSandbox& p, const Failure& f) {
  long s = ::syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return f.fail("socket for the proxy listener", nullptr);
  int err = 0;
  int one = 1;
  struct sockaddr_in addr;
  std::memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_port = htons(p.proxy_port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // SO_REUSEADDR: a reused network namespace may still hold the last command's connections
  // to the port in TIME_WAIT.
  if (::syscall(SYS_setsockopt, s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      ::syscall(SYS_bind, s, &addr, sizeof(addr)) != 0) {
    err = f.fail("bind the proxy listener", "127.0.0.1");
  } else if (::syscall(SYS_listen, s, 1024) != 0) {
    err = f.fail("listen on the proxy listener", nullptr);
  } else {
    char control[CMSG_SPACE(sizeof(int))];
    std::memset(control, 0, sizeof(control));
    char byte = 'L';
    struct iovec iov = {&byte, 1};
    struct msghdr msg;
    std::memset(&msg, 0, sizeof(msg));
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    struct cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    int fd = static_cast<int>(s);
    std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    if (::syscall(SYS_sendmsg, p.proxy_handoff_fd, &msg, MSG_NOSIGNAL) != 1) {
      err = f.fail("hand the proxy listener to the supervisor", nullptr);
    }
  }
  ::syscall(SYS_close, s);
  ::syscall(SYS_close, p.proxy_handoff_fd);
  return err;
}

}  // namespace paddock::sandbox::child
