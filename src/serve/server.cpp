#include "serve/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <asio/bind_executor.hpp>
#include <asio/ip/address.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <asio/strand.hpp>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

#include "base/unique_fd.hpp"
#include "paddock/errors.hpp"
#include "sandbox/change_set.hpp"
#include "serve/ops_http.hpp"

namespace paddock::serve {
namespace {

[[noreturn]] void os_fail(const std::string& what) {
  throw Error(errc::spawn_failed, what + ": " + std::strerror(errno));
}

}  // namespace

Endpoint parse_endpoint(const std::string& text, const std::string& flag) {
  Endpoint e = client::parse_endpoint(text, flag);
  std::error_code ec;
  if (!e.unix_socket) asio::ip::make_address(e.host, ec);
  if (ec) {
    throw Error(errc::config_invalid,
                flag + " " + text + ": host must be an IP address (" + e.host + ")");
  }
  return e;
}

std::vector<int> systemd_listen_fds() {
  std::vector<int> out;
  const char* pid = std::getenv("LISTEN_PID");
  const char* fds = std::getenv("LISTEN_FDS");
  if (pid == nullptr || fds == nullptr) return out;
  const bool ours = std::strtol(pid, nullptr, 10) == static_cast<long>(::getpid());
  const long n = std::strtol(fds, nullptr, 10);
  ::unsetenv("LISTEN_PID");
  ::unsetenv("LISTEN_FDS");
  ::unsetenv("LISTEN_FDNAMES");
  if (!ours || n <= 0 || n > 64) return out;
  for (int fd = 3; fd < 3 + n; ++fd) {
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    out.push_back(fd);
  }
  return out;
}

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  Impl(asio::any_io_executor ex, Manager& manager, ServeOptions o)
      : executor(ex),
        strand(asio::make_strand(ex)),
        options(std::move(o)),
        shared(std::make_shared<Shared>(manager)),
        drain_timer(strand) {}

  struct Listener {
    std::optional<asio::posix::stream_descriptor> fd;
    bool waiting = false;  // a wait is in flight: its handler closes the descriptor
    int family = AF_UNIX;
    bool needs_token = false;
    std::string unix_path;  // removed at shutdown, if it is still the socket we bound
    dev_t unix_dev = 0;
    ino_t unix_ino = 0;
    std::string endpoint;
  };

  asio::any_io_executor executor;
  asio::strand<asio::any_io_executor> strand;
  ServeOptions options;
  std::shared_ptr<Shared> shared;
  std::vector<std::unique_ptr<Listener>> listeners;
  std::unique_ptr<OpsHttp> http;
  std::atomic<bool> ready{true};
  bool draining = false;  // strand
  bool closing = false;   // strand: the server goes; every listener closes
  asio::steady_timer drain_timer;
  std::function<void()> drained;
  std::chrono::steady_clock::time_point drain_deadline;
  bool connections_closed = false;
  std::mutex paths_mutex;  // unlink_paths runs on the strand (drain) and in ~Server

