#include "manager/filtered_network.hpp"

#include <errno.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "paddock/errors.hpp"
#include "paddock/sandbox_policy.hpp"

namespace paddock::manager {

// The proxy URL's password: 128 random bits per command. Only the sandbox that got it in
// its environment can use its proxy, and a request that carries it is that command's.
std::string random_credential() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(errc::spawn_failed, std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  static const char* hex = "0123456789abcdef";
  std::string out = "paddock:";
  for (unsigned char b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

// What curl, git, pip, npm, cargo & co. read to find a proxy (srt sets the same). NO_PROXY keeps
// the sandbox's own loopback (a test server the command starts) and the private ranges off the
// proxy, which would refuse them anyway.
const char* const kProxyVariables[kProxyVariableCount] = {
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
    "http_proxy", "https_proxy", "all_proxy", "no_proxy"};

void add_proxy_environment(std::vector<std::string>& env, const std::string& credential) {
  const std::string where = credential + "@127.0.0.1:" + std::to_string(kSandboxProxyPort);
  const std::string http = "http://" + where;
  const std::string socks = "socks5h://" + where;
  const std::string no_proxy =
      "localhost,127.0.0.1,::1,*.local,.local,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,"
      "192.168.0.0/16";
  std::erase_if(env, [](const std::string& kv) {
    for (const char* name : kProxyVariables) {
      std::string_view n(name);
      if (kv.size() > n.size() && kv.compare(0, n.size(), n) == 0 && kv[n.size()] == '=') {
        return true;
      }
    }
    return false;
  });
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) {
    env.push_back(std::string(name) + "=" + http);
  }
  env.push_back("ALL_PROXY=" + socks);
  env.push_back("all_proxy=" + socks);
  env.push_back("NO_PROXY=" + no_proxy);
  env.push_back("no_proxy=" + no_proxy);
}

// The listener the child sent over the handoff socket, or -1. The child has exec'd (or
// failed) by the time clone returns, so the message is already there or never comes.
int receive_listener(int handoff_fd) {
  char byte;
  struct iovec iov = {&byte, 1};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  if (::recvmsg(handoff_fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1) return -1;
  for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cm), sizeof(int));
      return fd;
    }
  }
  return -1;
}

}  // namespace paddock::manager
