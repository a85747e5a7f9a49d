// Whether a network namespace still has a socket in use, asked of the kernel (sock_diag):
// the pool's test before a namespace is handed to the next command. A closed descriptor is
// not enough: an io_uring operation of ours keeps the proxy's listener bound (LISTEN) until
// the kernel has dropped the request's file reference, which can come after we saw the
// operation's completion; and a descriptor passed out of the sandbox (SCM_RIGHTS over an
// allowed unix socket) can keep a socket in it for as long as its holder likes.
#pragma once

namespace paddock::sandbox {

enum class NetnsSockets {
  none,     // no TCP listener and no UDP socket (IPv4 or IPv6) is attached to a file: no port
            // is held against the next command (TIME_WAIT and other connections do not hold
            // one against SO_REUSEADDR, and lead only to the last command's dead processes)
  some,     // at least one is: not reusable yet
  unknown,  // the kernel could not tell (no sock_diag here): errno says why
};

// Asks over `diag`, a NETLINK_SOCK_DIAG socket made inside the namespace (the pool keeps one
// per namespace, made with it: netns_pool.cpp).
NetnsSockets sockets_in_use_via(int diag) noexcept;
// Enters `netns_fd` on the calling thread for one socket() and comes back (needs the rights
// to join it: root's namespaces, not those of an unprivileged pool).
NetnsSockets sockets_in_use(int netns_fd) noexcept;

}  // namespace paddock::sandbox
