#include "sandbox/linux/netns_sockets.hpp"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "sandbox/linux/netns_pool.hpp"

namespace paddock::sandbox {
namespace {

// A sock_diag socket belongs to the namespace it was made in; there is no other way to ask
// about another namespace's sockets.
int diag_socket_in(int netns_fd) noexcept {
  if (!enter_network_namespace(netns_fd)) return -1;
  int s = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  const int saved = errno;
  leave_network_namespace();
  errno = saved;
  return s;
}

// 1: some TCP listener or UDP socket of `family` is attached to a file; 0: none; -1: error
// (errno).
int any_attached(int diag, std::uint8_t family, std::uint8_t protocol) noexcept {
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } req{};
  req.header.nlmsg_len = sizeof(req);
  req.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  req.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  // The pool keeps a namespace's socket for its whole life: a reply left unread by an earlier
  // question that failed halfway must never be taken for this one's.
  static std::atomic<std::uint32_t> sequence{0};
  const std::uint32_t seq = sequence.fetch_add(1, std::memory_order_relaxed) + 1;
  req.header.nlmsg_seq = seq;
  req.request.sdiag_family = family;
  req.request.sdiag_protocol = protocol;
  // TCP: listeners only. They are what blocks the next child's bind of the proxy port, or
  // would take the next command's connections to a port of its own; connections of ours still
  // open there reach only dead peers. (Asking for every state also walks the kernel's global
  // table of established connections, ~1 ms a dump; the listeners cost ~50 µs.)
  req.request.idiag_states = protocol == IPPROTO_TCP ? 1U << TCP_LISTEN : ~0U;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(diag, &req, sizeof(req), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) !=
      static_cast<ssize_t>(sizeof(req))) {
    return -1;
  }
  alignas(nlmsghdr) unsigned char buf[16384];
  int found = 0;
  for (;;) {
    const ssize_t got = ::recv(diag, buf, sizeof(buf), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) errno = EIO;
      return -1;
    }
    std::size_t left = static_cast<std::size_t>(got);
    for (const unsigned char* p = buf; left >= sizeof(nlmsghdr);) {
      nlmsghdr h;
      std::memcpy(&h, p, sizeof(h));
      if (h.nlmsg_len < sizeof(nlmsghdr) || h.nlmsg_len > left) {
        errno = EPROTO;
        return -1;
      }
      if (h.nlmsg_seq != seq) {  // an earlier question's: skipped
        const std::size_t skip = NLMSG_ALIGN(h.nlmsg_len);
        if (skip >= left) break;
        p += skip;
        left -= skip;
        continue;
      }
      if (h.nlmsg_type == NLMSG_DONE) return found;
      if (h.nlmsg_type == NLMSG_ERROR) {
        nlmsgerr e{};
        if (h.nlmsg_len >= NLMSG_LENGTH(sizeof(e))) std::memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
        errno = e.error != 0 ? -e.error : EPROTO;
        return -1;
      }
      if (h.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
          h.nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
        inet_diag_msg m;
        std::memcpy(&m, p + NLMSG_HDRLEN, sizeof(m));
        // The socket's inode: 0 once no file refers to it (closed, TIME_WAIT, orphaned).
        if (m.idiag_inode != 0) found = 1;
      }
      const std::size_t step = NLMSG_ALIGN(h.nlmsg_len);
      if (step >= left) break;
      p += step;
      left -= step;
    }
  }
}

}  // namespace

NetnsSockets sockets_in_use_via(int diag) noexcept {
  NetnsSockets result = NetnsSockets::none;
  for (std::uint8_t family : {std::uint8_t{AF_INET}, std::uint8_t{AF_INET6}}) {
    for (std::uint8_t protocol : {std::uint8_t{IPPROTO_TCP}, std::uint8_t{IPPROTO_UDP}}) {
      const int r = any_attached(diag, family, protocol);
      // No udp_diag in this kernel (ENOENT): the proxy's listener, the socket that matters
      // to the next command, is TCP.
      if (r < 0 && protocol == IPPROTO_UDP && errno == ENOENT) continue;
      if (r < 0) return NetnsSockets::unknown;
      if (r > 0) result = NetnsSockets::some;
    }
    if (result != NetnsSockets::none) break;
  }
  return result;
}

NetnsSockets sockets_in_use(int netns_fd) noexcept {
  const int diag = diag_socket_in(netns_fd);
  if (diag < 0) return NetnsSockets::unknown;
  const NetnsSockets result = sockets_in_use_via(diag);
  const int saved = errno;
  ::close(diag);
  errno = saved;
  return result;
}

}  // namespace paddock::sandbox