  void add_unix(const Endpoint& e) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (fd.get() < 0) os_fail("socket");
    struct stat st;
    if (::lstat(e.path.c_str(), &st) == 0) {
      // A stale socket of an earlier run of ours may go; anything else at the path stays: a
      // file, another user's socket, or one a live daemon still listens on.
      if (!S_ISSOCK(st.st_mode)) {
        throw Error(errc::config_invalid,
                    "--listen unix:" + e.path + ": exists and is not a socket; not replacing it");
      }
      if (st.st_uid != ::geteuid()) {
        throw Error(
            errc::config_invalid,
            "--listen unix:" + e.path + ": a socket of another user is there; not replacing it");
      }
      UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_un there{};
      there.sun_family = AF_UNIX;
      std::memcpy(there.sun_path, e.path.c_str(), e.path.size());
      if (::connect(probe.get(), reinterpret_cast<sockaddr*>(&there), sizeof there) == 0) {
        throw Error(errc::config_invalid,
                    "--listen unix:" + e.path + ": another daemon is listening there");
      }
      ::unlink(e.path.c_str());
    }
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, e.path.c_str(), e.path.size());
    // Created 0600 from the start (no window with the umask's mode), then set as asked.
    const mode_t old = ::umask(0177);
    const int rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::umask(old);
    if (rc != 0) os_fail("bind unix:" + e.path);
    if (options.socket_group &&
        ::chown(e.path.c_str(), static_cast<uid_t>(-1), *options.socket_group) != 0) {
      os_fail("chown unix:" + e.path);
    }
    if (::chmod(e.path.c_str(), options.socket_mode) != 0) os_fail("chmod unix:" + e.path);
    struct stat bound;
    if (::lstat(e.path.c_str(), &bound) != 0) os_fail("stat unix:" + e.path);
    // Who wrote each segment (Connection::receive_more): the accepted sockets inherit it, and a
    // segment sent before the accept carries it too.
    const int one = 1;
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_PASSCRED, &one, sizeof one) != 0) {
      os_fail("SO_PASSCRED unix:" + e.path);
    }
    if (::listen(fd.get(), 1024) != 0) os_fail("listen unix:" + e.path);
    auto l = std::make_unique<Listener>();
    l->family = AF_UNIX;
    l->unix_path = e.path;
    l->unix_dev = bound.st_dev;
    l->unix_ino = bound.st_ino;
    l->endpoint = "unix:" + e.path;
    l->fd.emplace(executor, fd.release());
    listeners.push_back(std::move(l));
  }

  void add_tcp(const Endpoint& e) {
    const auto address = asio::ip::make_address(e.host);
    if (!options.token) {
      throw Error(errc::config_invalid,
                  "--listen tcp:" + e.host + ":" + std::to_string(e.port) +
                      ": a TCP listener needs a token (--token-file FILE or "
                      "PADDOCK_SERVE_TOKEN): anyone who reaches the port could run commands");
    }
    if (!address.is_loopback() && !options.allow_remote) {
      throw Error(errc::config_invalid,
                  "--listen tcp:" + e.host + ":" + std::to_string(e.port) +
                      ": not a loopback address; add --allow-remote to serve beyond this host "
                      "(with the token, over a network you trust: the protocol is not encrypted)");
    }
    const int family = address.is_v4() ? AF_INET : AF_INET6;
    UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (fd.get() < 0) os_fail("socket");
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_storage ss{};
    socklen_t len;
    if (family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(&ss);
      in->sin_family = AF_INET;
      in->sin_port = htons(e.port);
      const auto bytes = address.to_v4().to_bytes();
      std::memcpy(&in->sin_addr, bytes.data(), 4);
      len = sizeof(sockaddr_in);
    } else {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(e.port);
      const auto bytes = address.to_v6().to_bytes();
      std::memcpy(&in6->sin6_addr, bytes.data(), 16);
      len = sizeof(sockaddr_in6);
    }
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) {
      os_fail("bind tcp:" + e.host + ":" + std::to_string(e.port));
    }
    if (::listen(fd.get(), 1024) != 0) os_fail("listen");
    socklen_t got = sizeof ss;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &got);
    const unsigned short port =
        ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    auto l = std::make_unique<Listener>();
    l->family = family;
    l->needs_token = true;
    l->endpoint =
        "tcp:" + (family == AF_INET6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(port);
    l->fd.emplace(executor, fd.release());
    listeners.push_back(std::move(l));
  }

  void add_activated(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) os_fail("getsockname");
    auto l = std::make_unique<Listener>();
    l->family = ss.ss_family;
    l->needs_token = ss.ss_family != AF_UNIX;
    if (l->needs_token && !options.token) {
      throw Error(errc::config_invalid,
                  "systemd passed a TCP socket: it needs a token (--token-file FILE)");
    }
    if (l->needs_token && !options.allow_remote) {
      const bool loopback =
          ss.ss_family == AF_INET
              ? (ntohl(reinterpret_cast<sockaddr_in*>(&ss)->sin_addr.s_addr) >> 24) == 127
              : IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr);
      if (!loopback) {
        throw Error(errc::config_invalid,
                    "systemd passed a TCP socket beyond loopback: add --allow-remote");
      }
    }
    const int one = 1;
    if (ss.ss_family == AF_UNIX &&
        ::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) != 0) {
      os_fail("SO_PASSCRED on a socket systemd passed");
    }
    l->endpoint = ss.ss_family == AF_UNIX ? "unix:(systemd)" : "tcp:(systemd)";
    l->fd.emplace(executor, fd);
    listeners.push_back(std::move(l));
  }

  // Unix peers: their uid must be allowed (the daemon's own and root by default).
  bool peer_allowed(int fd, std::string& who, uid_t& uid, pid_t& pid) const {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
    who = "uid " + std::to_string(cred.uid) + " pid " + std::to_string(cred.pid);
    uid = cred.uid;
    pid = cred.pid;
    const auto& uids = options.allowed_uids;
    const auto& gids = options.allowed_gids;
    for (const auto& ns : options.peer_namespaces) {
      struct stat theirs, ours;
      const std::string link = "/proc/" + std::to_string(cred.pid) + "/ns/" + ns;
      if (::stat(link.c_str(), &theirs) != 0 ||
          ::stat(("/proc/self/ns/" + ns).c_str(), &ours) != 0 || theirs.st_dev != ours.st_dev ||
          theirs.st_ino != ours.st_ino) {
        who += " (another " + ns + " namespace than this daemon's)";
        return false;
      }
    }
    if (uids.empty() && gids.empty()) return cred.uid == ::geteuid() || cred.uid == 0;
    if (std::find(uids.begin(), uids.end(), cred.uid) != uids.end()) return true;
    if (gids.empty()) return false;
    std::vector<gid_t> groups(64);
    socklen_t glen = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &glen) != 0) glen = 0;
    groups.resize(glen / sizeof(gid_t));
    groups.push_back(cred.gid);
    return std::any_of(groups.begin(), groups.end(), [&](gid_t g) {
      return std::find(gids.begin(), gids.end(), g) != gids.end();
    });
  }

  void accept_next(Listener* l) {
    if (!l->fd) return;
    if (closing || (draining && l->family == AF_UNIX)) return close_listener(l);
    l->waiting = true;
    l->fd->async_wait(
        asio::posix::stream_descriptor::wait_read,
        asio::bind_executor(strand, [self = shared_from_this(), l](std::error_code ec) {
          l->waiting = false;
          if (ec || self->closing || self->accept_ready(l)) {  // draining: accepted, refused
            return self->accept_next(l);
          }
          // Out of descriptors: try again in a moment (and say so once).
          if (self->shared->log) {
            self->shared->log("warn", {{"event", "accept"}, {"reason", "out of file descriptors"}});
          }
          auto timer = std::make_shared<asio::steady_timer>(self->strand);
          timer->expires_after(std::chrono::milliseconds(100));
          timer->async_wait([self, l, timer](std::error_code) { self->accept_next(l); });
        }));
  }

  // Never under a wait in flight (proxy/README.md: a closed descriptor's state must not be
  // freed while io_uring still holds an operation on it).
  void close_listener(Listener* l) {
    if (!l->fd || l->waiting) return;
    std::error_code ignored;
    l->fd->close(ignored);
    l->fd.reset();
  }

  // The socket files go at once (the descriptors when no wait is in flight on them): a new
  // daemon may bind the same path right after, and its file must not be removed by us.
  void unlink_paths() {
    std::lock_guard lock(paths_mutex);
    for (auto& l : listeners) {
      struct stat st;
      if (!l->unix_path.empty() && ::lstat(l->unix_path.c_str(), &st) == 0 &&
          st.st_dev == l->unix_dev && st.st_ino == l->unix_ino) {
        ::unlink(l->unix_path.c_str());
      }
      l->unix_path.clear();
    }
  }

  // Room for one more connection from `peer` that has yet to authenticate: past the per-peer
  // bound that peer's oldest waiting one goes; past the total, the oldest waiting one of the
  // peer holding the most. A flood cannot lock out a client that authenticates in time.
  bool make_room_before_authentication(const std::string& peer) {
    const auto& limits = shared->limits;
    std::string victim_peer;
    // Connections looked at hold a reference: released only after the lock, since a last
    // reference going runs ~Connection, which takes the same lock.
    std::vector<std::shared_ptr<Connection>> seen;
    std::shared_ptr<Connection> oldest;
    {
      std::lock_guard lock(shared->mutex);
      const auto& by_peer = shared->unauthenticated_by_peer;
      const auto mine = by_peer.find(peer);
      if (mine != by_peer.end() && mine->second >= limits.max_unauthenticated_per_peer) {
        victim_peer = peer;
      } else if (shared->unauthenticated.load() >= limits.max_unauthenticated) {
        std::size_t most = 0;
        for (const auto& [p, n] : by_peer) {
          if (n > most) {
            most = n;
            victim_peer = p;
          }
        }
      }
      if (victim_peer.empty()) return true;
      for (const auto& w : shared->connections) {
        auto c = w.lock();
        if (!c) continue;
        seen.push_back(c);
        // One victim per newcomer, the oldest not yet picked: a burst cannot pick the same
        // one again, and one already picked is not a slot freed.
        if (c->peer() != victim_peer || c->authenticated() || c->evicting()) continue;
        if (!oldest || c->opened() < oldest->opened()) oldest = c;
      }
      if (oldest && !oldest->mark_evicted()) oldest.reset();
      // Past twice the bound (closes not yet run), refuse outright.
      if (shared->unauthenticated.load() >= 2 * limits.max_unauthenticated) oldest.reset();
    }
    if (!oldest) return false;
    oldest->evict_unauthenticated("evicted before authenticating: too many waiting from " +
                                  victim_peer);
    return true;
  }

  // False when out of descriptors (EMFILE/ENFILE): the caller waits a little before the next
  // accept instead of spinning on a listener that stays readable.
  bool accept_ready(Listener* l) {
    for (int i = 0; i < 64; ++i) {
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      const int fd = ::accept4(l->fd->native_handle(), reinterpret_cast<sockaddr*>(&peer), &len,
                               SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return errno != EMFILE && errno != ENFILE;  // EAGAIN, or a client gone
      UniqueFd owned(fd);
      std::string who;
      std::optional<uid_t> peer_uid;
      std::optional<ExecOptions::ProcessRef> peer_process;
      const auto& limits = shared->limits;
      if (static_cast<std::size_t>(shared->metrics.connections.load()) >= limits.max_connections ||
          draining) {
        shared->metrics.connections_refused.fetch_add(1);
        continue;  // closed: past the connection limits, or draining (the port stays ours)
      }
      if (l->family == AF_UNIX) {
        uid_t uid = 0;
        pid_t pid = 0;
        if (!peer_allowed(fd, who, uid, pid)) {
          shared->metrics.connections_refused.fetch_add(1);
          if (shared->log) {
            shared->log("warn",
                        {{"event", "refused"}, {"peer", who}, {"reason", "uid not allowed"}});
          }
          continue;  // closed: nothing is said to a peer we do not know
        }
        peer_uid = uid;
        // Who writes each segment (Connection::receive_more). The listener's flag reaches a
        // socket accepted from it only for connections made after it was set: one queued
        // before (systemd socket activation) gets it here, and its queued bytes carry it.
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
        // Its start time now, while it is connected: a pid alone names another process once
        // the client is gone and the pid reused (hostile review: a client that handed its
        // socket on and exited had its set owned by whatever got its pid next).
        if (pid > 0) peer_process = ExecOptions::ProcessRef{pid, sandbox::process_start_time(pid)};
      } else {
        char text[INET6_ADDRSTRLEN] = "?";
        if (peer.ss_family == AF_INET) {
          ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
        } else {
          ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr, text,
                      sizeof text);
        }
        who = text;
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof one);
      }
      if (l->needs_token && !make_room_before_authentication(who)) {
        shared->metrics.connections_refused.fetch_add(1);
        continue;
      }
      asio::generic::stream_protocol protocol(l->family, l->family == AF_UNIX ? 0 : IPPROTO_TCP);
      asio::generic::stream_protocol::socket socket(executor, protocol, owned.release());
      auto c = std::make_shared<Connection>(shared, std::move(socket), !l->needs_token, who,
                                            peer_uid, peer_process);
      {
        std::lock_guard lock(shared->mutex);
        auto& all = shared->connections;
        std::erase_if(all, [](const std::weak_ptr<Connection>& w) { return w.expired(); });
        all.push_back(c);
      }
      c->start();
    }
    return true;
  }

  // `keep_tcp` (a drain): TCP listeners stay bound and refuse what they accept until the
  // server goes, so no one else can take the port meanwhile and collect what clients send.
  void stop_listening(bool keep_tcp = false) {
    unlink_paths();
    for (auto& l : listeners) {
      if (!l->fd) continue;
      if (keep_tcp && l->family != AF_UNIX) continue;
      std::error_code ignored;
      if (l->waiting) {
        l->fd->cancel(ignored);  // its handler closes it
      } else {
        close_listener(l.get());
      }
    }
  }

  void close_connections(const std::string& why) {
    std::vector<std::shared_ptr<Connection>> all;
    {
      std::lock_guard lock(shared->mutex);
      for (auto& w : shared->connections) {
        if (auto c = w.lock()) all.push_back(std::move(c));
      }
    }
    for (auto& c : all) c->close(why);
  }

  void check_drained() {
    if (shared->commands.load() == 0 || connections_closed) {
      if (shared->commands.load() == 0) {
        close_connections("the daemon stopped");
        if (drained) std::exchange(drained, nullptr)();
        return;
      }
    }
    if (!connections_closed && std::chrono::steady_clock::now() >= drain_deadline) {
      connections_closed = true;
      if (shared->log) {
        shared->log("warn", {{"event", "drain"},
                             {"reason", "grace period over: killing what still runs"},
                             {"commands", shared->commands.load()}});
      }
      close_connections("the daemon is shutting down: its grace period is over");
    }
    drain_timer.expires_after(std::chrono::milliseconds(50));
    drain_timer.async_wait(
        asio::bind_executor(strand, [self = shared_from_this()](std::error_code ec) {
          if (!ec) self->check_drained();
        }));
  }
};

