// The pool of network namespaces a root supervisor reuses: a namespace goes to the next
// command only once no socket of the last one is in use in it, whoever holds it (a
// descriptor, an io_uring request of ours). Connections left in TIME_WAIT do not hold it back:
// the child's listener binds over them with SO_REUSEADDR.
#include <fcntl.h>
#include <liburing.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "paddock/sandbox_policy.hpp"
#include "sandbox/linux/netns_pool.hpp"
#include "sandbox/linux/netns_sockets.hpp"
#include "support/harness.hpp"

using namespace std::chrono_literals;
using paddock::sandbox::NetnsLease;

namespace {

ino_t namespace_id(int fd) {
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  return st.st_ino;
}

std::string thread_namespace() {
  char link[64] = {};
  REQUIRE(::readlink("/proc/thread-self/ns/net", link, sizeof(link) - 1) > 0);
  return link;
}

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// The pool's user namespace, when it is not ours (an unprivileged pool; -1: root's).
int pool_userns() { return paddock::sandbox::lease_network_namespace().user_namespace(); }

// A socket made inside the namespace `ns`, as a command's would be.
int socket_in(int ns, int type) {
  const int s = test::socket_in_netns(ns, pool_userns(), AF_INET, type);
  REQUIRE(s >= 0);
  return s;
}

// What the pool asks before it hands `ns` out again, asked as it does: over a sock_diag socket
// made inside.
paddock::sandbox::NetnsSockets sockets_in_use(int ns) {
  const int diag =
      test::socket_in_netns(ns, pool_userns(), AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG);
  REQUIRE(diag >= 0);
  const auto state = paddock::sandbox::sockets_in_use_via(diag);
  ::close(diag);
  return state;
}

// A listener on 127.0.0.1:`port` in `ns`, as the sandbox's child makes the proxy's.
int listener_in(int ns, std::uint16_t port) {
  int s = socket_in(ns, SOCK_STREAM);
  int one = 1;
  REQUIRE(::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0);
  auto a = loopback(port);
  REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  REQUIRE(::listen(s, 16) == 0);
  return s;
}

// Leases `count` namespaces at once (more than the pool keeps idle, so it must hand out every
// one it is willing to) and says whether `wanted` was among them; all go back at the end.
bool handed_out(ino_t wanted, int count = 80) {
  std::vector<NetnsLease> held;
  bool seen = false;
  for (int i = 0; i < count; ++i) {
    held.push_back(paddock::sandbox::lease_network_namespace());
    REQUIRE(held.back().fd() >= 0);
    if (namespace_id(held.back().fd()) == wanted) seen = true;
  }
  return seen;
}

// Polls (with a deadline) until the pool hands `wanted` out again.
bool comes_back(ino_t wanted) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (handed_out(wanted)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// Leases one namespace and returns its id with `fd` a second handle on it (the test's own, to
// put a socket in after the pool has it back); 0 when nothing is pooled here.
ino_t lease_and_keep_handle(int& fd) {
  NetnsLease lease = paddock::sandbox::lease_network_namespace();
  if (lease.fd() < 0) return 0;
  fd = ::fcntl(lease.fd(), F_DUPFD_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  return namespace_id(fd);
}

}  // namespace

TEST_CASE("netns pool: a namespace with a socket still in use is not handed out again",
          "[netns][netns-pool]") {
  const std::string home = thread_namespace();
  int ns = -1;
  const ino_t id = lease_and_keep_handle(ns);
  if (id == 0) {
    SUCCEED("no namespace is pooled here");
    return;
  }
  struct Spelling {
    const char* what;
    int (*make)(int ns);
  };
  const Spelling spellings[] = {
      {"the proxy's listener", [](int n) { return listener_in(n, paddock::kSandboxProxyPort); }},
      {"a listener on another port", [](int n) { return listener_in(n, 8080); }},
      {"a bound UDP socket",
       [](int n) {
         int s = socket_in(n, SOCK_DGRAM);
         auto a = loopback(5353);
         REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
         return s;
       }},
  };
  for (const auto& spelling : spellings) {
    INFO(spelling.what);
    // The namespace is idle in the pool; a socket is made in it behind the pool's back, then
    // it is leased and returned once more, as a command's would be: from then on the pool knows.
    int s = spelling.make(ns);
    {
      std::vector<NetnsLease> all;
      bool found = false;
      for (int i = 0; i < 80 && !found; ++i) {
        all.push_back(paddock::sandbox::lease_network_namespace());
        found = namespace_id(all.back().fd()) == id;
      }
      REQUIRE(found);
    }  // returned here with the socket open
    CHECK(sockets_in_use(ns) == paddock::sandbox::NetnsSockets::some);
    CHECK_FALSE(handed_out(id));
    CHECK_FALSE(handed_out(id));
    ::close(s);
    CHECK(sockets_in_use(ns) == paddock::sandbox::NetnsSockets::none);
    CHECK(comes_back(id));
  }
  ::close(ns);
  CHECK(thread_namespace() == home);
}

TEST_CASE("netns pool: a listener held by an io_uring request keeps its namespace out",
          "[netns][netns-pool]") {
  int ns = -1;
  const ino_t id = lease_and_keep_handle(ns);
  if (id == 0) {
    SUCCEED("no namespace is pooled here");
    return;
  }
  io_uring ring{};
  REQUIRE(::io_uring_queue_init(8, &ring, 0) == 0);
  // What Asio does with the proxy's listener: a poll request on it, then close() once the
  // caller is done. The request still holds the socket, bound and listening.
  int s = listener_in(ns, paddock::kSandboxProxyPort);
  io_uring_sqe* sqe = ::io_uring_get_sqe(&ring);
  ::io_uring_prep_poll_add(sqe, s, POLLIN);
  ::io_uring_sqe_set_data64(sqe, 1);
  REQUIRE(::io_uring_submit(&ring) == 1);
  ::close(s);
  {
    std::vector<NetnsLease> all;
    bool found = false;
    for (int i = 0; i < 80 && !found; ++i) {
      all.push_back(paddock::sandbox::lease_network_namespace());
      found = namespace_id(all.back().fd()) == id;
    }
    REQUIRE(found);
  }
  CHECK(sockets_in_use(ns) == paddock::sandbox::NetnsSockets::some);
  CHECK_FALSE(handed_out(id));
  // A child's bind would fail right now: this is what the pool protects the next command from.
  int probe = socket_in(ns, SOCK_STREAM);
  int one = 1;
  ::setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  auto a = loopback(paddock::kSandboxProxyPort);
  CHECK(::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == -1);
  CHECK(errno == EADDRINUSE);
  ::close(probe);
  // The request ends (cancelled, its completion reaped): the socket goes, the namespace returns.
  sqe = ::io_uring_get_sqe(&ring);
  ::io_uring_prep_cancel64(sqe, 1, 0);
  REQUIRE(::io_uring_submit(&ring) == 1);
  for (int seen = 0; seen < 2; ++seen) {
    io_uring_cqe* cqe = nullptr;
    REQUIRE(::io_uring_wait_cqe(&ring, &cqe) == 0);
    ::io_uring_cqe_seen(&ring, cqe);
  }
  ::io_uring_queue_exit(&ring);
  CHECK(comes_back(id));
  ::close(ns);
}

TEST_CASE("netns pool: connections left in TIME_WAIT do not hold the proxy port",
          "[netns][netns-pool]") {
  int ns = -1;
  const ino_t id = lease_and_keep_handle(ns);
  if (id == 0) {
    SUCCEED("no namespace is pooled here");
    return;
  }
  // One proxied connection, closed by the proxy's side first: that side (port 3128) waits in
  // TIME_WAIT for a minute.
  int l = listener_in(ns, paddock::kSandboxProxyPort);
  int c = socket_in(ns, SOCK_STREAM);
  auto a = loopback(paddock::kSandboxProxyPort);
  REQUIRE(::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  int accepted = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
  REQUIRE(accepted >= 0);
  ::close(accepted);
  char byte;
  CHECK(::read(c, &byte, 1) == 0);  // the FIN arrived: the proxy's side is in FIN_WAIT2
  ::close(c);
  ::close(l);
  CHECK(sockets_in_use(ns) == paddock::sandbox::NetnsSockets::none);
  CHECK(comes_back(id));
  // The next command's listener binds over it.
  ::close(listener_in(ns, paddock::kSandboxProxyPort));
  ::close(ns);
}

TEST_CASE("netns pool: a thread whose first use is entering a pooled namespace comes back home",
          "[netns][netns-pool]") {
  NetnsLease lease = paddock::sandbox::lease_network_namespace();
  if (lease.fd() < 0 || lease.user_namespace() >= 0) {
    SUCCEED("not root: no thread of ours enters the pool's namespaces");
    return;
  }
  const std::string home = thread_namespace();
  std::string after;
  bool entered = false;
  // A fresh thread, as a spawn from an embedder's (or the runtime's second) thread: the way
  // back must be its own namespace, not the one it just entered.
  std::thread([&] {
    entered = paddock::sandbox::enter_network_namespace(lease.fd());
    if (entered) paddock::sandbox::leave_network_namespace();
    char link[64] = {};
    if (::readlink("/proc/thread-self/ns/net", link, sizeof(link) - 1) > 0) after = link;
  }).join();
  REQUIRE(entered);
  CHECK(after == home);
}

TEST_CASE("netns pool: commands share pooled namespaces as root and unprivileged",
          "[netns][netns-pool]") {
  // An unprivileged supervisor used to make a namespace per command (CLONE_NEWNET); its pool
  // now lives in a user namespace of its own, which each sandbox's is a child of. Each command
  // sees its own ids, mapped through it to ours, and no command makes a namespace.
  paddock::Config config = test::unclassified();
  config.sandbox.network.mode = paddock::NetworkMode::blocked;
  config.sandbox.fallback = paddock::FallbackMode::strict;
  test::Harness h(config);
  // The pool grows to what is leased at once: the command's, the one a sandbox made ahead
  // holds, the next one being made. From then on it stays that size.
  for (int i = 0; i < 8; ++i) h.exec(test::argv({"/bin/true"}));
  const std::size_t made_before = paddock::sandbox::network_namespaces_made();
  std::set<std::string> namespaces;
  constexpr int kCommands = 16;
  for (int i = 0; i < kCommands; ++i) {
    const auto r =
        h.exec(test::sh("readlink /proc/self/ns/net; id -u; id -g; awk 'NR > 1 { print $3 }' "
                        "/proc/net/netlink | tr '\\n' ' '; echo"));
    REQUIRE(r.result.exit_code == 0);
    REQUIRE(r.result.sandboxed);
    std::istringstream lines(r.result.stdout_data);
    std::string ns, uid, gid;
    std::getline(lines, ns);
    std::getline(lines, uid);
    std::getline(lines, gid);
    // The pool's sock_diag socket lives in the namespace: its port id is random, never our
    // pid (which the kernel would give it, and /proc/net/netlink shows inside).
    std::string port_ids;
    std::getline(lines, port_ids);
    CHECK_FALSE((" " + port_ids).find(" " + std::to_string(::getpid()) + " ") != std::string::npos);
    CHECK(ns.starts_with("net:["));
    CHECK(uid == std::to_string(::geteuid()));
    CHECK(gid == std::to_string(::getegid()));
    namespaces.insert(ns);
  }
  const std::size_t made = paddock::sandbox::network_namespaces_made() - made_before;
  INFO("namespaces seen: " << namespaces.size() << ", made meanwhile: " << made);
  // A few in turn (more while the machine is loaded and leases come back late), never one
  // per command, which made kCommands before.
  CHECK(made <= 4);
  CHECK(namespaces.size() <= 8);
}
