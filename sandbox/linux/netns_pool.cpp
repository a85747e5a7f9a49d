#include "sandbox/linux/netns_pool.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>

#include "base/memory_sharing_child.hpp"
#include "sandbox/linux/child_steps.hpp"
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
  PooledNetns ns;
  clock::time_point since;
};

std::mutex g_mutex;
std::vector<PooledNetns> g_ready;        // idle, no socket in use in them
std::vector<Draining> g_draining;        // idle, a socket still in use in them when returned
std::atomic<bool> g_unavailable{false};  // cannot create or cannot check them: never pool
std::atomic<std::size_t> g_made{0};

// How this process makes its namespaces, decided by the first that is made.
enum class Maker { undecided, thread, user_namespace };
std::mutex g_maker_mutex;
Maker g_maker = Maker::undecided;  // under g_maker_mutex, then never changes again
std::atomic<int> g_userns{-1};     // Maker::user_namespace: the pool's user namespace

int thread_netns() {
  // The namespace the spawning thread belongs to, kept per thread (an embedder's thread may
  // live in a namespace of its own). Taken on the thread's first use of this file, before it
  // enters any other namespace (enter_network_namespace makes sure of that).
  thread_local int fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  return fd;
}

// Raw system calls only: also run by the short-lived children below, on our memory.
bool loopback_up() {
  const long s = ::syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  ifreq ifr{};
  __builtin_memcpy(ifr.ifr_name, "lo", 3);
  bool ok = ::syscall(SYS_ioctl, s, SIOCGIFFLAGS, &ifr) == 0;
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
  ok = ok && ::syscall(SYS_ioctl, s, SIOCSIFFLAGS, &ifr) == 0;
  ::syscall(SYS_close, s);
  return ok;
}

// The namespace's sock_diag socket, kept as long as the namespace: bound to a random port id
// (the kernel would give it our pid, which /proc/net/netlink shows to every command in the
// namespace) and connected to the kernel, so it takes no one else's messages. -1 on failure.
int diag_socket() {
  const long s = ::syscall(SYS_socket, AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (s < 0) return -1;
  sockaddr_nl self{};
  self.nl_family = AF_NETLINK;
  bool bound = false;
  for (int attempt = 0; attempt < 16 && !bound; ++attempt) {
    std::uint32_t id = 0;
    if (::syscall(SYS_getrandom, &id, sizeof id, 0) != static_cast<long>(sizeof id)) break;
    self.nl_pid = id | 0x80000000U;  // where the kernel's own picks go when a pid is taken
    bound = ::syscall(SYS_bind, s, &self, sizeof self) == 0;
    if (!bound && errno != EADDRINUSE) break;
  }
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (!bound || ::syscall(SYS_connect, s, &kernel, sizeof kernel) != 0) {
    const int err = errno;
    ::syscall(SYS_close, s);
    errno = err != 0 ? err : EADDRINUSE;
    return -1;
  }
  return static_cast<int>(s);
}

// Inside the namespace just made: its handle, `lo` up, and its sock_diag socket.
PooledNetns take_current(int& err) {
  PooledNetns ns;
  ns.fd = static_cast<int>(
      ::syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  if (ns.fd >= 0 && loopback_up()) ns.diag = diag_socket();
  if (ns.diag < 0) {
    err = errno;
    if (ns.fd >= 0) ::syscall(SYS_close, ns.fd);
    ns.fd = -1;
  }
  return ns;
}

// Root: made on the calling thread; unshare moves only this thread, which then goes back.
PooledNetns create_on_thread(int& err) {
  if (thread_netns() < 0 || ::unshare(CLONE_NEWNET) != 0) {
    err = errno;
    return {};
  }
  PooledNetns ns = take_current(err);
  leave_network_namespace();
  return ns;
}

// The short-lived children of an unprivileged pool: each shares our memory and descriptor
// table (CLONE_VM | CLONE_VFORK | CLONE_FILES: what it opens is ours) while we wait, and runs
// raw system calls only. A child is needed because a process joins or makes a user namespace
// only while it has one thread.
struct ChildWork {
  uid_t uid;
  gid_t gid;
  int userns;        // in: the pool's (making a namespace); out: made (making the pool's)
  PooledNetns made;  // out
  int error;
  const char* step;
};

[[noreturn]] void child_done(ChildWork* w, const char* failed) {
  if (failed != nullptr) {
    w->error = errno != 0 ? errno : EINVAL;
    w->step = failed;
  }
  ::syscall(SYS_exit, 0);
  __builtin_unreachable();
}

bool write_id_map(const char* path, unsigned id) {
  // "0 <id> 1": our own id is the pool's root, and nothing else is mapped.
  char line[32] = "0 ";
  char digits[12];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + id % 10);
    id /= 10;
  } while (id != 0);
  int at = 2;
  while (n > 0) line[at++] = digits[--n];
  line[at++] = ' ';
  line[at++] = '1';
  line[at] = 0;
  return child::write_whole_file(path, line);
}