Server::Server(asio::any_io_executor executor, Manager& manager, ServeOptions options)
    : impl_(std::make_shared<Impl>(executor, manager, std::move(options))) {
  Impl& m = *impl_;
  m.shared->limits = m.options.limits;
  m.shared->rules = m.options.rules;
  m.shared->token = m.options.token;
  m.shared->clients_own_changes = m.options.clients_own_changes;
  for (const auto& root : m.options.roots) {
    char resolved[PATH_MAX];
    struct stat st;
    if (root.empty() || root.front() != '/' || ::realpath(root.c_str(), resolved) == nullptr ||
        ::stat(resolved, &st) != 0 || !S_ISDIR(st.st_mode)) {
      throw Error(errc::config_invalid,
                  "--root " + root + ": expected an absolute path to an existing directory");
    }
    m.shared->roots.emplace_back(resolved);
  }
  m.shared->log = m.options.log;
  try {
    if (m.options.socket_activation) {
      for (int fd : systemd_listen_fds()) m.add_activated(fd);
    }
    for (const auto& text : m.options.listen) {
      const Endpoint e = parse_endpoint(text);
      if (e.unix_socket) {
        m.add_unix(e);
      } else {
        m.add_tcp(e);
      }
    }
  } catch (...) {
    m.unlink_paths();  // a failed start leaves no socket file behind
    throw;
  }
  if (m.listeners.empty()) {
    throw Error(errc::config_invalid,
                "nothing to listen on: give --listen unix:PATH or tcp:HOST:PORT (or start "
                "under systemd socket activation)");
  }
  // Where our unix listeners are bound: a connection to one is never a command's stream
  // (Connection::exec).
  for (auto& l : m.listeners) {
    sockaddr_un bound{};
    socklen_t len = sizeof bound;
    if (l->family == AF_UNIX && l->fd &&
        ::getsockname(l->fd->native_handle(), reinterpret_cast<sockaddr*>(&bound), &len) == 0 &&
        len > offsetof(sockaddr_un, sun_path)) {
      m.shared->listen_addresses.emplace_back(bound.sun_path,
                                              len - offsetof(sockaddr_un, sun_path));
    }
  }
  const Config cfg = manager.config();
  m.shared->capabilities = {
      {"server", "paddock"},
      {"messages",
       {"exec", "write", "close_stdin", "close_output", "signal", "cancel", "approve",
        "approve_session", "deny", "ping", "session_open", "session_close"}},
      {"stdin_stream", true},
      {"policy",
       {"deny_read", "deny_write", "network", "allowed_domains", "denied_domains", "shell"}},
      {"writable_roots", m.options.rules.allow_writable_roots},
      {"tty", false},
      {"sandboxed", cfg.sandbox.enabled},
      {"network", to_string(cfg.sandbox.network.mode)},
      {"limits",
       {{"max_commands", m.options.limits.max_commands},
        {"max_per_connection", m.options.limits.max_per_connection},
        {"max_line_bytes", m.options.limits.max_line_bytes},
        {"exec_per_second", m.options.limits.exec_per_second},
        {"max_timeout_ms", cfg.max_timeout.count()},
        {"default_max_output_bytes", nullptr}}}};
  if (!m.options.http.empty()) {
    struct Unlink {  // a failed start leaves no socket file behind
      Impl& m;
      bool armed = true;
      ~Unlink() {
        if (armed) m.unlink_paths();
      }
    } unlink_on_failure{m};
    const Endpoint http = parse_endpoint("tcp:" + m.options.http, "--http");
    if (!asio::ip::make_address(http.host).is_loopback() && !m.options.allow_remote) {
      throw Error(errc::config_invalid, "--http " + m.options.http +
                                            ": not a loopback address; add --allow-remote to "
                                            "serve /metrics beyond this host");
    }
    m.http = std::make_unique<OpsHttp>(
        executor, m.options.http,
        [weak = std::weak_ptr<Impl>(impl_)](const std::string& path, int& status) {
          auto self = weak.lock();
          if (!self) {
            status = 503;
            return std::string("stopping\n");
          }
          if (path == "/healthz") {
            status = 200;
            return std::string("ok\n");
          }
          if (path == "/readyz") {
            status = self->ready ? 200 : 503;
            return std::string(self->ready ? "ready\n" : "draining\n");
          }
          if (path == "/metrics") {
            status = 200;
            return self->shared->metrics.prometheus(self->ready,
                                                    self->shared->manager.warm_sandbox_counts());
          }
          status = 404;
          return std::string("not found: /healthz, /readyz, /metrics\n");
        });
    unlink_on_failure.armed = false;
  }
  for (auto& l : m.listeners) {
    asio::post(m.strand, [impl = impl_, l = l.get()] { impl->accept_next(l); });
  }
}

