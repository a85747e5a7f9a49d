#include "sandbox/linux/netns_pool.hpp"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace paddock::sandbox {
namespace {

// Idle namespaces kept; past that a returned one is closed (and torn down by the kernel), so a
// burst of 1,000 commands does not pin 1,000 namespaces and fds for the life of the process.
constexpr std::size_t kMaxIdle = 64;

std::mutex g_mutex;
std::vector<int> g_free;                 // idle namespaces, ready
std::atomic<bool> g_unavailable{false};  // creating one failed once (not root): never retry

int thread_netns() {
  // The namespace the spawning thread belongs to, kept per thread (an embedder's thread may
  // live in a namespace of its own).
  thread_local int fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  return fd;
}

bool loopback_up() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, "lo", 3);
  bool ok = ::ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
  ok = ok && ::ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
  ::close(s);
  return ok;
}

// Made on the calling thread: unshare moves only this thread, which then goes back.
int create() {
  int home = thread_netns();
  if (home < 0) return -1;
  if (::unshare(CLONE_NEWNET) != 0) return -1;
  int fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && loopback_up();
  leave_network_namespace();
  if (!ok && fd >= 0) {
    ::close(fd);
    fd = -1;
  }
  return fd;
}

}  // namespace

NetnsLease& NetnsLease::operator=(NetnsLease&& other) noexcept {
  if (this != &other) {
    this->~NetnsLease();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

NetnsLease::~NetnsLease() {
  if (fd_ < 0) return;
  {
    std::lock_guard lock(g_mutex);
    if (g_free.size() < kMaxIdle) {
      g_free.push_back(fd_);
      fd_ = -1;
      return;
    }
  }
  ::close(fd_);
  fd_ = -1;
}

NetnsLease lease_network_namespace() {
  if (g_unavailable.load(std::memory_order_relaxed)) return NetnsLease();
  {
    std::lock_guard lock(g_mutex);
    if (!g_free.empty()) {
      int fd = g_free.back();
      g_free.pop_back();
      return NetnsLease(fd);
    }
  }
  int fd = create();
  if (fd < 0) g_unavailable.store(true, std::memory_order_relaxed);
  return NetnsLease(fd);
}

bool enter_network_namespace(int netns_fd) noexcept { return ::setns(netns_fd, CLONE_NEWNET) == 0; }

void leave_network_namespace() noexcept {
  if (::setns(thread_netns(), CLONE_NEWNET) != 0) {
    // Staying would put the event loop's next sockets (and the proxy's) in a sandbox's
    // namespace: nothing sane can continue from here.
    std::abort();
  }
}

}  // namespace paddock::sandbox