int make_pool_user_namespace(void* arg) {
  auto* w = static_cast<ChildWork*>(arg);
  if (::syscall(SYS_unshare, CLONE_NEWUSER) != 0) child_done(w, "unshare (user namespace)");
  if (!write_id_map("/proc/self/uid_map", w->uid)) child_done(w, "write uid_map");
  if (!child::write_whole_file("/proc/self/setgroups", "deny")) child_done(w, "deny setgroups");
  if (!write_id_map("/proc/self/gid_map", w->gid)) child_done(w, "write gid_map");
  w->userns = static_cast<int>(child::sys_open("/proc/self/ns/user", O_RDONLY));
  child_done(w, w->userns < 0 ? "open the user namespace" : nullptr);
}

int make_pooled_netns(void* arg) {
  auto* w = static_cast<ChildWork*>(arg);
  if (::syscall(SYS_setns, w->userns, CLONE_NEWUSER) != 0) {
    child_done(w, "setns (the pool's user namespace)");
  }
  if (::syscall(SYS_unshare, CLONE_NEWNET) != 0) child_done(w, "unshare (network namespace)");
  int err = 0;
  w->made = take_current(err);
  errno = err;
  child_done(w, w->made.fd < 0 ? "set up the network namespace" : nullptr);
}

// Runs `fn` in a child as above; false (errno set) when it could not, or `fn` failed.
bool run_in_child(int (*fn)(void*), ChildWork& w) {
  alignas(16) unsigned char stack[16 * 1024];  // ours is suspended while the child runs
  w.error = 0;
  w.step = nullptr;
  // Our signals blocked: no handler of ours may run on the child (it shares our memory).
  // The raw call, as spawn.cpp does: glibc's wrapper leaves its own signals unblocked.
  unsigned long all = ~0UL, old = 0;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(all));
  const int clone_errno = base::run_in_memory_sharing_child(fn, &w, stack + sizeof stack);
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, sizeof(old));
  if (clone_errno != 0) {
    errno = clone_errno;
    return false;
  }
  errno = w.error;
  return w.error == 0;
}

PooledNetns create_in_user_namespace(int& err) {
  ChildWork w{};
  w.userns = g_userns.load(std::memory_order_acquire);
  if (!run_in_child(make_pooled_netns, w)) {
    err = errno;
    return {};
  }
  return w.made;
}

// The pool's user namespace, made once; false when this process cannot make one.
bool make_user_namespace() {
  ChildWork w{};
  w.uid = ::geteuid();
  w.gid = ::getegid();
  w.userns = -1;
  if (!run_in_child(make_pool_user_namespace, w)) return false;
  g_userns.store(w.userns, std::memory_order_release);
  return true;
}

PooledNetns create() {
  int err = 0;
  PooledNetns ns;
  Maker maker;
  {
    std::lock_guard lock(g_maker_mutex);
    if (g_maker == Maker::undecided) {
      ns = create_on_thread(err);
      if (ns.fd >= 0) {
        g_maker = Maker::thread;
      } else if (err == EPERM && make_user_namespace()) {
        g_maker = Maker::user_namespace;
        ns = create_in_user_namespace(err);
      }
      if (ns.fd >= 0) g_made.fetch_add(1, std::memory_order_relaxed);
      return ns;
    }
    maker = g_maker;
  }
  ns = maker == Maker::thread ? create_on_thread(err) : create_in_user_namespace(err);
  if (ns.fd >= 0) g_made.fetch_add(1, std::memory_order_relaxed);
  return ns;
}

void close_pooled(PooledNetns ns) {
  if (ns.diag >= 0) ::close(ns.diag);
  if (ns.fd >= 0) ::close(ns.fd);
}

std::size_t idle_count() { return g_ready.size() + g_draining.size(); }

// The process whose pool this is (under g_mutex). A child forked by an embedder would hold
// the same idle namespaces as its parent, and both could hand one to a sandbox at once: the
// child forgets them (closes its copies) and makes its own.
pid_t g_pool_pid = 0;

