#include "sandbox/linux/netns_pool.hpp"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "sandbox/linux/netns_sockets.hpp"

namespace paddock::sandbox {
namespace {

using clock = std::chrono::steady_clock;

// Idle namespaces kept (ready and draining together); past that a returned one is closed (and
// torn down by the kernel), so a burst of 1,000 commands does not pin 1,000 namespaces and fds
// for the life of the process.
constexpr std::size_t kMaxIdle = 64;
// A namespace handed back with a socket still in use waits this long for it to go (ours, held
// by an io_uring request, goes within microseconds); then it is given up, not reused.
constexpr auto kMaxDrain = std::chrono::seconds(2);
// Draining namespaces looked at again per lease that finds no ready one (a few setns and
// sock_diag round trips each, not an unbounded sweep on the spawning path).
constexpr std::size_t kRecheckPerLease = 4;

struct Draining {
  int fd;
  clock::time_point since;
};

std::mutex g_mutex;
std::vector<int> g_ready;                // idle, no socket in use in them
std::vector<Draining> g_draining;        // idle, a socket still in use in them when returned
std::atomic<bool> g_unavailable{false};  // cannot create or cannot check them: never pool

int thread_netns() {
  // The namespace the spawning thread belongs to, kept per thread (an embedder's thread may
  // live in a namespace of its own). Taken on the thread's first use of this file, before it
  // enters any other namespace (enter_network_namespace makes sure of that).
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

std::size_t idle_count() { return g_ready.size() + g_draining.size(); }

// A returned namespace goes back only once nothing of the last command's remains in it: a
// socket still attached to a file is ours not yet released (the proxy listener: the next
// child's bind of the proxy port would fail) or one a sandbox passed out.
void give_back(int fd) {
  const NetnsSockets state = sockets_in_use(fd);
  if (state == NetnsSockets::unknown) {
    // A namespace that cannot be checked is not reused. Without sock_diag in this kernel none
    // can be: every command gets a fresh one from now on (CLONE_NEWNET). Out of descriptors
    // or memory is this moment's problem only.
    const int err = errno;
    if (err != EMFILE && err != ENFILE && err != ENOMEM && err != ENOBUFS && err != EINTR) {
      g_unavailable.store(true, std::memory_order_relaxed);
    }
    ::close(fd);
    return;
  }
  {
    std::lock_guard lock(g_mutex);
    if (idle_count() < kMaxIdle) {
      if (state == NetnsSockets::none) {
        g_ready.push_back(fd);
      } else {
        g_draining.push_back({fd, clock::now()});
      }
      return;
    }
  }
  ::close(fd);
}

// A draining namespace whose sockets are gone, or -1; gives up on those past kMaxDrain.
int take_drained() {
  std::vector<Draining> batch;
  {
    std::lock_guard lock(g_mutex);
    const std::size_t n = std::min(kRecheckPerLease, g_draining.size());
    batch.assign(g_draining.begin(), g_draining.begin() + static_cast<std::ptrdiff_t>(n));
    g_draining.erase(g_draining.begin(), g_draining.begin() + static_cast<std::ptrdiff_t>(n));
  }
  int found = -1;
  std::vector<Draining> keep;
  for (const Draining& d : batch) {
    if (found < 0 && sockets_in_use(d.fd) == NetnsSockets::none) {
      found = d.fd;
    } else if (clock::now() - d.since > kMaxDrain) {
      ::close(d.fd);  // its socket outlives any operation of ours: someone else holds it
    } else {
      keep.push_back(d);
    }
  }
  if (!keep.empty()) {
    std::lock_guard lock(g_mutex);
    g_draining.insert(g_draining.end(), keep.begin(), keep.end());  // oldest last: rotates
  }
  return found;
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

void NetnsLease::return_unused() noexcept {
  if (fd_ < 0) return;
  {
    std::lock_guard lock(g_mutex);
    if (idle_count() < kMaxIdle) {
      g_ready.push_back(fd_);
      fd_ = -1;
      return;
    }
  }
  ::close(fd_);
  fd_ = -1;
}

NetnsLease::~NetnsLease() {
  if (fd_ < 0) return;
  give_back(fd_);
  fd_ = -1;
}

NetnsLease lease_network_namespace() {
  if (g_unavailable.load(std::memory_order_relaxed)) return NetnsLease();
  {
    std::lock_guard lock(g_mutex);
    if (!g_ready.empty()) {
      int fd = g_ready.back();
      g_ready.pop_back();
      return NetnsLease(fd);
    }
  }
  if (int fd = take_drained(); fd >= 0) return NetnsLease(fd);
  int fd = create();
  if (fd < 0) g_unavailable.store(true, std::memory_order_relaxed);
  return NetnsLease(fd);
}

bool enter_network_namespace(int netns_fd) noexcept {
  // The way back is taken first: opened after the setns it would be the namespace we entered,
  // and leave() would keep the thread (and every socket it makes later, the proxy's upstream
  // connections among them) in a sandbox's namespace.
  if (thread_netns() < 0) return false;
  return ::setns(netns_fd, CLONE_NEWNET) == 0;
}

void leave_network_namespace() noexcept {
  if (::setns(thread_netns(), CLONE_NEWNET) != 0) {
    // Staying would put the event loop's next sockets (and the proxy's) in a sandbox's
    // namespace: nothing sane can continue from here.
    std::abort();
  }
}

}  // namespace paddock::sandbox