Server::~Server() {
  auto impl = impl_;
  // Here, not later on the strand: whoever binds the path next must keep their file.
  impl->unlink_paths();
  asio::post(impl->strand, [impl] {
    impl->draining = true;
    impl->closing = true;
    impl->stop_listening();
  });
}

std::vector<std::string> Server::endpoints() const {
  std::vector<std::string> out;
  for (const auto& l : impl_->listeners) out.push_back(l->endpoint);
  return out;
}

std::string Server::http_endpoint() const { return impl_->http ? impl_->http->endpoint() : ""; }

void Server::drain(std::function<void()> done) {
  auto impl = impl_;
  impl->ready = false;
  impl->shared->draining = true;
  asio::post(impl->strand, [impl, done = std::move(done)]() mutable {
    if (impl->draining) return;
    impl->draining = true;
    impl->drained = std::move(done);
    impl->drain_deadline = std::chrono::steady_clock::now() + impl->options.drain_grace;
    impl->stop_listening(/*keep_tcp=*/true);
    std::vector<std::shared_ptr<Connection>> all;  // released after the lock (~Connection)
    {
      std::lock_guard lock(impl->shared->mutex);
      for (auto& w : impl->shared->connections) {
        if (auto c = w.lock()) all.push_back(std::move(c));
      }
    }
    for (auto& c : all) c->deny_pending_approvals();
    if (impl->shared->log) {
      impl->shared->log("info", {{"event", "drain"},
                                 {"commands", impl->shared->commands.load()},
                                 {"grace_ms", impl->options.drain_grace.count()}});
    }
    impl->check_drained();
  });
}

void Server::close_all(const std::string& why) { impl_->close_connections(why); }

std::size_t Server::connection_count() const {
  std::lock_guard lock(impl_->shared->mutex);
  std::size_t n = 0;
  for (const auto& c : impl_->shared->connections) n += c.expired() ? 0 : 1;
  return n;
}

bool Server::ready() const noexcept { return impl_->ready; }
Metrics& Server::metrics() noexcept { return impl_->shared->metrics; }
const std::shared_ptr<Shared>& Server::shared() const noexcept { return impl_->shared; }

}  // namespace paddock::serve
