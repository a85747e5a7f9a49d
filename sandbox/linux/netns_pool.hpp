// Network namespaces for blocked mode, created once and reused. A fresh namespace per command
// costs ~0.5 ms median and multi-ms p99 under churn (teardown is asynchronous and globally
// serialised in the kernel); reusing one costs two setns() calls. Only a supervisor with
// CAP_SYS_ADMIN in the initial user namespace (root) can join a namespace it made: an
// unprivileged one keeps creating a namespace per command (CLONE_NEWNET).
//
// A namespace is leased to one command at a time and returned when the command is over. It is
// handed to the next command only once the kernel says no listener or UDP socket is in use in
// it (netns_sockets.hpp): the command's processes are gone by then, but the proxy listener we
// held there can outlive our close() inside an io_uring request, and a socket passed out of the
// sandbox can outlive anything. The sandbox cannot reconfigure the namespace: it is owned by
// our user namespace, not the sandbox's.
#pragma once

#include <mutex>
#include <vector>

namespace paddock::sandbox {

class NetnsLease {
 public:
  NetnsLease() = default;
  explicit NetnsLease(int fd) : fd_(fd) {}
  NetnsLease(NetnsLease&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  NetnsLease& operator=(NetnsLease&& other) noexcept;
  ~NetnsLease();
  int fd() const noexcept { return fd_; }
  // Back to the pool without the socket check (~50 µs of sock_diag): only for a lease no
  // process ever joined (a plan whose sandbox was not made from it).
  void return_unused() noexcept;

 private:
  int fd_ = -1;
};

// A namespace with only `lo`, up; an empty lease (fd -1) when pooling is not possible here.
NetnsLease lease_network_namespace();

// For the spawning thread: enter `netns_fd` (so a clone() inherits it) and come back.
// enter() returns false (errno set) when setns failed; leave() aborts the process if the
// thread cannot return to its own namespace, since the event loop's sockets would land there.
bool enter_network_namespace(int netns_fd) noexcept;
void leave_network_namespace() noexcept;

}  // namespace paddock::sandbox
