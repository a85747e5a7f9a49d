// Network namespaces for blocked and filtered mode, created once and reused. A fresh namespace
// per command costs ~0.5 ms median and multi-ms p99 under churn (teardown is asynchronous and
// globally serialised in the kernel); reusing one costs two setns() calls.
//
// Joining a network namespace takes CAP_SYS_ADMIN both in the user namespace that owns it and
// in the joiner's own. Root has both: its pool is made and joined on the spawning thread.
// An unprivileged supervisor has neither in the initial user namespace, so its pool lives in
// a user namespace of its own, made once (the pool's: our uid and gid are its root, mapped
// one to one; nothing runs in it). Its owner, we, hold every capability in it from outside;
// a process that joins it holds them inside, where it may then join a pooled namespace. The
// spawn does that in a short-lived child (spawn.cpp): join the pool's user namespace, then
// the network namespace, then clone the sandbox, whose user namespace is a child of the
// pool's (its ids map through it). So no command makes a namespace of its own, as root or not.
//
// A namespace is leased to one command at a time and returned when the command is over. It is
// handed to the next command only once the kernel says no listener or UDP socket is in use in
// it (netns_sockets.hpp): the command's processes are gone by then, but the proxy listener we
// held there can outlive our close() inside an io_uring request, and a socket passed out of the
// sandbox can outlive anything. The sandbox cannot reconfigure the namespace: it is owned by
// our user namespace, not the sandbox's.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace paddock::sandbox {

// A pooled namespace: its handle, and a sock_diag socket made inside it (a socket belongs to
// the namespace it was made in), so the pool asks about its sockets without entering it.
struct PooledNetns {
  int fd = -1;
  int diag = -1;
};

class NetnsLease {
 public:
  NetnsLease() = default;
  explicit NetnsLease(PooledNetns ns) : ns_(ns), pid_(::getpid()) {}
  NetnsLease(NetnsLease&& other) noexcept : ns_(other.ns_), pid_(other.pid_) { other.ns_ = {}; }
  NetnsLease& operator=(NetnsLease&& other) noexcept;
  ~NetnsLease();
  int fd() const noexcept { return ns_.fd; }
  // The user namespace the child must join before fd() (the pool's; -1: none, root joins
  // from its own). Not owned: it lives as long as the process.
  int user_namespace() const noexcept;
  // Back to the pool without the socket check (~50 µs of sock_diag): only for a lease no
  // process ever joined (a plan whose sandbox was not made from it).
  void return_unused() noexcept;

 private:
  PooledNetns ns_;
  pid_t pid_ = 0;  // the process that leased it (an embedder may fork)
};

// A namespace with only `lo`, up; an empty lease (fd -1) when pooling is not possible here.
NetnsLease lease_network_namespace();

// From now on every command makes its own namespace: a child could not join the pool's
// (spawn.cpp), so it must not be handed out again.
void stop_pooling_network_namespaces() noexcept;

// How many namespaces this process's pools have made (the bench counts them per command).
std::size_t network_namespaces_made() noexcept;

// For the spawning thread: enter `netns_fd` (so a clone() inherits it) and come back.
// enter() returns false (errno set) when setns failed; leave() aborts the process if the
// thread cannot return to its own namespace, since the event loop's sockets would land there.
bool enter_network_namespace(int netns_fd) noexcept;
void leave_network_namespace() noexcept;

}  // namespace paddock::sandbox