void forget_if_forked() {
  const pid_t now = ::getpid();
  if (g_pool_pid == now) return;
  for (const PooledNetns& ns : g_ready) close_pooled(ns);
  for (const Draining& d : g_draining) close_pooled(d.ns);
  g_ready.clear();
  g_draining.clear();
  g_pool_pid = now;
}

// A returned namespace goes back only once nothing of the last command's remains in it: a
// socket still attached to a file is ours not yet released (the proxy listener: the next
// child's bind of the proxy port would fail) or one a sandbox passed out.
void give_back(PooledNetns ns, pid_t leased_by) {
  if (leased_by != ::getpid()) {  // leased before a fork: the parent's pool has it too
    close_pooled(ns);
    return;
  }
  const NetnsSockets state = sockets_in_use_via(ns.diag);
  if (state == NetnsSockets::unknown) {
    // A namespace that cannot be checked is not reused. Without sock_diag in this kernel none
    // can be: every command gets a fresh one from now on (CLONE_NEWNET). Out of descriptors
    // or memory is this moment's problem only.
    const int err = errno;
    if (err != EMFILE && err != ENFILE && err != ENOMEM && err != ENOBUFS && err != EINTR) {
      g_unavailable.store(true, std::memory_order_relaxed);
    }
    close_pooled(ns);
    return;
  }
  {
    std::lock_guard lock(g_mutex);
    forget_if_forked();
    if (idle_count() < kMaxIdle) {
      if (state == NetnsSockets::none) {
        g_ready.push_back(ns);
      } else {
        g_draining.push_back({ns, clock::now()});
      }
      return;
    }
  }
  close_pooled(ns);
}

// A draining namespace whose sockets are gone, or none; gives up on those past kMaxDrain.
PooledNetns take_drained() {
  std::vector<Draining> batch;
  {
    std::lock_guard lock(g_mutex);
    forget_if_forked();
    const std::size_t n = std::min(kRecheckPerLease, g_draining.size());
    batch.assign(g_draining.begin(), g_draining.begin() + static_cast<std::ptrdiff_t>(n));
    g_draining.erase(g_draining.begin(), g_draining.begin() + static_cast<std::ptrdiff_t>(n));
  }
  PooledNetns found;
  std::vector<Draining> keep;
  for (const Draining& d : batch) {
    const NetnsSockets state = found.fd < 0 ? sockets_in_use_via(d.ns.diag) : NetnsSockets::some;
    if (state == NetnsSockets::none) {
      found = d.ns;
    } else if (state == NetnsSockets::unknown || clock::now() - d.since > kMaxDrain) {
      // Past kMaxDrain its socket outlives any operation of ours: someone else holds it.
      close_pooled(d.ns);
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
    ns_ = other.ns_;
    pid_ = other.pid_;
    other.ns_ = {};
  }
  return *this;
}

int NetnsLease::user_namespace() const noexcept {
  return ns_.fd >= 0 ? g_userns.load(std::memory_order_acquire) : -1;
}

void NetnsLease::return_unused() noexcept {
  if (ns_.fd < 0) return;
  if (pid_ == ::getpid()) {
    std::lock_guard lock(g_mutex);
    forget_if_forked();
    if (idle_count() < kMaxIdle) {
      g_ready.push_back(ns_);
      ns_ = {};
      return;
    }
  }
  close_pooled(ns_);
  ns_ = {};
}

NetnsLease::~NetnsLease() {
  if (ns_.fd < 0) return;
  give_back(ns_, pid_);
  ns_ = {};
}

NetnsLease lease_network_namespace() {
  if (g_unavailable.load(std::memory_order_relaxed)) return NetnsLease();
  {
    std::lock_guard lock(g_mutex);
    forget_if_forked();
    if (!g_ready.empty()) {
      const PooledNetns ns = g_ready.back();
      g_ready.pop_back();
      return NetnsLease(ns);
    }
  }
  if (PooledNetns ns = take_drained(); ns.fd >= 0) return NetnsLease(ns);
  const PooledNetns ns = create();
  if (ns.fd < 0) g_unavailable.store(true, std::memory_order_relaxed);
  return NetnsLease(ns);
}

void stop_pooling_network_namespaces() noexcept {
  g_unavailable.store(true, std::memory_order_relaxed);
}

std::size_t network_namespaces_made() noexcept { return g_made.load(std::memory_order_relaxed); }

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
